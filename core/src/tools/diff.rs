//! `get_pull_request_diff`: Bitbucket's change list, and unified diff text with line numbers for the
//! paths asked or, without paths, for the first files within the budget.
//!
//! Requests: the change list (1), then one diff per file shown (at most [`AUTO_FILES`] without `paths`);
//! with `paths` the change list and the diffs go out together. The diff endpoint is not paged and the
//! server caps it (`truncated`). [reference "Diff and changes": spec, rec] Per-file and total budgets
//! are kept by cutting at a line, with a marker that says how to get the rest.
//!
//! `since` (a commit, or `last_review`: the calling person's `lastReviewedCommit` among the pull request's
//! participants, the person named by `X-AUSERNAME`) reads the pull request first, then the changes and
//! diffs of the commits after it up to the source branch's tip (`changeScope=RANGE&sinceId&untilId`,
//! [`crate::reads::diff::Range`]): what a reviewer has not seen yet.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::Page;
use crate::bitbucket::model::{Change, Diff, PullRequest};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest, Share};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::diff::{self, Range, Since};
use crate::reads::pull_request;
use crate::text::diff::{change_line, render_file};
use crate::text::{one_line, short, short_commit};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `get_pull_request_diff`, for the catalogue: reads only.
pub const SPEC: ToolSpec = ToolSpec {
    name: "get_pull_request_diff",
    title: "Get pull request diff",
    description: "A pull request's changed files and line-numbered diff within max_bytes; cuts say how to get the rest.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::READ,
    start,
};

/// Files diffed without `paths`.
pub const AUTO_FILES: usize = 5;
/// The default total budget in bytes.
pub const DEFAULT_BUDGET: u64 = 20_000;
/// The smallest budget a file gets.
const MIN_FILE_BUDGET: usize = 1_500;

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 20, "description": "Files to diff (default: the first that fit)"},
               "context_lines": {"type": "integer", "minimum": 0, "maximum": 100, "default": 3, "description": "Context lines around changes"},
               "max_bytes": {"type": "integer", "minimum": 2000, "maximum": 100000, "default": DEFAULT_BUDGET, "description": "Answer budget"},
               "since": {"type": "string", "description": "Only changes after this commit, or last_review (yours)"},
               "start": super::start(),
               "limit": super::limit(100, 500)}),
        &["project", "repo", "pr_id"],
    )
}

/// The reads of `get_pull_request_diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DiffRead {
    /// The pull request, for `since`: its source tip and the caller's last reviewed commit.
    PullRequest,
    /// The page of changed files.
    Changes,
    /// The diff of the file at this index of the files asked for.
    File(usize),
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let paths: Vec<String> = args
        .get("paths")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let start = number(args, "start").unwrap_or(0);
    let limit = number(args, "limit").unwrap_or(100);
    let context = number(args, "context_lines").unwrap_or(3);
    let budget = number(args, "max_bytes").unwrap_or(DEFAULT_BUDGET) as usize;
    let since = string(args, "since").map(str::to_owned);
    let d = DiffTool {
        project,
        repo,
        id,
        context,
        budget,
        asked: !paths.is_empty(),
        files: paths.into_iter().map(|p| (p, None)).collect(),
        changes: None,
        page: (start, limit),
        since,
        range: None,
        note: None,
        you: call.bitbucket_user.map(str::to_owned),
    };
    if d.since.is_some() {
        // The range needs the pull request's source tip (and, for a last review, its participants) first.
        let request = pull_request::request(&d.project, &d.repo, d.id);
        return Step::wait(d, vec![(DiffRead::PullRequest, request)]);
    }
    let first = d.first_reads();
    Step::wait(d, first)
}

#[derive(Debug)]
struct DiffTool {
    project: String,
    repo: String,
    id: u64,
    context: u64,
    budget: usize,
    asked: bool,
    files: Vec<(String, Option<Result<Diff, BitbucketError>>)>,
    changes: Option<Result<Page<Change>, BitbucketError>>,
    /// The change list's `start` and `limit`.
    page: (u64, u64),
    /// `since` as given: a commit, or [`LAST_REVIEW`].
    since: Option<String>,
    /// The commits whose changes are read, once `since` is resolved.
    range: Option<Range>,
    /// What the answer says of the range before the changes.
    note: Option<String>,
    /// Whom bb acts as, when known before the pull request names them.
    you: Option<String>,
}

impl DiffTool {
    /// The change list, and the diffs of the paths asked for.
    fn first_reads(&self) -> Vec<(DiffRead, FetchRequest)> {
        let (start, limit) = self.page;
        let changes = diff::changes_request(&self.project, &self.repo, self.id, start, limit, self.range.as_ref());
        let mut first = vec![(DiffRead::Changes, changes)];
        for (i, (p, _)) in self.files.iter().enumerate() {
            first.push((DiffRead::File(i), self.diff_request(p)));
        }
        first
    }

    fn diff_request(&self, path: &str) -> FetchRequest {
        // No file's text can take more than the whole answer: what lies past it is skipped as it is read.
        diff::file_request(&self.project, &self.repo, self.id, path, Some(self.context), self.range.as_ref())
            .keeping(Share { lines: self.budget, bytes: self.budget })
    }

