//! What a new comment's anchor may hold and what the stand-in keeps of it: the path, a line with its type and
//! side, a multi-line marker, and the hashes of the diff it was made on; and which lines an anchor covers.
//!
//! Sources: reference "Pull requests" [spec][rec]: `anchor{path, srcPath?, line?, lineType ADDED|REMOVED|CONTEXT,
//! fileType FROM|TO, diffType, fromHash?, toHash?}`. A multi-line anchor carries `multilineMarker{startLine,
//! startLineType}`, its `line`/`lineType` naming the last line [rec: a peer DC MCP server's recorded response types].
//! The hashes a client leaves out are those of the diff the comment was made on: the pull request's target and
//! source commits then [rec: Bitbucket's answers carry them on every anchor]. A marker's `startLine` after `line`,
//! or not a positive number, is a 400 naming `multilineMarker`. [assumed: the 400s' words; that a marker without
//! `startLineType` takes the anchor's `lineType`; that lines of two sides of the diff are not compared]

use crate::errors;
use crate::exchange::Response;
use crate::model::PullRequest;
use serde_json::{Value, json};

const LINE_TYPES: [&str; 3] = ["ADDED", "REMOVED", "CONTEXT"];

fn positive(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64).filter(|n| *n >= 1)
}

/// The anchor a new root comment keeps: checked (a path; a marker's start a positive line, not after the last line
/// when both are numbered on the same side), with `fromHash`/`toHash` set to the pull request's target and source commits when left out.
pub fn accept(a: &Value, pr: &PullRequest) -> Result<Value, Response> {
    if a.get("path").and_then(Value::as_str).is_none() {
        return Err(errors::field_error("anchor", "anchor.path is required"));
    }
    let mut out = a.clone();
    if let Some(marker) = a.get("multilineMarker").filter(|m| !m.is_null()) {
        let field = "multilineMarker";
        let Some(start) = positive(marker.get("startLine")) else {
            return Err(errors::field_error(field, "multilineMarker.startLine must be a positive line number."));
        };
        let Some(line) = positive(a.get("line")) else {
            return Err(errors::field_error(field, "A multi-line anchor needs its last line, a positive `line`."));
        };
        let line_type = a.get("lineType").and_then(Value::as_str).unwrap_or("CONTEXT");
        let start_type = match marker.get("startLineType") {
            None | Some(Value::Null) => line_type,
            Some(t) => match t.as_str().filter(|t| LINE_TYPES.contains(t)) {
                Some(t) => t,
                None => {
                    return Err(errors::field_error(
                        field,
                        "multilineMarker.startLineType must be ADDED, REMOVED or CONTEXT.",
                    ));
                }
            },
        };
        // Lines of one side of the diff are numbered alike: REMOVED lines on the old file's, ADDED on the new
        // file's, CONTEXT on the side the anchor's `fileType` names (TO when left out).
        let file_side = a.get("fileType").and_then(Value::as_str).unwrap_or("TO");
        let side = |t: &str| match t {
            "REMOVED" => "FROM",
            "ADDED" => "TO",
            _ => file_side,
        };
        if side(start_type) == side(line_type) && start > line {
            return Err(errors::field_error(
                field,
                &format!("multilineMarker.startLine ({start}) must not be after the anchor's line ({line})."),
            ));
        }
        out["multilineMarker"] = json!({ "startLine": start, "startLineType": start_type });
    }
    if let Some(o) = out.as_object_mut() {
        o.entry("fromHash").or_insert(json!(pr.to_commit));
        o.entry("toHash").or_insert(json!(pr.from_commit));
    }
    Ok(out)
}

/// The lines an anchor covers, first and last (1-based): from a multi-line marker's `startLine` (read as on the
/// same side as `line`; a start past the end counts as the end), or the one `line`; none for a file anchor.
pub fn line_span(a: &Value) -> Option<(u64, u64)> {
    let last = positive(a.get("line"))?;
    let first = positive(a.pointer("/multilineMarker/startLine")).unwrap_or(last);
    Some((first.min(last), last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr() -> PullRequest {
        let seed = crate::seed::parse(crate::seed::DEFAULT_SEED).unwrap_or_else(|e| unreachable!("{e}"));
        let m = crate::seed::build(&seed, None).unwrap_or_else(|e| unreachable!("{e}"));
        m.prs.values().next().cloned().unwrap_or_else(|| unreachable!("the seed has pull requests"))
    }

    #[test]
    fn a_line_anchor_gets_the_diffs_hashes_and_keeps_its_own() {
        let pr = pr();
        let a = accept(&json!({"path": "x", "line": 3, "lineType": "ADDED"}), &pr).unwrap_or_default();
        assert_eq!((a["fromHash"].as_str(), a["toHash"].as_str()), (Some(&*pr.to_commit), Some(&*pr.from_commit)));
        let own = accept(&json!({"path": "x", "fromHash": "a", "toHash": "b"}), &pr).unwrap_or_default();
        assert_eq!((own["fromHash"].as_str(), own["toHash"].as_str()), (Some("a"), Some("b")));
    }

    #[test]
    fn a_multi_line_marker_is_kept_and_refused_when_it_starts_after_its_end_or_is_no_line() {
        let pr = pr();
        let ok = json!({"path": "x", "line": 5, "lineType": "ADDED", "multilineMarker": {"startLine": 2}});
        let a = accept(&ok, &pr).unwrap_or_default();
        assert_eq!(a["multilineMarker"], json!({"startLine": 2, "startLineType": "ADDED"}));
        assert_eq!(line_span(&a), Some((2, 5)));
        for bad in [
            json!({"path": "x", "line": 5, "lineType": "ADDED", "multilineMarker": {"startLine": 6, "startLineType": "ADDED"}}),
            json!({"path": "x", "line": 5, "multilineMarker": {"startLine": 0}}),
            json!({"path": "x", "line": 5, "multilineMarker": {"startLine": "two"}}),
            json!({"path": "x", "multilineMarker": {"startLine": 1}}),
            json!({"path": "x", "line": 5, "multilineMarker": {"startLine": 1, "startLineType": "SIDEWAYS"}}),
        ] {
            let r = accept(&bad, &pr).err().map(|r| r.status);
            assert_eq!(r, Some(400), "{bad}");
        }
        let across = json!({"path": "x", "line": 2, "lineType": "ADDED",
                            "multilineMarker": {"startLine": 9, "startLineType": "REMOVED"}});
        assert!(accept(&across, &pr).is_ok(), "lines of two sides are numbered apart");
        let one_side = json!({"path": "x", "line": 2, "lineType": "ADDED", "fileType": "TO",
                              "multilineMarker": {"startLine": 9, "startLineType": "CONTEXT"}});
        assert_eq!(accept(&one_side, &pr).err().map(|r| r.status), Some(400), "context on the new side");
    }
}
