//! A diff written for the model: a changed file on one line, and a file's hunks with their line numbers,
//! cut at a line within a budget with a marker that says how to get the rest. For `get_pull_request_diff`
//! and `compare_refs`, which show a pull request's diff and two refs' alike.

use super::one_line;
use crate::bitbucket::model::{Change, Diff};

/// A changed file on one line: its change as a letter (A, D, R, C, M), its path, where it came from, and its
/// comments' count.
pub fn change_line(c: &Change) -> String {
    let kind = match c.kind.as_deref() {
        Some("ADD") => "A",
        Some("DELETE") => "D",
        Some("MOVE") => "R",
        Some("COPY") => "C",
        Some("MODIFY") => "M",
        _ => "?",
    };
    let mut line = format!("{kind} {}", one_line(c.named_path().unwrap_or("(Bitbucket gave no path)")));
    if let Some(src) = c.src_path.as_ref().and_then(|p| p.whole.as_deref()) {
        line.push_str(&format!(" (from {})", one_line(src)));
    }
    if let Some(n) = c.properties.as_ref().and_then(|p| p.active_comments).filter(|n| *n > 0) {
        line.push_str(&format!(" · {n} comment(s)"));
    }
    line
}

/// One file's diff within `room` bytes, cut at a line boundary with a marker.
pub fn render_file(path: &str, d: &Diff, room: usize) -> String {
    let mut out = format!("== {}\n", super::echo(path));
    if d.binary == Some(true) {
        out.push_str("(binary file: no text diff)\n");
        return out;
    }
    if d.hunks.is_empty() {
        out.push_str("(no text changes)\n");
    }
    let marker_room = 120 + 2 * path.len();
    for h in &d.hunks {
        let head = format!(
            "@@ -{},{} +{},{} @@{}\n",
            h.source_line.unwrap_or(0),
            h.source_span.unwrap_or(0),
            h.destination_line.unwrap_or(0),
            h.destination_span.unwrap_or(0),
            h.context.as_deref().map(|c| format!(" {}", one_line(c))).unwrap_or_default()
        );
        if out.len() + head.len() + marker_room > room {
            return cut(out, path, None, room);
        }
        out.push_str(&head);
        for s in &h.segments {
            let (sign, by_source) = match s.kind.as_deref() {
                Some("ADDED") => ('+', false),
                Some("REMOVED") => ('-', true),
                _ => (' ', false),
            };
            for l in &s.lines {
                // ADDED and CONTEXT lines show their new number, REMOVED lines their old one. [reference "Diff and changes": rec]
                let num = if by_source { l.source } else { l.destination }.unwrap_or(0);
                let mut line = format!("{sign}{num} {}", l.line.as_deref().unwrap_or(""));
                if !l.comment_ids.is_empty() {
                    let ids: Vec<String> = l.comment_ids.iter().map(|i| format!("#{i}")).collect();
                    line.push_str(&format!("  ⟨comment {}⟩", ids.join(" ")));
                }
                line.push('\n');
                if out.len() + line.len() + marker_room > room {
                    return cut(out, path, Some((sign, num)), room);
                }
                out.push_str(&line);
            }
        }
    }
    if d.truncated == Some(true) {
        out.push_str("[Bitbucket cut this file's diff: it is larger than the server serves]\n");
    }
    out
}

fn cut(mut out: String, path: &str, at: Option<(char, u64)>, room: usize) -> String {
    let at = match at {
        Some(('-', n)) => format!(" before old line {n}"),
        Some((_, n)) => format!(" before new line {n}"),
        None => String::new(),
    };
    out.push_str(&format!(
        "[diff of {path} cut{at} at {room} bytes; ask with paths=[\"{path}\"] and a larger max_bytes (up to 100000)]\n"
    ));
    out
}
