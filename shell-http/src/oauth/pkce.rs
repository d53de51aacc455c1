//! PKCE (RFC 7636, S256 only) and the unguessable values bb hands out: codes, tokens, states, ids.
//! A secret bb hands out is never a key in the store: the store keys it by its SHA-256 ([`key_of`]).

/// The shortest and longest code verifier RFC 7636 §4.1 allows.
const VERIFIER_CHARS: std::ops::RangeInclusive<usize> = 43..=128;

/// BASE64URL(SHA-256(`verifier`)) without padding: the S256 challenge of a verifier (RFC 7636 §4.2).
pub(crate) fn challenge_of(verifier: &str) -> String {
    base64url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref())
}

/// Whether `verifier` is a well-formed verifier whose S256 challenge is `challenge`; compared in
/// time that does not depend on where they differ.
pub(crate) fn verifies(verifier: &str, challenge: &str) -> bool {
    let well_formed = VERIFIER_CHARS.contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    well_formed && crate::secret::same_secret(challenge_of(verifier).as_bytes(), challenge.as_bytes())
}

/// Whether `challenge` can be an S256 challenge: 43 characters of base64url.
pub(crate) fn is_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The key a secret is stored under: 64 hex digits of its SHA-256, so the store holds no secret
/// in its keys and a key found tells nothing of the secret.
pub(crate) fn key_of(secret: &str) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, secret.as_bytes()).as_ref())
}

/// A fresh value of 32 random bytes from the operating system, as 43 base64url characters
/// (also a well-formed PKCE verifier).
pub(crate) fn fresh() -> Result<String, String> {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf).map_err(|e| format!("no secure random source: {e}"))?;
    Ok(base64url(&buf))
}

/// Base64url without padding (RFC 4648 §5).
pub(crate) fn base64url(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    // Computed apart: Python's hashlib.sha256 and base64.urlsafe_b64encode, padding stripped.
    const VERIFIER: &str = "the-verifier-of-a-test-0123456789-abcdefghijklmnop";
    const CHALLENGE: &str = "BVvy4CD-OvCFbvT0e0Ez4cvXutBtG3b4Q43biCWs3YQ";

    #[test]
    fn the_s256_challenge_is_base64url_of_sha256_without_padding() {
        assert_eq!(challenge_of(VERIFIER), CHALLENGE);
        assert!(is_challenge(CHALLENGE));
    }

    #[test]
    fn only_the_verifier_of_a_challenge_verifies_it() {
        assert!(verifies(VERIFIER, CHALLENGE));
        assert!(!verifies("the-verifier-of-a-test-0123456789-abcdefghijklmnoq", CHALLENGE), "another verifier");
        assert!(!verifies(CHALLENGE, CHALLENGE), "the challenge is not its own verifier");
        assert!(!verifies("short", &challenge_of("short")), "a verifier under 43 characters is refused");
        assert!(
            !verifies(&format!("{VERIFIER} "), &challenge_of(&format!("{VERIFIER} "))),
            "characters outside the set"
        );
    }

    #[test]
    fn base64url_matches_rfc_4648s_vectors_without_padding() {
        for (raw, enc) in
            [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE")]
        {
            assert_eq!(base64url(raw.as_bytes()), enc);
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn fresh_values_are_verifiers_and_differ() {
        let (a, b) = (fresh().unwrap(), fresh().unwrap());
        assert_ne!(a, b);
        assert!(verifies(&a, &challenge_of(&a)));
        assert_eq!(key_of(&a).len(), 64);
        assert!(!key_of(&a).contains(&a));
    }
}
