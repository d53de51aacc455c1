//! How bb writes bytes as text and reads them back: base64, for an avatar's `data:` URL (the core), for basic
//! authentication's `user:password` (the shells) and for a header value sent as `=?base64?…?=` (the HTTP shell).
//! A leaf: it knows nothing of Bitbucket.

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextets = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for (i, s) in sextets.iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[*s as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The bytes that standard base64 `text` (RFC 4648 §4) stands for, or `None` when a character is outside its
/// alphabet. Lenient where the text is short of the standard: `=` is skipped wherever it stands, and bits left
/// over at the end are dropped.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut held = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_test_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), want);
            assert_eq!(base64_decode(want).as_deref(), Some(input.as_bytes()));
        }
    }

    #[test]
    fn decoding_skips_padding_and_refuses_what_is_not_base64() {
        assert_eq!(base64_decode("Zm9vYg").as_deref(), Some(b"foob".as_slice()));
        assert_eq!(base64_decode("Zm9v!"), None);
        assert_eq!(base64_decode("Zm9v YmFy"), None);
    }
}
