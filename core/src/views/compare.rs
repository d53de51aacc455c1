//! Two refs' diff (`show` kind `compare`): what `from_ref` has that `to_ref` lacks, laid out as Bitbucket's
//! "Compare" page shows it on its Diff tab — source → destination, the file tree, one file's highlighted
//! hunks at a time in full screen — with no comments (a compare has none) and no pull request actions.
//!
//! Why a kind of its own rather than `diff` with two refs (the words): a kind shows ONE data tool's
//! answer and takes that tool's arguments, checked against its schema, and is offered only while that tool
//! is exposed. Two refs are `compare_refs`' arguments (`from_ref`, `to_ref`), not `get_pull_request_diff`'s,
//! so `diff` could not check them nor follow `compare_refs`' exposure. The page draws both kinds with the
//! one diff module (`assets/view/diff.js`; `compare.js` only registers it), and the core builds both with
//! the one plan ([`super::diff`]): the same file list, hunks, highlighting jobs, deadline and cache.
//!
//! Requests: the first page of `GET …/compare/changes?from&to` and of `GET …/compare/commits?from&to` (its Commits
//! tab; 2, in one round), then `GET …/compare/diff/{path}?from&to&contextLines=3` for the first
//! [`super::diff::MAX_FILES`] files (what compare_refs reads, from
//! [`crate::reads::compare`]). A ref that does not resolve is Bitbucket's 404, said with what the refs must
//! be, in the view's error state. `max_bytes`, `start`, `limit` and `paths` shape the model's answer; the view
//! carries Bitbucket's first page of changed files, as the pull request's diff does.
//!
//! Refreshed as a pull request's diff is, on the quiet cadence: two refs change only when a branch moves.

use serde_json::{Map, Value, json};

use super::Header;
use super::diff::{self, COMMITS_LIMIT, DiffRead, FILES_LIMIT, Of, RefsKind};
use crate::args::string;
use crate::plan::Step;
use crate::reads::compare::Refs;
use crate::reads::pull_request;
use crate::tool::Call;

/// The kind's name.
pub const KIND: &str = "compare";
/// Lines of context around each change (what compare_refs asks for).
pub const CONTEXT_LINES: u64 = 3;
/// How the diff plan asks for this kind's files and words it.
static WORDS: RefsKind = RefsKind { context_lines: CONTEXT_LINES, part, text };

/// Starts a view of what `from_ref` has that `to_ref` lacks in `project`/`repo`.
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo) = (string(args, "project").unwrap_or(""), string(args, "repo").unwrap_or(""));
    let refs = Refs {
        project: project.to_owned(),
        repo: repo.to_owned(),
        from: string(args, "from_ref").unwrap_or("").to_owned(),
        to: string(args, "to_ref").unwrap_or("").to_owned(),
    };
    // The Commits tab's first page beside the files: one round, as before.
    let first = vec![
        (DiffRead::Changes, refs.changes_request(Some(0), FILES_LIMIT)),
        (DiffRead::Commits, refs.commits_request(Some(0), COMMITS_LIMIT)),
    ];
    let (project, repo) = (refs.project.clone(), refs.repo.clone());
    diff::open(Header::new(KIND, args, call), call, project, repo, Of::Refs(refs, &WORDS), first)
}

/// A ref as Bitbucket's compare page names it: a branch or tag by its short name, anything else as given.
fn short(name: &str) -> &str {
    name.strip_prefix("refs/heads/").or_else(|| name.strip_prefix("refs/tags/")).unwrap_or(name)
}

/// What a ref names, as far as its spelling says: `branch` (`refs/heads/…`), `tag` (`refs/tags/…`), `commit`
/// (a full hash, 40 hex digits), else `ref` (a short name, which Bitbucket resolves as a branch first, then a
/// tag; an abbreviated hash may be a branch's name too): the page words the chip with it, so a screen reader
/// does not hear a tag called a branch.
fn ref_type(name: &str) -> &'static str {
    if name.starts_with("refs/heads/") {
        "branch"
    } else if name.starts_with("refs/tags/") {
        "tag"
    } else if name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        "commit"
    } else {
        "ref"
    }
}

/// The view's own part of `diff` (VIEW_DATA.md, kind "compare"): the two refs as the pull request's source and
/// target are drawn, and Bitbucket's compare page; the files and diffs are added by the diff plan.
fn part(refs: &Refs, base: Option<&str>) -> Map<String, Value> {
    let end = |name: &str| {
        json!({"branch": short(name), "ref": ref_type(name), "repo": format!("{}/{}", refs.project, refs.repo),
               "url": base.map(|b| pull_request::branch_url(b, &refs.project, &refs.repo, name))})
    };
    let mut part = Map::new();
    part.insert("compare".into(), json!({"from": refs.from, "to": refs.to, "url": base.map(|b| refs.page_url(b))}));
    part.insert("project".into(), json!(refs.project));
    part.insert("repo".into(), json!(refs.repo));
    part.insert("source".into(), end(&refs.from));
    part.insert("target".into(), end(&refs.to));
    part
}

/// What the model is told the person sees: `what` is the plan's count of files and lines.
fn text(refs: &Refs, what: &str) -> String {
    let one = |s: &str| crate::text::short(&crate::text::one_line(s), 100);
    format!(
        "Showing the diff of {} against {} in {}/{} to the person: {what}.",
        one(&refs.from),
        one(&refs.to),
        refs.project,
        refs.repo
    )
}

#[cfg(test)]
mod tests {
    use super::ref_type;

    #[test]
    fn a_ref_is_called_what_its_spelling_says_it_is() {
        assert_eq!(ref_type("refs/heads/feature/x"), "branch");
        assert_eq!(ref_type("refs/tags/v1.0"), "tag");
        assert_eq!(ref_type("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"), "commit");
        // A short name may be a branch or a tag (Bitbucket tries a branch first); so may an abbreviated hash,
        // or anything hex-looking that is not a full one.
        for name in ["main", "v1.0", "feature/x", "0a1b2c3", "0a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "cafe-babe"] {
            assert_eq!(ref_type(name), "ref", "{name}");
        }
    }
}
