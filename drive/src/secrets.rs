//! The credentials bb holds, and their removal from any text it passes on.
//!
//! A server or proxy that repeats the `Authorization` header in its error text, a TLS or proxy
//! library that names a URL with its password: whatever the source, no credential may reach a tool
//! result or a log line. [`Secrets`] holds every form in which bb sends each credential (the raw
//! token, which `Bearer <token>` contains; a password, `user:password` and its base64, which
//! `Basic <b64>` contains) and the forms a careless echo adds (JSON's `\/` escape, percent-encoding).

use std::borrow::Cow;
use std::collections::BTreeMap;

use bb_core::base64;

/// What a credential is replaced with.
pub const REMOVED: &str = "[credential removed]";

/// Raw secrets shorter than this are not scrubbed: replacing every `ab` would garble any text, and
/// their encoded forms (longer) still are.
const SHORTEST: usize = 4;

/// The forms of the credentials to scrub, each counted by how many holders added it.
///
/// Cheap to clone; its `Debug` form shows only how many forms it holds.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    forms: BTreeMap<String, usize>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} forms)", self.forms.len())
    }
}

impl Secrets {
    /// No secrets: scrubbing changes nothing.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Whether there is nothing to scrub.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Adds a token (sent as `Bearer <token>`, or a proxy's password).
    pub fn add_token(&mut self, token: &str) {
        for form in token_forms(token) {
            *self.forms.entry(form).or_default() += 1;
        }
    }

    /// Takes back one [`Secrets::add_token`] of `token`; its forms go once nobody else added them.
    pub fn remove_token(&mut self, token: &str) {
        for form in token_forms(token) {
            if let Some(n) = self.forms.get_mut(&form) {
                *n -= 1;
                if *n == 0 {
                    self.forms.remove(&form);
                }
            }
        }
    }

    /// Adds basic credentials: the password, `user:password` and its base64 (sent as `Basic <b64>`).
    pub fn add_basic(&mut self, user: &str, password: &str) {
        self.add_token(password);
        let pair = format!("{user}:{password}");
        self.add_token(&base64(pair.as_bytes()));
        self.add_token(&pair);
    }

    /// `text` with every form of every secret replaced by [`REMOVED`]; borrowed when none occurs.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        // Longest first, so a form that contains another is replaced whole.
        let mut forms: Vec<&String> = self.forms.keys().collect();
        forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        for form in forms {
            if out.contains(form.as_str()) {
                out = Cow::Owned(out.replace(form.as_str(), REMOVED));
            }
        }
        out
    }

    /// `bytes` scrubbed as [`Secrets::scrub`] does; bytes that are not UTF-8 are scrubbed piece by
    /// piece between the invalid sequences (which are kept as they are).
    pub fn scrub_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        if self.is_empty() {
            return bytes;
        }
        match std::str::from_utf8(&bytes) {
            Ok(text) => match self.scrub(text) {
                Cow::Borrowed(_) => bytes,
                Cow::Owned(scrubbed) => scrubbed.into_bytes(),
            },
            Err(_) => {
                let mut out = Vec::with_capacity(bytes.len());
                for chunk in bytes.utf8_chunks() {
                    out.extend_from_slice(self.scrub(chunk.valid()).as_bytes());
                    out.extend_from_slice(chunk.invalid());
                }
                out
            }
        }
    }
}

/// The forms a token may take in an echo: as sent, JSON-escaped, percent-encoded.
fn token_forms(token: &str) -> Vec<String> {
    let mut forms = Vec::new();
    if token.len() >= SHORTEST {
        forms.push(token.to_owned());
        let json = token.replace('\\', "\\\\").replace('"', "\\\"").replace('/', "\\/");
        let percent = percent_encode(token);
        for form in [json, percent] {
            if !forms.contains(&form) {
                forms.push(form);
            }
        }
    }
    forms
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648_as_basic_authentication_sends_it() {
        assert_eq!(base64(b"Aladdin:open sesame"), "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert_eq!(base64(b"a:b"), "YTpi");
        assert_eq!(base64(b"ab:c"), "YWI6Yw==");
    }

    #[test]
    fn a_token_is_removed_raw_after_bearer_json_escaped_and_percent_encoded() {
        let mut s = Secrets::new();
        s.add_token("ab/c+d");
        let text = r#"Bearer ab/c+d, "ab\/c+d", ?t=ab%2Fc%2Bd"#;
        assert_eq!(s.scrub(text), format!("Bearer {REMOVED}, \"{REMOVED}\", ?t={REMOVED}"));
    }

    #[test]
    fn basic_credentials_are_removed_as_password_pair_and_base64() {
        let mut s = Secrets::new();
        s.add_basic("u", "pa55word");
        let text = format!("x pa55word y Basic {} z u:pa55word", base64(b"u:pa55word"));
        assert_eq!(s.scrub(&text), format!("x {REMOVED} y Basic {REMOVED} z {REMOVED}"));
    }

    #[test]
    fn text_without_a_secret_is_borrowed_and_bytes_that_are_not_utf8_are_still_scrubbed() {
        let mut s = Secrets::new();
        s.add_token("s3cret");
        assert!(matches!(s.scrub("nothing here"), Cow::Borrowed(_)));
        let bytes = [b"\xff s3cret \xfe".as_slice()].concat();
        assert_eq!(s.scrub_bytes(bytes), [b"\xff ", REMOVED.as_bytes(), b" \xfe"].concat());
    }

    #[test]
    fn a_token_added_twice_stays_until_removed_twice_and_short_ones_are_ignored() {
        let mut s = Secrets::new();
        s.add_token("tok3n");
        s.add_token("tok3n");
        s.remove_token("tok3n");
        assert_eq!(s.scrub("tok3n"), REMOVED);
        s.remove_token("tok3n");
        assert!(s.is_empty());
        s.add_token("ab");
        assert!(s.is_empty());
    }
}
