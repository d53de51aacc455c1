//! Diff content: the seed's patch text read into hunks, the big files generated from a short description, and
//! the server's line cap applied.
//!
//! Source: reference "Diff and changes" [spec][rec]: the diff endpoint is not paged; the server caps lines and sets
//! `truncated` on the file, hunk and segment where it cut. The cap itself (10,000 lines) is [assumed].

use crate::model::{Hunk, Line, Segment};

/// Most diff lines served per file before the rest is cut and `truncated` set. [assumed]
pub const MAX_DIFF_LINES: usize = 10_000;

/// Reads unified-diff lines (`@@ -1,3 +1,4 @@ ctx`, then lines starting ` `, `-` or `+`) into hunks.
pub fn parse(lines: &[String]) -> Result<Vec<Hunk>, String> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let (mut src, mut dst) = (0u32, 0u32);
    for (n, raw) in lines.iter().enumerate() {
        if let Some(header) = raw.strip_prefix("@@ ") {
            let (ranges, context) = header.split_once("@@").ok_or(format!("patch line {n}: unterminated @@ header"))?;
            let mut parts = ranges.split_whitespace();
            let (sl, ss) = range(parts.next(), '-').ok_or(format!("patch line {n}: bad source range"))?;
            let (dl, ds) = range(parts.next(), '+').ok_or(format!("patch line {n}: bad destination range"))?;
            let context = context.trim();
            hunks.push(Hunk {
                context: (!context.is_empty()).then(|| context.to_string()),
                source_line: sl,
                source_span: ss,
                destination_line: dl,
                destination_span: ds,
                segments: Vec::new(),
                truncated: false,
            });
            (src, dst) = (sl.max(1), dl.max(1));
            continue;
        }
        let hunk = hunks.last_mut().ok_or(format!("patch line {n}: a line before the first @@ header"))?;
        let (kind, text) = match raw.chars().next() {
            Some('+') => ("ADDED", &raw[1..]),
            Some('-') => ("REMOVED", &raw[1..]),
            Some(' ') => ("CONTEXT", &raw[1..]),
            Some('\\') => continue,
            None => ("CONTEXT", ""),
            Some(_) => {
                return Err(format!("patch line {n}: must start with ' ', '-', '+' or '@@'"));
            }
        };
        push_line(hunk, kind, Line { source: src, destination: dst, text: text.to_string() });
        match kind {
            "ADDED" => dst += 1,
            "REMOVED" => src += 1,
            _ => {
                src += 1;
                dst += 1;
            }
        }
    }
    Ok(hunks)
}

fn range(part: Option<&str>, sign: char) -> Option<(u32, u32)> {
    let body = part?.strip_prefix(sign)?;
    match body.split_once(',') {
        Some((l, s)) => Some((l.parse().ok()?, s.parse().ok()?)),
        None => Some((body.parse().ok()?, 1)),
    }
}

/// Adds a line to the hunk, to its last segment when that is of the same kind.
pub fn push_line(hunk: &mut Hunk, kind: &'static str, line: Line) {
    match hunk.segments.last_mut() {
        Some(seg) if seg.kind == kind => seg.lines.push(line),
        _ => hunk.segments.push(Segment { kind, lines: vec![line], truncated: false }),
    }
}

/// Generates a deterministic diff of about `lines` lines in a language: a new file (`added`) or a modification
/// that alternates context, removed and added runs.
pub fn generate(language: &str, lines: u32, added: bool) -> Vec<Hunk> {
    let mut hunk = Hunk {
        context: None,
        source_line: if added { 0 } else { 1 },
        source_span: 0,
        destination_line: 1,
        destination_span: 0,
        segments: Vec::new(),
        truncated: false,
    };
    let (mut src, mut dst) = (1u32, 1u32);
    for i in 0..lines {
        let kind = if added {
            "ADDED"
        } else {
            match i % 8 {
                0..=2 => "CONTEXT",
                3 | 4 => "REMOVED",
                _ => "ADDED",
            }
        };
        let text = sample_line(language, i, kind == "REMOVED");
        push_line(&mut hunk, kind, Line { source: src, destination: dst, text });
        match kind {
            "ADDED" => dst += 1,
            "REMOVED" => src += 1,
            _ => {
                src += 1;
                dst += 1;
            }
        }
    }
    hunk.source_span = src - 1;
    hunk.destination_span = dst - 1;
    vec![hunk]
}

