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

/// A short random id with a prefix, e.g. `turn_3f9a1c2b` or `appr_…`.
pub fn short_id(prefix: &str) -> String {
    let mut random = [0u8; 4];
    let _ = getrandom::fill(&mut random);
    format!(
        "{prefix}_{:02x}{:02x}{:02x}{:02x}",
        random[0], random[1], random[2], random[3]
    )
}

/// A random id of 12 hex digits, as Python Hermes gives cron jobs (`uuid4().hex[:12]`).
pub fn hex12() -> String {
    let mut random = [0u8; 6];
    let _ = getrandom::fill(&mut random);
    random.iter().map(|b| format!("{b:02x}")).collect()
}

/// `bytes` random bytes as lowercase hex (the API server's `chatcmpl-…` and `run_…` ids).
pub fn random_hex(bytes: usize) -> String {
    let mut random = vec![0u8; bytes];
    let _ = getrandom::fill(&mut random);
    random.iter().map(|b| format!("{b:02x}")).collect()
}
