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
        (Some("DATE"), Value::Number(n)) => date(n),
        (Some("DURATION"), Value::Number(n)) => duration(n),
        (Some("NUMBER") | None, Value::Number(n)) => number(n, true),
        (Some("PERCENTAGE"), Value::Number(n)) => format!("{}%", number(n, false)),
        (Some("LINK"), Value::Object(o)) => {
            let href = o.get("href").and_then(Value::as_str);
            let text = o.get("linktext").and_then(Value::as_str).filter(|t| !t.is_empty()).or(href).unwrap_or("");
            return (cut(text, TEXT_CHARS), http_url(href));
        }
        _ => as_text(),
    };
    (text, None)
}

/// The latest time a DATE is read as: 9999-12-31 23:59:59.999 UTC, in epoch milliseconds.
const LAST_DATE_MS: i64 = 253_402_300_799_999;

/// A DATE (epoch milliseconds) as `2026-12-04 10:15 UTC`; a value that is no time bb can write (before
/// 1970, past the year 9999, not a whole number) says so plainly with the value Bitbucket sent.
fn date(n: &serde_json::Number) -> String {
    let f = n.as_f64().unwrap_or(f64::NAN);
    let plainly = |why: &str| format!("{} (not a date: {why})", number(n, false));
    if f < 0.0 || n.as_i64().is_some_and(|ms| ms < 0) {
        return plainly("before 1970");
    }
    if f > LAST_DATE_MS as f64 || n.as_i64().is_some_and(|ms| ms > LAST_DATE_MS) {
        return plainly("past the year 9999");
    }
    let ms = match n.as_i64() {
        Some(ms) => ms,
        None if f.fract() == 0.0 => f as i64,
        None => return plainly("not a whole number of milliseconds"),
    };
    let secs = ms / 1000;
    let (y, m, d) = civil(secs / 86_400);
    let rem = secs % 86_400;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

/// A DURATION (milliseconds) as `1 h 2 min`, `1 min 5 s`, `5 s`, `250 ms`; a negative one or one that
/// is not a number of milliseconds says so plainly.
fn duration(n: &serde_json::Number) -> String {
    let Some(ms) = n.as_u64() else {
        return match n.as_f64() {
            Some(f) if f.is_finite() && f > 0.0 && f < 1e15 => format!("{} ms", decimal(f, true)),
            Some(f) if f < 0.0 => format!("{} (not a duration: negative)", number(n, false)),
            _ => format!("{} (not a duration)", number(n, false)),
        };
    };
    let s = ms / 1000;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, 0) => format!("{ms} ms"),
        (0, 0, sec) => format!("{sec} s"),
        (0, min, 0) => format!("{min} min"),
        (0, min, sec) => format!("{min} min {sec} s"),
        (h, 0, _) => format!("{} h", group(&h.to_string())),
        (h, min, _) => format!("{} h {min} min", group(&h.to_string())),
    }
}

/// A JSON number as text, with thousands separators when `grouped`: `1,234`, `-1,234.5`.
fn number(n: &serde_json::Number, grouped: bool) -> String {
    let whole = n.as_i64().map(|i| i.to_string()).or_else(|| n.as_u64().map(|u| u.to_string()));
    match (whole, n.as_f64()) {
        (Some(w), _) if grouped => group(&w),
        (Some(w), _) => w,
        (None, Some(f)) => decimal(f, grouped),
        (None, None) => n.to_string(),
    }
}

/// Any `f64` as a person reads it: `1,234.5` (grouped) or `1234.5`; `-0` as `0`; past 10¹⁵ or below
/// 10⁻⁶ in scientific notation, `1e308`, `-2.5e-7`; `not a number`, `infinity`, `-infinity`.
fn decimal(f: f64, grouped: bool) -> String {
    if f.is_nan() {
        return "not a number".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "infinity" } else { "-infinity" }.to_owned();
    }
    if f == 0.0 {
        return "0".to_owned();
    }
    if !(1e-6..1e15).contains(&f.abs()) {
        return format!("{f:e}");
    }
    // Rust writes the shortest text that reads back as `f`, without an exponent in this range.
    let text = format!("{f}");
    if grouped { group(&text) } else { text }
}

