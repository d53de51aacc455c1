//! A repository's history: `list_commits` (of a branch or a range), `get_commit`, and `compare_refs` (the commits
//! and changed files between two refs, with the diff within budgets as `get_pull_request_diff` gives it).
//!
//! Requests: `list_commits` 1, `GET …/repos/{slug}/commits?until&since&path&start&limit` (newest first from
//! `until`, without what `since` reaches); `get_commit` 1, `GET …/commits/{commitId}`; `compare_refs`
//! `GET …/compare/commits?from&to&start&limit` and `GET …/compare/changes?from&to&start&limit` together (what
//! `from` has that `to` lacks), then one `GET …/compare/diff/{path}?from&to&contextLines` per file shown (the
//! first [`super::diff::AUTO_FILES`], or the paths asked, which go out with the first two)
//! [reference "Projects, repositories, branches, commits, tags, users": spec].
//!
//! The requests are [`crate::reads::refs`]'s and [`crate::reads::compare`]'s; the view of two refs (`show` kind
//! `compare`, a row in `views::KINDS` naming this tool and taking its arguments) reads the compare's too, and the
//! answer says `show` can draw it.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::Page;
use crate::bitbucket::model::{Change, Commit, Diff};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, Share};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::compare::Refs;
use crate::reads::diff;
use crate::reads::refs::{self, Commits};
use crate::text::diff::{change_line, render_file};
use crate::text::{cap, commit_line, one_line, short, short_commit, when};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// A whole commit message, as `get_commit` shows it.
const MESSAGE_CHARS: usize = 4_000;

/// `list_commits`.
pub const LIST_SPEC: ToolSpec = ToolSpec {
    name: "list_commits",
    title: "List commits",
    description: "Commits of a branch, or of the range since..until, newest first; paged.",
    input_schema: list_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start: start_list,
};

/// `get_commit`.
pub const GET_SPEC: ToolSpec = ToolSpec {
    name: "get_commit",
    title: "Get commit",
    description: "One commit: author, date, parents, whole message, changed files; with paths their diff within max_bytes.",
    input_schema: get_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start: start_get,
};

/// `compare_refs`.
pub const COMPARE_SPEC: ToolSpec = ToolSpec {
    name: "compare_refs",
    title: "Compare refs",
    description: "Commits and changed files from_ref has that to_ref lacks, with the diff within max_bytes.",
    input_schema: compare_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start: start_compare,
};

fn list_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "until": {"type": "string", "description": "Newest ref (default: default branch)"},
               "since": {"type": "string", "description": "Ref whose commits to leave out"},
               "path": {"type": "string", "description": "Only commits touching this path"},
               "start": super::start(), "limit": super::limit(25, 500)}),
        &["project", "repo"],
    )
}

fn get_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "commit_id": super::git_ref(),
               "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 20, "description": "Files to diff"},
               "max_bytes": {"type": "integer", "minimum": 2000, "maximum": 100000, "default": super::diff::DEFAULT_BUDGET, "description": "Answer budget"}}),
        &["project", "repo", "commit_id"],
    )
}

fn compare_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "from_ref": super::git_ref(), "to_ref": super::git_ref(),
               "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 20, "description": "Files to diff"},
               "max_bytes": {"type": "integer", "minimum": 2000, "maximum": 100000, "default": super::diff::DEFAULT_BUDGET, "description": "Answer budget"},
               "start": super::start(), "limit": super::limit(25, 500)}),
        &["project", "repo", "from_ref", "to_ref"],
    )
}

fn start_list(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let commits = Commits {
        until: string(args, "until"),
        since: string(args, "since"),
        path: string(args, "path"),
        start: Some(number(args, "start").unwrap_or(0)),
        limit: number(args, "limit").unwrap_or(25),
    };
    let request = refs::commits_request(&project, &repo, &commits);
    let range = match (string(args, "since"), string(args, "until")) {
        (Some(s), Some(u)) => format!("{}..{}", short(&one_line(s), 100), short(&one_line(u), 100)),
        (Some(s), None) => format!("{}..(default branch)", short(&one_line(s), 100)),
        (None, Some(u)) => short(&one_line(u), 100),
        (None, None) => "the default branch".to_owned(),
    };
    Step::wait(List { project, repo, range }, vec![((), request)])
}

