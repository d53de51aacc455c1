//! How Bitbucket's data is written for the model: dates, statuses in Bitbucket's words, and cuts that
//! always say what was cut. Text from Bitbucket passes through as it is (no escaping, no stripping),
//! but for what could hide or reorder it: [`visible`] writes every control character (but a line break
//! and a tab) and every bidirectional control as a `⟨U+202E⟩` mark, in every text a tool answers the
//! model with (`ToolResult` passes its text through it on the way out). A line in a list also has its
//! line breaks shown as `⏎` so one item stays one line.
//!
//! What several tools write alike has a module here: [`builds`] (a commit's totals, required builds),
//! [`diff`] (a changed file, a file's diff within a budget) and [`pull_request`] (what changed meanwhile).

pub mod builds;
pub mod diff;
pub mod insights;
pub mod pull_request;
pub mod review;

use std::borrow::Cow;

use crate::bitbucket::model::Commit;

/// Whether `c` would hide or reorder what the model reads: a control character (C0, DEL, C1) other
/// than `\n` and `\t`, or a bidirectional control: the embeddings and overrides U+202A–U+202E, the
/// isolates U+2066–U+2069, the marks U+200E, U+200F and the Arabic letter mark U+061C.
pub fn hides(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// `s` with each character that [`hides`] written as a visible mark, `⟨U+001B⟩` for ESC and
/// `⟨U+202E⟩` for a right-to-left override, as the view page draws them: the one function every tool's
/// text passes through before the model reads it. Borrowed when there is nothing to mark.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hides) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if hides(c) {
            out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` when it has at most `max` characters; otherwise its first `max` characters and a marker that says
/// how much of it is shown and, with `how`, how to get the rest.
pub fn cap(s: &str, max: usize, what: &str, how: &str) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => {
            let total = s.chars().count();
            let how = if how.is_empty() { String::new() } else { format!("; {how}") };
            format!("{}… [{what} cut: {max} of {total} characters shown{how}]", &s[..i])
        }
    }
}

/// `s` on one line: line breaks become `⏎`.
pub fn one_line(s: &str) -> String {
    s.replace("\r\n", "⏎").replace(['\n', '\r'], "⏎")
}

/// A title for a list line: one line, at most `max` characters, cut with `…` (the list's header says so).
pub fn short(s: &str, max: usize) -> String {
    let s = one_line(s);
    match s.char_indices().nth(max) {
        None => s,
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// The longest stretch of an argument an answer quotes back.
pub const ECHO_CHARS: usize = 300;

/// An argument (a path, a name) quoted back in an answer: one line, at most [`ECHO_CHARS`] characters, cut
/// with `…`, so that what the model sent is never its answer's bulk.
pub fn echo(s: &str) -> String {
    short(s, ECHO_CHARS)
}

/// An epoch-milliseconds time as a UTC date and minute: `2025-12-05 14:00Z`.
pub fn when(ms: Option<i64>) -> String {
    let Some(ms) = ms else { return "?".to_owned() };
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}Z", rem / 3600, rem % 3600 / 60)
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar (H. Hinnant's algorithm).
pub(crate) fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A build state as a word.
pub fn build_state(state: Option<&str>) -> &str {
    match state {
        Some("SUCCESSFUL") => "successful",
        Some("FAILED") => "failed",
        Some("INPROGRESS") => "in progress",
        Some("CANCELLED") => "cancelled",
        Some("UNKNOWN") | None => "unknown",
        Some(other) => other,
    }
}

/// A commit message's first line, as a list shows it.
const SUBJECT_CHARS: usize = 120;

/// One commit on one line: short hash, date, author, first line, merges marked.
pub fn commit_line(c: &Commit) -> String {
    let id = c.display_id.as_deref().or(c.id.as_deref());
    let who = c.author.as_ref().map(|a| a.display_name.as_deref().unwrap_or(a.handle())).unwrap_or("?");
    let subject = c.message.as_deref().unwrap_or("").lines().next().unwrap_or("");
    let merge = if c.parents.len() > 1 { format!(" (merge of {})", c.parents.len()) } else { String::new() };
    format!(
        "{} {} {}: {}{merge}",
        short_commit(id),
        when(c.author_timestamp),
        short(&one_line(who), 60),
        short(subject, SUBJECT_CHARS)
    )
}

/// A short commit id.
pub fn short_commit(id: Option<&str>) -> &str {
    let id = id.unwrap_or("?");
    id.get(..11).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(when(Some(1_767_225_600_000)), "2026-01-01 00:00Z");
        assert_eq!(when(Some(0)), "1970-01-01 00:00Z");
        assert_eq!(when(Some(951_782_400_000)), "2000-02-29 00:00Z");
    }

    #[test]
    fn a_cut_says_how_much_is_shown() {
        assert_eq!(cap("abcdef", 3, "title", ""), "abc… [title cut: 3 of 6 characters shown]");
        assert_eq!(cap("abc", 3, "title", ""), "abc");
        assert_eq!(short("a\nbcdef", 3), "a⏎b…");
    }

    #[test]
    fn control_and_bidi_characters_are_made_visible_and_nothing_else() {
        assert_eq!(visible("a\u{1b}[31mred"), "a⟨U+001B⟩[31mred");
        assert_eq!(visible("gnp\u{202e}.exe"), "gnp⟨U+202E⟩.exe");
        for c in [
            '\u{202a}', '\u{202d}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}', '\0', '\r', '\u{7f}',
            '\u{85}',
        ] {
            let shown = visible(&format!("x{c}y")).into_owned();
            assert!(!shown.contains(c) && shown.starts_with("x⟨U+") && shown.ends_with("⟩y"), "{c:?}: {shown}");
        }
        let plain = "line one\n\tindented — ünïcode ✓ ⏎ עברית";
        assert!(matches!(visible(plain), Cow::Borrowed(p) if p == plain));
    }

    #[test]
    fn hostile_text_passes_through() {
        let t = "<script>alert(1)</script> \u{202e}x\u{202c}";
        assert_eq!(cap(t, 1000, "t", ""), t);
        assert_eq!(short(t, 1000), t);
    }
}
