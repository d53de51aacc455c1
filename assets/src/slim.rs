//! What the page leaves out of its sources: each line's leading blanks (spaces and tabs) and every
//! line that is only a `//` comment. Nothing else is touched, so a string, a regular expression or a
//! template literal stays as written (none of the page's sources starts a line inside one with `//`,
//! and `every_script_is_in_the_page` holds each slimmed script to the page). Const functions, so the
//! page is slimmed when bb is compiled.

/// Where the line starting at `i` begins its text, and whether it is a `//` comment; `end` is where it ends
/// (after its newline).
const fn line(s: &[u8], i: usize) -> (usize, usize, bool) {
    let mut text = i;
    while text < s.len() && (s[text] == b' ' || s[text] == b'\t') {
        text += 1;
    }
    let comment = text + 1 < s.len() && s[text] == b'/' && s[text + 1] == b'/';
    let mut end = text;
    while end < s.len() && s[end] != b'\n' {
        end += 1;
    }
    if end < s.len() {
        end += 1;
    }
    (text, end, comment)
}

/// The slimmed length of `s`.
pub const fn len(s: &str) -> usize {
    let s = s.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < s.len() {
        let (text, end, comment) = line(s, i);
        if !comment {
            n += end - text;
        }
        i = end;
    }
    n
}

/// `s` slimmed, as `N` (= [`len`]) bytes.
pub const fn bytes<const N: usize>(s: &str) -> [u8; N] {
    let s = s.as_bytes();
    let mut out = [0u8; N];
    let (mut i, mut n) = (0, 0);
    while i < s.len() {
        let (mut text, end, comment) = line(s, i);
        if !comment {
            while text < end {
                out[n] = s[text];
                n += 1;
                text += 1;
            }
        }
        i = end;
    }
    out
}

/// `s` slimmed, at run time (for tests that find a script in the page).
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for l in s.split_inclusive('\n') {
        let t = l.trim_start_matches([' ', '\t']);
        if !t.starts_with("//") {
            out.push_str(t);
        }
    }
    out
}
