//! Code Insights written for people and the model alike: a report's data fields formatted by their type, links
//! kept only when they are http(s), and a report in one line.
//!
//! Types [reference "Code Insights": spec, the seven types]; values [assumed: as integrations post them]: BOOLEAN true/false,
//! DATE epoch milliseconds, DURATION milliseconds, LINK `{linktext, href}`, NUMBER, PERCENTAGE 0–100, TEXT a string.
//! A type Bitbucket adds later, or a value that does not fit its type, is shown as its value's text.

use serde_json::Value;

use super::{civil, short};

/// Characters of a TEXT field kept; the rest is cut with `…`.
pub const TEXT_CHARS: usize = 200;

/// `url` when it is an http(s) address, else `None`: a `javascript:` or `data:` link is never offered.
pub fn http_url(url: Option<&str>) -> Option<String> {
    let u = url?.trim();
    let lower = u.get(..8).unwrap_or(u).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| u.to_owned())
}

/// `s` cut at `max` characters with `…`, kept on its lines.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// A data field's value (of type `kind`) as text, and its address when it is a link to an http(s) address.
pub fn field_text(kind: Option<&str>, v: &Value) -> (String, Option<String>) {
    let as_text = || match v {
        Value::String(s) => cut(s, TEXT_CHARS),
        Value::Null => String::new(),
        other => cut(&other.to_string(), TEXT_CHARS),
    };
    let text = match (kind, v) {
        (Some("BOOLEAN") | None, Value::Bool(b)) => if *b { "Yes" } else { "No" }.to_owned(),
        (Some("DATE"), Value::Number(n)) => n.as_i64().map_or_else(as_text, date),
        (Some("DURATION"), Value::Number(n)) => n.as_u64().map_or_else(as_text, duration),
        (Some("NUMBER") | None, Value::Number(n)) => number(n),
        (Some("PERCENTAGE"), Value::Number(n)) => format!("{}%", plain(n)),
        (Some("LINK"), Value::Object(o)) => {
            let href = o.get("href").and_then(Value::as_str);
            let text = o.get("linktext").and_then(Value::as_str).filter(|t| !t.is_empty()).or(href).unwrap_or("");
            return (cut(text, TEXT_CHARS), http_url(href));
        }
        _ => as_text(),
    };
    (text, None)
}

/// `2026-12-04 10:15 UTC`.
fn date(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

/// `1 h 2 min`, `1 min 5 s`, `5 s`, `250 ms`.
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, 0) => format!("{ms} ms"),
        (0, 0, sec) => format!("{sec} s"),
        (0, min, 0) => format!("{min} min"),
        (0, min, sec) => format!("{min} min {sec} s"),
        (h, 0, _) => format!("{h} h"),
        (h, min, _) => format!("{h} h {min} min"),
    }
}

/// A number with thousands separators: `1,234`, `1,234.5`.
fn number(n: &serde_json::Number) -> String {
    let text = plain(n);
    let (sign, rest) = text.strip_prefix('-').map_or(("", text.as_str()), |r| ("-", r));
    let (whole, frac) = rest.split_once('.').map_or((rest, None), |(w, f)| (w, Some(f)));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A number as JSON writes it, without a trailing `.0`.
fn plain(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i.to_string(),
        (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

/// A field (its title, type and value) as `Title: text` on one line, for the model.
pub fn field_line(title: Option<&str>, kind: Option<&str>, value: &Value) -> String {
    let (text, _) = field_text(kind, value);
    format!("{}: {}", short(title.unwrap_or("?"), 80), short(&text, TEXT_CHARS))
}

/// A report's result as a word: `failed`, `passed`, `pending` (no result yet).
pub fn result_word(result: Option<&str>) -> &'static str {
    match result {
        Some("FAIL") => "failed",
        Some("PASS") => "passed",
        _ => "pending",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(kind: &str, value: Value) -> (String, Option<String>) {
        field_text(Some(kind), &value)
    }

    #[test]
    fn each_type_is_written_as_bitbucket_shows_it() {
        assert_eq!(field("BOOLEAN", json!(true)).0, "Yes");
        assert_eq!(field("DATE", json!(1_796_379_300_000_i64)).0, "2026-12-04 10:15 UTC");
        assert_eq!(field("DURATION", json!(65_000)).0, "1 min 5 s");
        assert_eq!(field("NUMBER", json!(1_234_567)).0, "1,234,567");
        assert_eq!(field("NUMBER", json!(-1234.5)).0, "-1,234.5");
        assert_eq!(field("PERCENTAGE", json!(83.2)).0, "83.2%");
        assert_eq!(field("TEXT", json!("x".repeat(300))).0.chars().count(), TEXT_CHARS + 1);
        let link = field("LINK", json!({"linktext": "Open", "href": "https://x.example/"}));
        assert_eq!(link, ("Open".into(), Some("https://x.example/".into())));
    }

    #[test]
    fn an_unknown_type_or_a_hostile_link_is_drawn_as_text_without_an_address() {
        assert_eq!(field("HISTOGRAM", json!([3, 1, 4])).0, "[3,1,4]");
        assert_eq!(field("LINK", json!({"href": "javascript:alert(1)"})), ("javascript:alert(1)".into(), None));
        assert_eq!(http_url(Some("JavaScript:alert(1)")), None);
        assert_eq!(http_url(Some("HTTPS://x.example")), Some("HTTPS://x.example".into()));
    }
}
