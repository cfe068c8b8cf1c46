//! Comparing what a caller presents with a secret: keys and tokens in constant time, and
//! HMAC-SHA256 signatures (GitHub's and the generic webhook's), with ring's primitives.

use ring::hmac;

/// Whether `given` equals `wanted`, in time that depends on neither's content. Both are
/// hashed first, so the time does not depend on how long the secret is either.
pub fn same(given: &[u8], wanted: &[u8]) -> bool {
    let key = hmac::Key::new(hmac::HMAC_SHA256, b"hermesd: compare");
    let wanted = hmac::sign(&key, wanted);
    hmac::verify(&key, given, wanted.as_ref()).is_ok()
}

/// The HMAC-SHA256 of `message` under `secret`, as lowercase hex.
pub fn hmac_hex(secret: &[u8], message: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let tag = hmac::sign(&key, message);
    let mut out = String::with_capacity(64);
    for byte in tag.as_ref() {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Whether `signature_hex` (any case) is the HMAC-SHA256 of `message` under `secret`, compared
/// in constant time.
pub fn hmac_matches(secret: &[u8], message: &[u8], signature_hex: &str) -> bool {
    let Some(tag) = unhex(signature_hex.trim()) else {
        return false;
    };
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    hmac::verify(&key, message, &tag).is_ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_secrets_match_and_others_do_not() {
        assert!(same(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!same(b"0123456789abcdeF", b"0123456789abcdef"));
        assert!(!same(b"0123456789abcde", b"0123456789abcdef"));
        assert!(!same(b"", b"x"));
    }

    #[test]
    fn hmac_is_rfc_4231_and_verifies_either_case() {
        // RFC 4231, test case 2.
        let tag = hmac_hex(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            tag,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(hmac_matches(
            b"Jefe",
            b"what do ya want for nothing?",
            &tag.to_uppercase()
        ));
        assert!(!hmac_matches(
            b"Jefe",
            b"what do ya want for something?",
            &tag
        ));
        assert!(!hmac_matches(b"Jefe", b"x", "zz"));
        assert!(!hmac_matches(b"Jefe", b"x", "abc"));
    }
}
