//! A pull request of one changed Rust file, as Bitbucket answers its reads: what the drive's tests
//! show a diff view of.
#![allow(dead_code)]

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Cancel, PersonalToken};

pub const PR: &str = r#"{"id":1,"version":1,"title":"T","state":"OPEN","open":true,"closed":false,"fromRef":{"id":"refs/heads/f","displayId":"f","latestCommit":"a","repository":{"slug":"api","project":{"key":"BB"}}},"toRef":{"id":"refs/heads/main","displayId":"main","latestCommit":"b","repository":{"slug":"api","project":{"key":"BB"}}},"author":{"user":{"name":"alice","slug":"alice","displayName":"Alice"},"role":"AUTHOR","status":"UNAPPROVED"},"reviewers":[],"participants":[],"properties":{}}"#;
pub const CHANGES: &str = r#"{"values":[{"path":{"toString":"src/lib.rs"},"type":"MODIFY"}],"isLastPage":true,"start":0,"size":1,"limit":100}"#;
pub const DIFF: &str = r#"{"fromHash":"a","toHash":"b","contextLines":10,"truncated":false,"diffs":[{"source":{"toString":"src/lib.rs"},"destination":{"toString":"src/lib.rs"},"hunks":[{"sourceLine":1,"sourceSpan":1,"destinationLine":1,"destinationSpan":2,"segments":[{"type":"CONTEXT","lines":[{"source":1,"destination":1,"line":"fn main() {}"}]},{"type":"ADDED","lines":[{"source":2,"destination":2,"line":"let s = \"text\"; // note"}]}]}]}]}"#;

/// Answers a diff view's reads of that pull request.
pub fn bitbucket(request: FetchRequest, _: Option<&PersonalToken>, _: &Cancel) -> FetchOutcome {
    let body = if request.path.ends_with("/changes") {
        CHANGES
    } else if request.path.contains("/diff/") {
        DIFF
    } else {
        PR
    };
    FetchOutcome::response(200, body)
}
