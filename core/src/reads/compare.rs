//! What one ref has that another lacks: its commits, the files they change, and one file's diff. Bitbucket's
//! compare page reads the same three (its Commits and Diff tabs).
//!
//! Requests: `GET …/compare/commits?from&to&start&limit`, `GET …/compare/changes?from&to&start&limit` and
//! `GET …/compare/diff/{path}?from&to&contextLines` — `from` is the source (what it has), `to` the destination;
//! each a branch, tag or commit id; a first page may leave `start` out, as Bitbucket's create page does. A ref
//! that does not resolve is a 404 in Bitbucket's words. The answers
//! decode as a pull request's do ([`super::diff::changes`], [`super::diff::file`]); a compare has no comments.
//! [reference "Projects, repositories, branches, commits, tags, users": spec]

use crate::bitbucket::{file_path, repo_path, segment};
use crate::fetch::{FetchOutcome, FetchRequest};

/// Two refs of one repository: what `from` has that `to` lacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refs {
    /// The project key.
    pub project: String,
    /// The repository slug.
    pub repo: String,
    /// The source ref (what it has).
    pub from: String,
    /// The destination ref.
    pub to: String,
}

impl Refs {
    fn request(&self, what: &str, mut query: Vec<(String, String)>) -> FetchRequest {
        query.splice(0..0, [("from".into(), self.from.clone()), ("to".into(), self.to.clone())]);
        FetchRequest::get(format!("{}/compare/{what}", repo_path(&self.project, &self.repo)), query)
    }

    /// A page of the commits `from` has that `to` lacks, newest first.
    pub fn commits_request(&self, start: Option<u64>, limit: u64) -> FetchRequest {
        self.request("commits", super::page(start, limit))
    }

    /// A page of the files those commits change.
    pub fn changes_request(&self, start: Option<u64>, limit: u64) -> FetchRequest {
        self.request("changes", super::page(start, limit))
    }

    /// One file's diff with `context` lines around each change.
    pub fn file_request(&self, path: &str, context: u64) -> FetchRequest {
        self.request(&format!("diff/{}", file_path(path)), vec![("contextLines".into(), context.to_string())])
    }

    /// Bitbucket's sentence `e` for a failed read, with what the two refs must be when one did not resolve.
    pub fn error(&self, e: impl Into<String>, outcome: &FetchOutcome) -> String {
        let e = e.into();
        if ref_not_found(outcome) {
            format!(
                "{e} (from_ref and to_ref must each be a branch, tag or commit id in {}/{})",
                self.project, self.repo
            )
        } else {
            e
        }
    }

    /// Bitbucket's compare page for the two refs, its Diff tab. [inferred: the address Bitbucket's
    /// "Compare" page shows, `…/compare/diff?sourceBranch&targetBranch`]
    pub fn page_url(&self, base: &str) -> String {
        format!(
            "{}/compare/diff?sourceBranch={}&targetBranch={}",
            super::pull_request::repo_url(base, &self.project, &self.repo),
            segment(&self.from),
            segment(&self.to)
        )
    }
}

/// Whether Bitbucket answered 404 for a commit or ref it does not have (not for the repository or project).
pub fn ref_not_found(outcome: &FetchOutcome) -> bool {
    match outcome {
        FetchOutcome::Response(r) if r.status == 404 => {
            let body = String::from_utf8_lossy(&r.body);
            !body.contains("NoSuchRepositoryException") && !body.contains("NoSuchProjectException")
        }
        _ => false,
    }
}