#[derive(Debug)]
struct List {
    project: String,
    repo: String,
    range: String,
}

impl Plan for List {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let page = match refs::commits(&outcome, about) {
            Ok(p) => p,
            Err(e) => return Some(ToolResult::error(e)),
        };
        let mut out = vec![format!(
            "Commits of {} in {}/{}, from start={} (newest first): {} shown.",
            self.range,
            self.project,
            self.repo,
            page.start,
            page.values.len()
        )];
        out.extend(page.values.iter().map(commit_line));
        out.push(page.more_line("commits"));
        Some(ToolResult::text(out.join("\n")))
    }
}

fn start_get(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let id = string(args, "commit_id").unwrap_or("").to_owned();
    let paths: Vec<String> = args
        .get("paths")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let budget = number(args, "max_bytes").unwrap_or(super::diff::DEFAULT_BUDGET) as usize;
    let mut first = vec![
        (GetRead::Commit, refs::commit_request(&project, &repo, &id)),
        (GetRead::Changes, refs::commit_changes_request(&project, &repo, &id, 0, CHANGES_LIMIT)),
    ];
    let mut g = Get { project, repo, id, budget, commit: None, changes: None, files: Vec::new() };
    for (i, p) in paths.into_iter().enumerate() {
        let request = refs::commit_diff_request(&g.project, &g.repo, &g.id, &p, CONTEXT_LINES).keeping(share(budget));
        first.push((GetRead::File(i), request));
        g.files.push((p, None));
    }
    Step::wait(g, first)
}

/// The changed files `get_commit` lists: one page of Bitbucket's.
const CHANGES_LIMIT: u64 = 100;

/// The reads of `get_commit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GetRead {
    Commit,
    Changes,
    File(usize),
}

#[derive(Debug)]
struct Get {
    project: String,
    repo: String,
    id: String,
    budget: usize,
    commit: Option<Commit>,
    changes: Option<Result<Page<Change>, BitbucketError>>,
    files: Vec<(String, Option<Result<Diff, BitbucketError>>)>,
}

impl Plan for Get {
    type Read = GetRead;