/// Thousands separators in the whole part of a plain decimal: `-1234567.25` → `-1,234,567.25`.
fn group(text: &str) -> String {
    let (sign, rest) = text.strip_prefix('-').map_or(("", text), |r| ("-", r));
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
        assert_eq!(field("PERCENTAGE", json!(100)).0, "100%");
        assert_eq!(field("TEXT", json!("x".repeat(300))).0.chars().count(), TEXT_CHARS + 1);
        let link = field("LINK", json!({"linktext": "Open", "href": "https://x.example/"}));
        assert_eq!(link, ("Open".into(), Some("https://x.example/".into())));
    }

    #[test]
    fn any_number_is_written_as_a_person_reads_it() {
        assert_eq!(field("NUMBER", json!(1e308)).0, "1e308");
        assert_eq!(field("NUMBER", json!(-1e308)).0, "-1e308");
        assert_eq!(field("NUMBER", json!(1e-300)).0, "1e-300");
        assert_eq!(field("NUMBER", json!(-2.5e-7)).0, "-2.5e-7");
        assert_eq!(field("NUMBER", json!(-0.0)).0, "0");
        assert_eq!(field("NUMBER", json!(0)).0, "0");
        assert_eq!(field("NUMBER", json!(0.000_001)).0, "0.000001");
        assert_eq!(field("NUMBER", json!(123_456_789.25)).0, "123,456,789.25");
        assert_eq!(field("NUMBER", json!(1e15)).0, "1e15");
        assert_eq!(field("NUMBER", json!(i64::MIN)).0, "-9,223,372,036,854,775,808");
        assert_eq!(field("NUMBER", json!(u64::MAX)).0, "18,446,744,073,709,551,615");
        assert_eq!(field("PERCENTAGE", json!(1e308)).0, "1e308%");
        assert_eq!(field("PERCENTAGE", json!(-0.0)).0, "0%");
        assert_eq!(decimal(f64::NAN, true), "not a number");
        assert_eq!(decimal(f64::INFINITY, true), "infinity");
        assert_eq!(decimal(f64::NEG_INFINITY, false), "-infinity");
        assert_eq!(decimal(f64::MIN_POSITIVE, true), "2.2250738585072014e-308");
        assert_eq!(decimal(f64::MAX, true), "1.7976931348623157e308");
        assert_eq!(decimal(-1234.5, true), "-1,234.5");
        assert_eq!(decimal(-1234.5, false), "-1234.5");
    }

    #[test]
    fn a_date_or_duration_that_is_no_time_says_so_plainly() {
        assert_eq!(field("DATE", json!(0)).0, "1970-01-01 00:00 UTC");
        assert_eq!(field("DATE", json!(-1)).0, "-1 (not a date: before 1970)");
        assert_eq!(field("DATE", json!(i64::MIN)).0, "-9223372036854775808 (not a date: before 1970)");
        assert_eq!(field("DATE", json!(i64::MAX)).0, "9223372036854775807 (not a date: past the year 9999)");
        assert_eq!(field("DATE", json!(u64::MAX)).0, "18446744073709551615 (not a date: past the year 9999)");
        assert_eq!(field("DATE", json!(253_402_300_799_999_i64)).0, "9999-12-31 23:59 UTC");
        assert_eq!(field("DATE", json!(253_402_300_800_000_i64)).0, "253402300800000 (not a date: past the year 9999)");
        assert_eq!(field("DATE", json!(1e308)).0, "1e308 (not a date: past the year 9999)");
        assert_eq!(field("DATE", json!(-1e308)).0, "-1e308 (not a date: before 1970)");
        assert_eq!(field("DATE", json!(-0.0)).0, "1970-01-01 00:00 UTC");
        assert_eq!(field("DATE", json!(1.5)).0, "1.5 (not a date: not a whole number of milliseconds)");
        assert_eq!(field("DATE", json!(1_796_379_300_000.0)).0, "2026-12-04 10:15 UTC");
        assert_eq!(field("DURATION", json!(-5)).0, "-5 (not a duration: negative)");
        assert_eq!(field("DURATION", json!(1e308)).0, "1e308 (not a duration)");
        assert_eq!(field("DURATION", json!(2.5)).0, "2.5 ms");
        assert_eq!(field("DURATION", json!(u64::MAX)).0, "5,124,095,576,030 h 25 min");
    }

    #[test]
    fn an_unknown_type_or_a_hostile_link_is_drawn_as_text_without_an_address() {
        assert_eq!(field("HISTOGRAM", json!([3, 1, 4])).0, "[3,1,4]");
        assert_eq!(field("LINK", json!({"href": "javascript:alert(1)"})), ("javascript:alert(1)".into(), None));
        assert_eq!(http_url(Some("JavaScript:alert(1)")), None);
        assert_eq!(http_url(Some("HTTPS://x.example")), Some("HTTPS://x.example".into()));
    }
}