    /// Resolves `since` against the pull request: the range to read, or the whole answer when there is
    /// nothing to read.
    fn resolve(&mut self, outcome: &FetchOutcome) -> Result<(), ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let pr = errors::json::<PullRequest>(outcome, about, None).map_err(ToolResult::error)?;
        if let FetchOutcome::Response(r) = outcome
            && let Some(user) = &r.user
        {
            self.you = Some(user.clone());
        }
        match diff::since(&pr, self.since.as_deref().unwrap_or(""), self.you.as_deref()) {
            Since::Range { range, yours } => {
                let commit = short_commit(Some(&range.since)).to_owned();
                self.note = Some(if yours {
                    format!("since your last review, commit {commit}")
                } else {
                    format!("since commit {}", short(&one_line(&commit), 40))
                });
                self.range = Some(range);
                Ok(())
            }
            Since::NoReview { you } => {
                self.note = Some(format!(
                    "all changes: Bitbucket has no review of PR #{} on record for {you} (it keeps the last reviewed commit from 8.9.18 and 9.1 on)",
                    self.id
                ));
                Ok(())
            }
            Since::Nothing { commit } => Err(ToolResult::text(format!(
                "PR #{} in {}/{}: nothing changed since commit {}: it is the source branch's latest commit.",
                self.id,
                self.project,
                self.repo,
                short_commit(Some(&commit))
            ))),
            Since::Unknown(e) => Err(ToolResult::error(e)),
        }
    }
}

impl Plan for DiffTool {
    type Read = DiffRead;

    fn on(&mut self, read: DiffRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, DiffRead>) -> Option<ToolResult> {
        if read == DiffRead::PullRequest {
            if let Err(done) = self.resolve(&outcome) {
                return Some(done);
            }
            for (read, request) in self.first_reads() {
                f.fetch(read, request);
            }
            return None;
        }
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        if let DiffRead::File(i) = read {
            if let Some(entry) = self.files.get_mut(i) {
                entry.1 = Some(diff::file_within(&outcome, about, Share { lines: self.budget, bytes: self.budget }));
            }
        } else if read == DiffRead::Changes {
            let changes = diff::changes(&outcome, about);
            match &changes {
                Err(e) if !self.asked => return Some(ToolResult::error(e.clone())),
                Ok(page) if !self.asked => {
                    let chosen: Vec<String> =
                        page.values.iter().filter_map(Change::named_path).take(AUTO_FILES).map(str::to_owned).collect();
                    for p in chosen {
                        f.fetch(DiffRead::File(self.files.len()), self.diff_request(&p));
                        self.files.push((p, None));
                    }
                }
                _ => {}
            }
            self.changes = Some(changes);
        }
        if f.waiting() > 0 {
            return None;
        }
        Some(ToolResult::text(self.render()))
    }
}

impl DiffTool {
    fn render(&self) -> String {
        let mut out = String::new();
        let mut head = format!("PR #{} in {}/{}", self.id, self.project, self.repo);
        if let Some(note) = &self.note {
            head.push_str(&format!(" ({note})"));
        }
        let mut changed: Vec<&Change> = Vec::new();
        match &self.changes {
            Some(Ok(page)) => {
                changed = page.values.iter().collect();
                head.push_str(&format!(": {} changed file(s) shown (start={}).", changed.len(), page.start));
                out.push_str(&head);
                out.push('\n');
                let list_budget = self.budget / 4;
                let mut listed = 0;
                for c in &changed {
                    let line = change_line(c);
                    if out.len() + line.len() + 1 > list_budget {
                        break;
                    }
                    out.push_str(&line);
                    out.push('\n');
                    listed += 1;
                }
                if listed < changed.len() {
                    out.push_str(&format!(
                        "[file list cut: {listed} of {} shown; ask with start={} for the rest]\n",
                        changed.len(),
                        page.start + listed as u64
                    ));
                }
                out.push_str(&page.more_line("changed files"));
                out.push('\n');
            }
            Some(Err(e)) => {
                out.push_str(&format!("{head}.\nChange list: not read — {e}\n"));
            }
            None => {}
        }
        let files: Vec<&(String, Option<Result<Diff, BitbucketError>>)> = self.files.iter().collect();
        let per_file = (self.budget / files.len().max(1)).max(MIN_FILE_BUDGET).min(self.budget);
        let mut not_shown: Vec<&str> = Vec::new();
        for (path, diff) in &files {
            let left = self.budget.saturating_sub(out.len() + 200);
            if left < 300 {
                not_shown.push(path);
                continue;
            }
            let room = per_file.min(left);
            match diff {
                Some(Ok(d)) => out.push_str(&render_file(path, d, room)),
                Some(Err(e)) => out.push_str(&format!("== {}: diff not read — {e}\n", crate::text::echo(path))),
                None => out.push_str(&format!("== {}: no answer\n", crate::text::echo(path))),
            }
        }
        if !self.asked && changed.len() > files.len() {
            let more: Vec<&str> =
                changed.iter().filter_map(|c| c.named_path()).filter(|p| !files.iter().any(|(f, _)| f == p)).collect();
            out.push_str(&format!(
                "[diffs of {} more file(s) not shown; ask with paths=[…], e.g. \"{}\"]\n",
                more.len(),
                more.first().copied().unwrap_or("")
            ));
        }
        if !not_shown.is_empty() {
            out.push_str(&format!(
                "[budget of {} bytes reached; not shown: {} — ask with paths=[…] or a larger max_bytes]\n",
                self.budget,
                not_shown.join(", ")
            ));
        }
        let out = out.trim_end();
        if out.len() <= self.budget {
            return out.to_owned();
        }
        // A last guard: whatever the lines above added, the answer stays within its budget.
        let marker = "\n[answer cut at its budget; ask with fewer paths or a larger max_bytes]";
        let mut end = self.budget.saturating_sub(marker.len());
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}{marker}", &out[..end])
    }
}