    fn on(&mut self, read: GetRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, GetRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match read {
            GetRead::Commit => match errors::json::<Commit>(&outcome, about, None) {
                Ok(c) => self.commit = Some(c),
                Err(e) => return Some(ToolResult::error(e)),
            },
            GetRead::Changes => self.changes = Some(diff::changes(&outcome, about)),
            GetRead::File(i) => {
                if let Some(entry) = self.files.get_mut(i) {
                    entry.1 = Some(diff::file_within(&outcome, about, share(self.budget)));
                }
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        Some(ToolResult::text(self.render()))
    }
}

impl Get {
    fn render(&self) -> String {
        let c = self.commit.clone().unwrap_or_default();
        let who = match c.author.as_ref() {
            Some(a) => one_line(a.display_name.as_deref().or(a.name.as_deref()).unwrap_or(a.handle())),
            None => "?".to_owned(),
        };
        let parents: Vec<&str> =
            c.parents.iter().map(|p| short_commit(p.display_id.as_deref().or(p.id.as_deref()))).collect();
        let parents = match parents.len() {
            0 => "no parents (a root commit)".to_owned(),
            1 => format!("parent {}", parents[0]),
            n => format!("a merge of {n}: {}", parents.join(", ")),
        };
        let message = cap(c.message.as_deref().unwrap_or(""), MESSAGE_CHARS, "message", "the rest is in Bitbucket");
        let mut out = format!(
            "Commit {} in {}/{} by {who}, {}; {parents}.\n{message}\n",
            c.id.as_deref().unwrap_or("?"),
            self.project,
            self.repo,
            when(c.author_timestamp)
        );
        let against = if c.parents.len() > 1 { " (against its first parent)" } else { "" };
        match &self.changes {
            Some(Ok(page)) => {
                out.push_str(&format!("{} changed file(s){against}:\n", page.values.len()));
                let listed = list_changes(&mut out, &page.values, self.budget / 2);
                if listed < page.values.len() {
                    out.push_str(&format!("[file list cut: {listed} of {} shown]\n", page.values.len()));
                }
                out.push_str(&page.more_line("changed files"));
                out.push('\n');
                if self.files.is_empty() && !page.values.is_empty() {
                    out.push_str("Ask with paths=[…] for their diffs.\n");
                }
            }
            Some(Err(e)) => out.push_str(&format!("Changed files: not read — {e}\n")),
            None => {}
        }
        render_diffs(out, &self.files, self.budget)
    }
}

/// Lists `changes`, one line each, while `out` stays within `budget`; returns how many were listed.
fn list_changes(out: &mut String, changes: &[Change], budget: usize) -> usize {
    let mut listed = 0;
    for c in changes {
        let line = change_line(c);
        if out.len() + line.len() + 1 > budget {
            break;
        }
        out.push_str(&line);
        out.push('\n');
        listed += 1;
    }
    listed
}

/// `out` followed by each file's diff within `budget` bytes in all, what did not fit named, the whole cut
/// at the budget with a marker.
fn render_diffs(mut out: String, files: &[(String, Option<Result<Diff, BitbucketError>>)], budget: usize) -> String {
    let per_file = (budget / files.len().max(1)).max(1_500).min(budget);
    let mut not_shown = Vec::new();
    for (path, diff) in files {
        let left = budget.saturating_sub(out.len() + 200);
        if left < 300 {
            not_shown.push(path.as_str());
            continue;
        }
        match diff {
            Some(Ok(d)) => out.push_str(&render_file(path, d, per_file.min(left))),
            Some(Err(e)) => out.push_str(&format!("== {}: diff not read — {e}\n", crate::text::echo(path))),
            None => out.push_str(&format!("== {}: no answer\n", crate::text::echo(path))),
        }
    }
    if !not_shown.is_empty() {
        out.push_str(&format!(
            "[budget of {budget} bytes reached; not shown: {} — ask with paths=[…] or a larger max_bytes]\n",
            not_shown.join(", ")
        ));
    }
    let out = out.trim_end();
    if out.len() <= budget {
        return out.to_owned();
    }
    let marker = "\n[answer cut at its budget; ask with fewer paths or a larger max_bytes]";
    let mut end = budget.saturating_sub(marker.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{marker}", &out[..end])
}

/// The reads of `compare_refs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CompareRead {
    Commits,
    Changes,
    File(usize),
}

fn start_compare(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let from = string(args, "from_ref").unwrap_or("").to_owned();
    let to = string(args, "to_ref").unwrap_or("").to_owned();
    let paths: Vec<String> = args
        .get("paths")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(25));
    let budget = number(args, "max_bytes").unwrap_or(super::diff::DEFAULT_BUDGET) as usize;
    let refs = Refs { project, repo, from, to };
    let mut first = vec![
        (CompareRead::Commits, refs.commits_request(Some(start), limit)),
        (CompareRead::Changes, refs.changes_request(Some(start), limit)),
    ];
    // Said only where the person would see it: a client that draws views, a server that offers the kind.
    let drawable = call.client.renders_views && call.exposed.kind(COMPARE_KIND).is_some();
    let mut c = Compare { refs, budget, asked: !paths.is_empty(), drawable, ..Compare::default() };
    for (i, p) in paths.into_iter().enumerate() {
        first.push((CompareRead::File(i), c.refs.file_request(&p, CONTEXT_LINES).keeping(share(c.budget))));
        c.files.push((p, None));
    }
    Step::wait(c, first)
}

/// Lines of context around each change, as `git diff` gives them.
const CONTEXT_LINES: u64 = 3;
/// The view of `show` that draws this tool's answer for the person (a row of `views::KINDS`).
const COMPARE_KIND: &str = "compare";
/// The last line of an answer whose diff the person can be shown.
const SHOW_NOTE: &str = "show kind compare, with these arguments, draws this diff for the person.";

#[derive(Debug, Default)]
struct Compare {
    refs: Refs,
    budget: usize,
    asked: bool,
    drawable: bool,
    commits: Option<Result<Page<Commit>, BitbucketError>>,
    changes: Option<Result<Page<Change>, BitbucketError>>,
    files: Vec<(String, Option<Result<Diff, BitbucketError>>)>,
}

impl Plan for Compare {
    type Read = CompareRead;

