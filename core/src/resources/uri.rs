//! `bitbucket://` URIs read strictly: what a URI names (a tool and its arguments), and the URI a tool's
//! arguments name. A URI is decoded once, segment by segment: `%` is followed by two hex digits, the
//! bytes are UTF-8, and no segment of a name or a path decodes to `/`, `.` or `..`, holds a control
//! character, or is empty; a ref (`at`, a commit) may hold `/` but never `..`. A query has `at` alone,
//! once; a fragment is refused. Anything else names nothing.
//!
//! ```text
//!   bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}           get_pull_request
//!                                               pull-requests/{id}/diff      get_pull_request_diff
//!                                               pull-requests/{id}/threads   list_pr_comments
//!                                               files/{+path}{?at}           get_file
//!                                               commits/{id}                 get_commit
//! ```

use serde_json::{Map, Value};

/// Where every bb resource URI but the view page begins.
pub(crate) const PREFIX: &str = "bitbucket://projects/";

/// The longest URI read; anything longer names nothing. [assumed: a repository path of 4,096 bytes,
/// percent-encoded, with room for the rest]
const LONGEST: usize = 16 * 1024;

/// What one URI names: which resource, in which repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    /// The project key, decoded.
    pub(crate) project: String,
    /// The repository slug, decoded.
    pub(crate) repo: String,
    /// What in the repository.
    pub(crate) what: What,
}

/// A resource in a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum What {
    /// `pull-requests/{id}`.
    PullRequest(u64),
    /// `pull-requests/{id}/diff`.
    Diff(u64),
    /// `pull-requests/{id}/threads`.
    Threads(u64),
    /// `files/{+path}{?at}`: the path's segments, decoded, and the ref.
    File { path: String, at: Option<String> },
    /// `commits/{id}`.
    Commit(String),
}

impl Named {
    /// The tool that reads it and the arguments it is called with.
    pub(crate) fn call(&self) -> (&'static str, Map<String, Value>) {
        let mut args = Map::new();
        args.insert("project".into(), Value::from(self.project.as_str()));
        args.insert("repo".into(), Value::from(self.repo.as_str()));
        let tool = match &self.what {
            What::PullRequest(id) | What::Diff(id) | What::Threads(id) => {
                args.insert("pr_id".into(), Value::from(*id));
                match self.what {
                    What::PullRequest(_) => "get_pull_request",
                    What::Diff(_) => "get_pull_request_diff",
                    _ => "list_pr_comments",
                }
            }
            What::File { path, at } => {
                args.insert("path".into(), Value::from(path.as_str()));
                if let Some(at) = at {
                    args.insert("at".into(), Value::from(at.as_str()));
                }
                "get_file"
            }
            What::Commit(id) => {
                args.insert("commit_id".into(), Value::from(id.as_str()));
                "get_commit"
            }
        };
        (tool, args)
    }

    /// What a tool's checked arguments read, when the tool reads one of these resources.
    pub(crate) fn of_call(tool: &str, args: &Map<String, Value>) -> Option<Named> {
        let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
        let id = || args.get("pr_id").and_then(Value::as_u64);
        let what = match tool {
            "get_pull_request" => What::PullRequest(id()?),
            "get_pull_request_diff" => What::Diff(id()?),
            "list_pr_comments" => What::Threads(id()?),
            "get_file" => What::File { path: s("path")?, at: s("at") },
            "get_commit" => What::Commit(s("commit_id")?),
            _ => return None,
        };
        Some(Named { project: s("project")?, repo: s("repo")?, what })
    }

    /// The URI, each segment percent-encoded as RFC 6570 `{var}` (and `{+path}`'s slashes kept).
    pub(crate) fn uri(&self) -> String {
        let base = format!("{PREFIX}{}/repos/{}/", encode(&self.project), encode(&self.repo));
        match &self.what {
            What::PullRequest(id) => format!("{base}pull-requests/{id}"),
            What::Diff(id) => format!("{base}pull-requests/{id}/diff"),
            What::Threads(id) => format!("{base}pull-requests/{id}/threads"),
            What::File { path, at } => {
                let path: Vec<String> = path.split('/').map(encode).collect();
                match at {
                    Some(at) => format!("{base}files/{}?at={}", path.join("/"), encode(at)),
                    None => format!("{base}files/{}", path.join("/")),
                }
            }
            What::Commit(id) => format!("{base}commits/{}", encode(id)),
        }
    }
}