fn sample_line(language: &str, i: u32, old: bool) -> String {
    let v = if old { "old" } else { "new" };
    match (language, i % 6) {
        (_, 0) if language == "python" => format!("# section {i} ({v})"),
        (_, 0) if language == "yaml" => format!("# section {i} ({v})"),
        (_, 0) => format!("// section {i} ({v})"),
        ("rust", _) => format!("pub fn item_{i}_{v}(x: u32) -> u32 {{ x.wrapping_mul({i}) }}"),
        ("typescript", _) => format!("export const item{i}{v} = (x: number): number => x * {i};"),
        ("python", _) => format!("def item_{i}_{v}(x):  return x * {i}"),
        ("go", _) => format!("func Item{i}{v}(x int) int {{ return x * {i} }}"),
        ("java", _) => format!("    static int item{i}{v}(int x) {{ return x * {i}; }}"),
        ("yaml", _) => format!("item_{i}_{v}: {{ value: {i}, enabled: true }}"),
        _ => format!("line {i} {v}"),
    }
}

/// Makes every line `bytes` long by repeating its text, space-separated, and cutting the last repetition: the long
/// lines of a minified or generated file. A line already that long is left alone.
pub fn widen(hunks: &mut [Hunk], bytes: usize) {
    for line in hunks.iter_mut().flat_map(|h| &mut h.segments).flat_map(|s| &mut s.lines) {
        if line.text.is_empty() || line.text.len() >= bytes {
            continue;
        }
        let unit = format!("{} ", line.text);
        let mut wide = unit.repeat(bytes / unit.len() + 1);
        // The sample lines are ASCII, so any byte is a character boundary.
        wide.truncate(bytes);
        line.text = wide;
    }
}

/// Cuts hunks after `cap` lines in total, marking the cut segment, its hunk and (by the return value) the file.
pub fn cap_lines(hunks: &mut Vec<Hunk>, cap: usize) -> bool {
    let mut left = cap;
    let mut cut = false;
    let mut keep_hunks = 0;
    for hunk in hunks.iter_mut() {
        if left == 0 {
            cut = true;
            break;
        }
        keep_hunks += 1;
        let mut keep_segments = 0;
        for seg in hunk.segments.iter_mut() {
            if left == 0 {
                cut = true;
                hunk.truncated = true;
                break;
            }
            keep_segments += 1;
            if seg.lines.len() > left {
                seg.lines.truncate(left);
                seg.truncated = true;
                hunk.truncated = true;
                cut = true;
                left = 0;
            } else {
                left -= seg.lines.len();
            }
        }
        hunk.segments.truncate(keep_segments);
    }
    if hunks.len() > keep_hunks {
        cut = true;
        if let Some(last) = hunks.get_mut(keep_hunks.saturating_sub(1)) {
            last.truncated = true;
        }
    }
    hunks.truncate(keep_hunks);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &[&str]) -> Vec<String> {
        s.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn patch_lines_become_segments_numbered_on_both_sides() {
        let h = parse(&lines(&["@@ -10,3 +10,3 @@ fn main", " a", "-b", "+c", " d"])).unwrap_or_default();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].context.as_deref(), Some("fn main"));
        let kinds: Vec<_> = h[0].segments.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, ["CONTEXT", "REMOVED", "ADDED", "CONTEXT"]);
        assert_eq!(h[0].segments[1].lines[0].source, 11);
        assert_eq!(h[0].segments[2].lines[0].destination, 11);
        assert_eq!((h[0].segments[3].lines[0].source, h[0].segments[3].lines[0].destination), (12, 12));
    }

    #[test]
    fn a_line_before_any_header_is_an_error() {
        assert!(parse(&lines(&["+x"])).is_err());
    }

    #[test]
    fn widened_lines_are_their_text_repeated_to_the_width() {
        let mut h = generate("typescript", 12, true);
        widen(&mut h, 15_000);
        let lines: Vec<&Line> = h[0].segments.iter().flat_map(|s| &s.lines).collect();
        assert_eq!(lines.len(), 12);
        assert!(lines.iter().all(|l| l.text.len() == 15_000));
        assert!(
            lines[1].text.starts_with("export const item1new = (x: number): number => x * 1; export const item1new")
        );
    }

    #[test]
    fn capping_cuts_at_the_cap_and_marks_the_cut() {
        let mut h = generate("rust", 120, false);
        assert!(cap_lines(&mut h, 50));
        let n: usize = h.iter().flat_map(|h| &h.segments).map(|s| s.lines.len()).sum();
        assert_eq!(n, 50);
        assert!(h[0].truncated);
        let mut small = generate("go", 10, true);
        assert!(!cap_lines(&mut small, 50));
    }
}