    fn on(
        &mut self,
        read: CompareRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, CompareRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.refs.project, repo: &self.refs.repo, pr: None };
        match read {
            CompareRead::Commits => {
                let commits = refs::commits(&outcome, about);
                if let Err(e) = commits {
                    // Neither ref resolving, or no repository, is the whole answer.
                    return Some(ToolResult::error(self.refs.error(e, &outcome)));
                }
                self.commits = Some(commits);
            }
            CompareRead::Changes => {
                let changes = diff::changes(&outcome, about);
                if let (Ok(page), false) = (&changes, self.asked) {
                    let chosen: Vec<String> = page
                        .values
                        .iter()
                        .filter_map(Change::named_path)
                        .take(super::diff::AUTO_FILES)
                        .map(str::to_owned)
                        .collect();
                    for p in chosen {
                        f.fetch(
                            CompareRead::File(self.files.len()),
                            self.refs.file_request(&p, CONTEXT_LINES).keeping(share(self.budget)),
                        );
                        self.files.push((p, None));
                    }
                }
                self.changes = Some(changes);
            }
            CompareRead::File(i) => {
                let d = diff::file_within(&outcome, about, share(self.budget));
                if let Some(entry) = self.files.get_mut(i) {
                    entry.1 = Some(d);
                }
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        Some(ToolResult::text(self.render()))
    }
}

impl Compare {
    fn render(&self) -> String {
        if !self.drawable {
            return self.render_within(self.budget);
        }
        let mut out = self.render_within(self.budget.saturating_sub(SHOW_NOTE.len() + 1));
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(SHOW_NOTE);
        out
    }

    /// The answer in at most `budget` bytes.
    fn render_within(&self, budget: usize) -> String {
        let r = &self.refs;
        let (from, to) = (short(&one_line(&r.from), 100), short(&one_line(&r.to), 100));
        let mut out = format!("{from} against {to} in {}/{}", r.project, r.repo);
        match &self.commits {
            Some(Ok(page)) => {
                out.push_str(&format!(
                    ": {} commit(s) {from} has that {to} lacks, from start={} (newest first).\n",
                    page.values.len(),
                    page.start
                ));
                for c in &page.values {
                    out.push_str(&commit_line(c));
                    out.push('\n');
                }
                out.push_str(&page.more_line("commits"));
                out.push('\n');
            }
            _ => out.push_str(".\n"),
        }
        match &self.changes {
            Some(Ok(page)) => {
                out.push_str(&format!("{} changed file(s) shown:\n", page.values.len()));
                let listed = list_changes(&mut out, &page.values, budget / 2);
                if listed < page.values.len() {
                    out.push_str(&format!(
                        "[file list cut: {listed} of {} shown; ask with start={} for the rest]\n",
                        page.values.len(),
                        page.start + listed as u64
                    ));
                }
                out.push_str(&page.more_line("changed files"));
                out.push('\n');
            }
            Some(Err(e)) => out.push_str(&format!("Changed files: not read — {e}\n")),
            None => {}
        }
        render_diffs(out, &self.files, budget)
    }
}

/// What a file's diff keeps: no file's text can take more than the whole answer.
fn share(budget: usize) -> Share {
    Share { lines: budget, bytes: budget }
}
