//! Identifiers: session ids in the Python Hermes shape `YYYYMMDD_HHMMSS_xxxxxx`.

/// A new session id: UTC date and time plus six random hex digits.
pub fn session_id() -> String {
    let mut random = [0u8; 3];
    // getrandom only fails when the OS has no entropy source; the time part still differs per second
    // and the insert retries on a collision.
    let _ = getrandom::fill(&mut random);
    format!(
        "{}_{:02x}{:02x}{:02x}",
        chrono::Utc::now().format("%Y%m%d_%H%M%S"),
        random[0],
        random[1],
        random[2]
    )
}
