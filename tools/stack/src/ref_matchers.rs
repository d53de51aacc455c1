//! Whether a ref matcher (as in required-build conditions and default reviewer conditions) selects a ref.
//!
//! Source: reference "Required builds" [spec][rec][doc]: ANY_REF, BRANCH (id is the full ref), PATTERN (branch
//! permission syntax: `?` one character but not `/`; `*` any run without `/`; `**` any number of path segments;
//! a trailing `/` means `/**`; matching a suffix of the full ref at a segment boundary is enough), MODEL_CATEGORY
//! (a branch under the category's prefix) and MODEL_BRANCH (the configured branch). Letter case is ignored
//! [assumed, taken from the seed].

use serde_json::Value;

/// Whether `matcher` (`{id, type{id}}`) selects `ref_id` (a full ref), given the repository's branching model.
pub fn matches(matcher: &Value, ref_id: &str, model: Option<&Value>) -> bool {
    let id = matcher.get("id").and_then(Value::as_str).unwrap_or("");
    let kind = matcher.pointer("/type/id").and_then(Value::as_str).unwrap_or("");
    let ref_lc = ref_id.to_lowercase();
    match kind.to_ascii_uppercase().as_str() {
        "ANY_REF" => true,
        "BRANCH" => {
            let want = id.to_lowercase();
            let want = if want.starts_with("refs/") { want } else { format!("refs/heads/{want}") };
            want == ref_lc
        }
        "PATTERN" => pattern_matches(&id.to_lowercase(), &ref_lc),
        "MODEL_BRANCH" => {
            let key = id.to_ascii_lowercase();
            model
                .and_then(|m| m.pointer(&format!("/{key}/id")))
                .and_then(Value::as_str)
                .is_some_and(|b| b.to_lowercase() == ref_lc)
        }
        "MODEL_CATEGORY" => model
            .and_then(|m| m.get("types"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|t| t.get("id").and_then(Value::as_str).is_some_and(|t| t.eq_ignore_ascii_case(id)))
            .and_then(|t| t.get("prefix").and_then(Value::as_str))
            .is_some_and(|prefix| {
                ref_lc.strip_prefix("refs/heads/").is_some_and(|b| b.starts_with(&prefix.to_lowercase()))
            }),
        _ => false,
    }
}

/// Whether a branch-permission pattern matches the full ref or a suffix of it that starts a segment.
pub fn pattern_matches(pattern: &str, ref_id: &str) -> bool {
    let pattern = if pattern.ends_with('/') { format!("{pattern}**") } else { pattern.to_string() };
    let p: Vec<char> = pattern.chars().collect();
    let r: Vec<char> = ref_id.chars().collect();
    (0..r.len()).filter(|&i| i == 0 || r[i - 1] == '/').any(|i| glob(&p, &r[i..]))
}

fn glob(p: &[char], s: &[char]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            let rest = &p[2..];
            // `**/` may also stand for no segment at all.
            if rest.first() == Some(&'/') && glob(&rest[1..], s) {
                return true;
            }
            (0..=s.len()).any(|i| glob(rest, &s[i..]))
        }
        Some('*') => (0..=s.len()).take_while(|&i| i == 0 || s[i - 1] != '/').any(|i| glob(&p[1..], &s[i..])),
        Some('?') => s.first().is_some_and(|c| *c != '/') && glob(&p[1..], &s[1..]),
        Some(c) => s.first() == Some(c) && glob(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(kind: &str, id: &str) -> Value {
        json!({ "id": id, "type": { "id": kind } })
    }

    #[test]
    fn patterns_follow_branch_permission_syntax() {
        assert!(pattern_matches("project-*", "refs/heads/project-1"));
        assert!(!pattern_matches("project-*", "refs/heads/project-1/x"));
        assert!(pattern_matches("heads/**/master", "refs/heads/a/b/master"));
        assert!(pattern_matches("heads/**/master", "refs/heads/master"));
        assert!(pattern_matches("tags/", "refs/tags/v1.0"));
        assert!(pattern_matches("release/v?", "refs/heads/release/v2"));
        assert!(!pattern_matches("release/v?", "refs/heads/release/v22"));
        assert!(!pattern_matches("ease/*", "refs/heads/release/x"));
    }

    #[test]
    fn matchers_ignore_letter_case_and_read_the_branch_model() {
        let model = json!({ "development": { "id": "refs/heads/develop" }, "types": [{ "id": "FEATURE", "prefix": "feature/" }] });
        assert!(matches(&m("BRANCH", "refs/heads/Main"), "refs/heads/main", None));
        assert!(matches(&m("PATTERN", "Release/*"), "refs/heads/release/1", None));
        assert!(matches(&m("MODEL_BRANCH", "development"), "refs/heads/develop", Some(&model)));
        assert!(matches(&m("MODEL_CATEGORY", "FEATURE"), "refs/heads/feature/x", Some(&model)));
        assert!(!matches(&m("MODEL_CATEGORY", "FEATURE"), "refs/heads/bugfix/x", Some(&model)));
        assert!(matches(&m("ANY_REF", "ANY_REF_MATCHER_ID"), "refs/heads/anything", None));
    }
}