/// Reads a URI strictly; `None` when it names nothing bb has.
pub(crate) fn parse(uri: &str) -> Option<Named> {
    if uri.len() > LONGEST || uri.contains('#') {
        return None;
    }
    let rest = uri.strip_prefix(PREFIX)?;
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    let mut segments = path.split('/');
    let project = segment(segments.next()?)?;
    if segments.next()? != "repos" {
        return None;
    }
    let repo = segment(segments.next()?)?;
    let kind = segments.next()?;
    let rest: Vec<&str> = segments.collect();
    let what = match (kind, rest.as_slice()) {
        ("pull-requests", [id]) if query.is_none() => What::PullRequest(pr_id(id)?),
        ("pull-requests", [id, "diff"]) if query.is_none() => What::Diff(pr_id(id)?),
        ("pull-requests", [id, "threads"]) if query.is_none() => What::Threads(pr_id(id)?),
        ("commits", [id]) if query.is_none() => What::Commit(reference(id)?),
        ("files", parts) if !parts.is_empty() => {
            let parts: Option<Vec<String>> = parts.iter().map(|p| segment(p)).collect();
            let at = match query {
                None => None,
                Some(q) => Some(reference(q.strip_prefix("at=").filter(|v| !v.contains(['&', '=']))?)?),
            };
            What::File { path: parts?.join("/"), at }
        }
        _ => return None,
    };
    Some(Named { project, repo, what })
}

/// A pull request id: digits only, at least 1, at most 18 of them (no sign, no leading zero).
fn pr_id(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 18 || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// One segment decoded: none empty, `.`, `..`, or holding `/` or a control character once decoded (a
/// file may be named `a?b`, written `a%3Fb`).
fn segment(s: &str) -> Option<String> {
    let decoded = decode(s)?;
    let bad =
        decoded.is_empty() || decoded == "." || decoded == ".." || decoded.chars().any(|c| c.is_control() || c == '/');
    (!bad).then_some(decoded)
}

/// A branch, tag or commit decoded (`%2F` is a branch's slash): none empty, holding `..` (which git
/// refuses in a ref), `?`, `#` or a control character.
fn reference(s: &str) -> Option<String> {
    let decoded = decode(s)?;
    let bad = decoded.is_empty()
        || decoded.contains("..")
        || decoded.chars().any(|c| c.is_control() || matches!(c, '?' | '#'));
    (!bad).then_some(decoded)
}

/// Percent-decoding, strictly: `%` and two hex digits, UTF-8 bytes.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: u8| (b as char).to_digit(16);
                let hi = hex(*bytes.get(i + 1)?)?;
                let lo = hex(*bytes.get(i + 2)?)?;
                out.push(u8::try_from(hi * 16 + lo).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes all but RFC 3986's unreserved characters.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const BASE: &str = "bitbucket://projects/BB/repos/api/";

    #[test]
    fn each_template_names_its_tool_and_arguments() {
        let call = |rest: &str| parse(&format!("{BASE}{rest}")).map(|n| n.call());
        let (tool, args) = call("pull-requests/12").unwrap();
        assert_eq!(
            (tool, &args["pr_id"], &args["project"], &args["repo"]),
            ("get_pull_request", &12.into(), &"BB".into(), &"api".into())
        );
        assert_eq!(call("pull-requests/12/diff").unwrap().0, "get_pull_request_diff");
        assert_eq!(call("pull-requests/12/threads").unwrap().0, "list_pr_comments");
        let (tool, args) = call("files/src/main%20x.rs?at=release%2F1.0").unwrap();
        assert_eq!((tool, &args["path"], &args["at"]), ("get_file", &"src/main x.rs".into(), &"release/1.0".into()));
        let (tool, args) = call("commits/abc123").unwrap();
        assert_eq!((tool, &args["commit_id"]), ("get_commit", &"abc123".into()));
    }

    #[test]
    fn a_uri_made_from_a_calls_arguments_reads_back_to_them() {
        for rest in [
            "pull-requests/1",
            "pull-requests/99/diff",
            "pull-requests/7/threads",
            "files/a/b%20c/d.rs",
            "files/README.md?at=feature%2Fx",
            "commits/0123abc",
        ] {
            let uri = format!("{BASE}{rest}");
            let named = parse(&uri).unwrap();
            let (tool, args) = named.call();
            assert_eq!(Named::of_call(tool, &args).unwrap().uri(), uri);
        }
    }

    #[test]
    fn anything_else_names_nothing() {
        for bad in [
            "bitbucket://projects/BB/repos/api/pull-requests/0",
            "bitbucket://projects/BB/repos/api/pull-requests/01",
            "bitbucket://projects/BB/repos/api/pull-requests/-1",
            "bitbucket://projects/BB/repos/api/pull-requests/1234567890123456789",
            "bitbucket://projects/BB/repos/api/pull-requests/1/",
            "bitbucket://projects/BB/repos/api/pull-requests/1?at=x",
            "bitbucket://projects/BB/repos/api/pull-requests/1#frag",
            "bitbucket://projects/BB/repos/api/pull-requests/1/merge",
            "bitbucket://projects/BB/repos/api/files/",
            "bitbucket://projects/BB/repos/api/files/a/../b",
            "bitbucket://projects/BB/repos/api/files/a/%2E%2E/b",
            "bitbucket://projects/BB/repos/api/files/a//b",
            "bitbucket://projects/BB/repos/api/files/a%2Fb",
            "bitbucket://projects/BB/repos/api/files/a%0Ab",
            "bitbucket://projects/BB/repos/api/files/a%zz",
            "bitbucket://projects/BB/repos/api/files/a%C3",
            "bitbucket://projects/BB/repos/api/files/a?ref=main",
            "bitbucket://projects/BB/repos/api/files/a?at=",
            "bitbucket://projects/BB/repos/api/files/a?at=x&at=y",
            "bitbucket://projects/../repos/api/pull-requests/1",
            "bitbucket://projects//repos/api/pull-requests/1",
            "bitbucket://projects/BB/repo/api/pull-requests/1",
            "bitbucket://projects/BB/repos/api",
            "bitbucket://projects/BB/repos/api/commits/",
            "bitbucket://projects/BB/repos/api/commits/a/b",
            "bitbucket://projects/BB/repos/api/commits/a%2F..%2Fb",
            "bitbucket://projects/BB/repos/api/files/a?at=x%00",
            "https://projects/BB/repos/api/pull-requests/1",
            "ui://bb/view",
            "",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    fn config() -> proptest::test_runner::Config {
        let seed = std::env::var("BB_PROPTEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xbb);
        proptest::test_runner::Config {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        }
    }

    proptest::proptest! {
        #![proptest_config(config())]

        #[test]
        fn any_text_after_the_prefix_is_read_without_panic_and_never_names_a_dot_step(
            rest in "(%[0-9A-Fa-f]{2}|%|[a-zA-Z0-9./?=&#%~ -]|\\PC){0,80}"
        ) {
            for uri in [format!("{PREFIX}{rest}"), format!("{BASE}{rest}"), format!("{BASE}files/{rest}")] {
                if let Some(named) = parse(&uri) {
                    let (_, args) = named.call();
                    for v in args.values().filter_map(serde_json::Value::as_str) {
                        proptest::prop_assert!(!v.split('/').any(|s| s == ".." || s.is_empty()), "{uri} gave {v}");
                        proptest::prop_assert!(!v.chars().any(char::is_control), "{uri}");
                    }
                }
            }
        }

        #[test]
        fn any_names_a_call_gives_read_back_to_the_same_call(
            project in "[A-Z~_0-9]{1,8}",
            repo in "[a-z0-9._ -]{1,12}",
            path in proptest::collection::vec("[a-zA-Z0-9_ %+&=?#-]{1,8}", 1..4),
            at in proptest::option::of("[a-z0-9/_-]{1,10}"),
            id in 1u64..1_000_000,
        ) {
            proptest::prop_assume!(repo != "." && repo != ".." && at.as_deref().is_none_or(|a| !a.contains("..")));
            for what in [What::PullRequest(id), What::Diff(id), What::File { path: path.join("/"), at: at.clone() }] {
                let named = Named { project: project.clone(), repo: repo.clone(), what };
                proptest::prop_assert_eq!(parse(&named.uri()), Some(named.clone()));
            }
        }
    }
}
