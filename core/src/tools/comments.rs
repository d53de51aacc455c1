//! `list_pr_comments`, `list_pr_tasks` and `add_pr_comment`: a pull request's conversation.
//!
//! Comments are where Bitbucket has them: in the pull request's activity, newest first, each thread once
//! (a thread can surface in several activities: de-duplicated by comment id). Tasks are comments with
//! `severity: BLOCKER` (7.0+); before 7.0 a task was an entry of its comment's `tasks` array, shown in its thread
//! and listed as a task of the old kind. Orphaned comments are outdated. [reference "Activity", "Pull requests": spec, rec]
//!
//! Requests: list_pr_comments 1 (a page of activities); list_pr_tasks 2 (the pull request, for Bitbucket's
//! task counts, and a page of activities, in parallel); add_pr_comment 1 (a POST, never retried).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{flag, number, string};
use crate::bitbucket::model::{Activity, Anchor, Comment, OldTask, PullRequest};
use crate::bitbucket::{Page, RawPage};
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::{files, pull_request, review, server};
use crate::text::{cap, one_line, when};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;
use crate::writes::comments::Place;

/// Comment characters shown before a cut.
pub const COMMENT_CHARS: usize = 2000;

/// `list_pr_comments`.
pub const LIST_SPEC: ToolSpec = ToolSpec {
    name: "list_pr_comments",
    title: "List pull request comments",
    description: "A pull request's comment threads with replies, tasks and file/line anchors; paged by activity.",
    input_schema: list_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::READ,
    start: start_list,
};

/// `list_pr_tasks`.
pub const TASKS_SPEC: ToolSpec = ToolSpec {
    name: "list_pr_tasks",
    title: "List pull request tasks",
    description: "A pull request's tasks (open ones block merging) with Bitbucket's open/resolved counts.",
    input_schema: tasks_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::READ,
    start: start_tasks,
};

/// `add_pr_comment`.
pub const ADD_SPEC: ToolSpec = ToolSpec {
    name: "add_pr_comment",
    title: "Add pull request comment",
    description: "Comment (Markdown) on a pull request, a file (path) or lines (path, line, from_line), as a reply or task; as someone's reviewer, draft it (pending).",
    input_schema: add_schema,
    access: Access::Write,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::ADD,
    start: start_add,
};

fn list_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "drafts": {"type": "boolean", "description": "Only your drafts"},
               "start": super::start(), "limit": super::limit(50, 500)}),
        &["project", "repo", "pr_id"],
    )
}

fn tasks_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "state": {"type": "string", "enum": ["OPEN", "RESOLVED", "ALL"], "default": "ALL", "description": "Task state"},
               "start": super::start(), "limit": super::limit(100, 500)}),
        &["project", "repo", "pr_id"],
    )
}

fn add_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "text": {"type": "string", "minLength": 1, "description": "The comment"},
               "reply_to": {"type": "integer", "minimum": 1, "description": "Comment id to reply to"},
               "path": {"type": "string", "description": "File to comment on"},
               "line": {"type": "integer", "minimum": 1, "description": "Line in path (new number; old for REMOVED)"},
               "line_type": {"type": "string", "enum": ["ADDED", "REMOVED", "CONTEXT"], "default": "ADDED", "description": "Kind of line"},
               "from_line": {"type": "integer", "minimum": 1, "description": "First line, for several"},
               "task": {"type": "boolean", "description": "Make it a task"},
               "pending": {"type": "boolean", "description": "Draft: only you see it until submit_pr_review"}}),
        &["project", "repo", "pr_id", "text"],
    )
}

fn activities_request(
    project: &str,
    repo: &str,
    id: u64,
    args: &Map<String, Value>,
    default_limit: u64,
) -> FetchRequest {
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(default_limit));
    pull_request::activity_request(project, repo, id, start, limit)
}

fn start_list(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let drafts = flag(args, "drafts") == Some(true);
    let first = if drafts {
        vec![(ListRead::Page, review::request(&project, &repo, id))]
    } else {
        vec![(ListRead::Page, activities_request(&project, &repo, id, args, 50))]
    };
    Step::wait(Comments { project, repo, id, drafts, body: None, suggestions: Vec::new() }, first)
}

/// The reads of `list_pr_comments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListRead {
    /// A page of activities, or the pending review.
    Page,
    /// The lines a suggestion would replace: the i-th of [`Comments::suggestions`].
    Lines(usize),
}

/// What list_pr_comments read: the activity's threads, already rendered, or the pending review's drafts.
#[derive(Debug)]
enum Body {
    Threads(String),
    Drafts(Vec<Comment>),
}

/// Suggestions whose replaced lines are read, at most, in one answer (one small read each, in parallel).
const SUGGESTION_READS: usize = 5;

/// A suggestion of a comment shown, and the lines it would replace once read.
#[derive(Debug)]
struct Wanted {
    comment: u64,
    index: usize,
    lines: (u64, u64),
    path: String,
    old: Option<Vec<String>>,
    new: Vec<String>,
}

#[derive(Debug)]
struct Comments {
    project: String,
    repo: String,
    id: u64,
    drafts: bool,
    /// What was read, until the suggestions' lines come back.
    body: Option<Body>,
    suggestions: Vec<Wanted>,
}

impl Plan for Comments {
    type Read = ListRead;

    fn on(&mut self, read: ListRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, ListRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            ListRead::Page => {
                let raw = match errors::json::<RawPage>(&outcome, about, None) {
                    Ok(p) => p,
                    Err(e) if self.drafts && review::absent(&outcome) => {
                        return Some(ToolResult::error(format!(
                            "{e} (A server before 7.7 keeps no drafts, and has no pending review to list.)"
                        )));
                    }
                    Err(e) => return Some(ToolResult::error(e)),
                };
                let roots: Vec<Comment> = if self.drafts {
                    review::drafts(&raw)
                } else {
                    let page = raw.decode::<Activity>();
                    let text = render_threads(self.id, &self.project, &self.repo, &page);
                    // The activity's threads, for their suggestions: each root once.
                    let mut seen = BTreeSet::new();
                    let roots = page
                        .values
                        .iter()
                        .filter_map(|a| {
                            let mut c = a.comment.clone()?;
                            if c.anchor.is_none() {
                                c.anchor = a.comment_anchor.clone();
                            }
                            c.id.filter(|i| seen.insert(*i)).map(|_| c)
                        })
                        .collect();
                    self.body = Some(Body::Threads(text));
                    roots
                };
                for c in &roots {
                    let Some(a) = c.anchor.as_ref() else { continue };
                    let (Some(path), Some(lines), Some(at)) = (a.path.as_ref(), a.lines(), a.to_hash.as_ref()) else {
                        continue;
                    };
                    if a.line_type.as_deref() == Some("REMOVED") {
                        continue;
                    }
                    for (index, new) in
                        crate::markdown::suggestions(c.text.as_deref().unwrap_or("")).into_iter().enumerate()
                    {
                        if self.suggestions.len() < SUGGESTION_READS {
                            let place = files::Place {
                                project: self.project.clone(),
                                repo: self.repo.clone(),
                                path: path.clone(),
                                at: Some(at.clone()),
                            };
                            f.fetch(
                                ListRead::Lines(self.suggestions.len()),
                                place.browse_request(lines.0 - 1, lines.1 - lines.0 + 1),
                            );
                            self.suggestions.push(Wanted {
                                comment: c.id.unwrap_or(0),
                                index,
                                lines,
                                path: path.clone(),
                                old: None,
                                new,
                            });
                        }
                    }
                }
                if self.drafts {
                    self.body = Some(Body::Drafts(roots));
                }
            }
            ListRead::Lines(i) => {
                let place = files::Place::default();
                if let (Ok(files::Browsed::Lines(l)), Some(w)) =
                    (files::browsed(&outcome, &place), self.suggestions.get_mut(i))
                {
                    let want = usize::try_from(w.lines.1 - w.lines.0 + 1).unwrap_or(usize::MAX);
                    if l.lines.len() == want {
                        w.old = Some(l.lines);
                    }
                }
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let mut out = match self.body.take()? {
            Body::Drafts(drafts) => {
                let mut out = vec![format!(
                    "Your pending review of PR #{} in {}/{}: {} draft(s), seen only by you until submit_pr_review publishes them (discard_pr_review deletes them).",
                    self.id,
                    self.project,
                    self.repo,
                    review::count(&drafts)
                )];
                for c in &drafts {
                    let mut block = Vec::new();
                    thread(c, c.anchor.as_ref(), "", 0, &mut block);
                    out.push(block.join("\n"));
                }
                out
            }
            Body::Threads(text) => text.lines().map(str::to_owned).collect(),
        };
        // The suggestions go under the threads, before the line that says whether more exist.
        let more = if self.drafts { None } else { out.pop() };
        for w in &self.suggestions {
            out.push(suggestion_lines(w));
        }
        out.extend(more);
        Some(ToolResult::text(out.join("\n")))
    }
}

/// A suggestion as the lines it would replace and the lines it proposes.
fn suggestion_lines(w: &Wanted) -> String {
    let range = if w.lines.0 == w.lines.1 {
        format!("line {}", w.lines.0)
    } else {
        format!("lines {}–{}", w.lines.0, w.lines.1)
    };
    let mut out = vec![format!("Suggestion {} of #{} replaces {range} of {}:", w.index, w.comment, one_line(&w.path))];
    match &w.old {
        Some(old) => out.extend(old.iter().map(|l| format!("- {}", one_line(l)))),
        None => out.push("  (the lines it replaces were not read)".to_owned()),
    }
    out.extend(w.new.iter().map(|l| format!("+ {}", one_line(l))));
    if w.new.is_empty() {
        out.push("  (it deletes them)".to_owned());
    }
    out.join("\n")
}

/// Every comment id in a thread.
fn ids(c: &Comment, into: &mut BTreeSet<u64>) {
    if let Some(id) = c.id {
        into.insert(id);
    }
    for r in &c.comments {
        ids(r, into);
    }
}

fn render_threads(id: u64, project: &str, repo: &str, page: &Page<Activity>) -> String {
    // Threads whose root was added or edited on this page; a reply activity is shown inside its thread.
    let mut in_threads = BTreeSet::new();
    for a in &page.values {
        if let (Some(c), Some("ADDED" | "EDITED")) = (&a.comment, a.comment_action.as_deref()) {
            ids(c, &mut in_threads);
        }
    }
    let mut seen = BTreeSet::new();
    let mut blocks = Vec::new();
    for a in page.values.iter().filter(|a| a.action.as_deref() == Some("COMMENTED")) {
        let Some(c) = &a.comment else { continue };
        let Some(cid) = c.id else { continue };
        let action = a.comment_action.as_deref().unwrap_or("ADDED");
        if seen.contains(&cid) {
            continue;
        }
        if action == "DELETED" {
            let who = a.user.as_ref().map(|u| u.handle()).unwrap_or("?");
            blocks.push(format!("#{cid} deleted by {who} {}", when(a.created_date)));
            seen.insert(cid);
            continue;
        }
        if action == "REPLIED" && in_threads.contains(&cid) {
            continue;
        }
        let anchor = a.comment_anchor.as_ref().or(c.anchor.as_ref());
        let prefix = if action == "REPLIED" { "reply " } else { "" };
        let mut block = Vec::new();
        thread(c, anchor, prefix, 0, &mut block);
        ids(c, &mut seen);
        blocks.push(block.join("\n"));
    }
    let mut out = vec![format!(
        "Comments of PR #{id} in {project}/{repo}, from activities start={} (newest first): {} thread(s) shown.",
        page.start,
        blocks.len()
    )];
    out.extend(blocks);
    out.push(page.more_line("activities"));
    out.join("\n")
}

fn where_(anchor: Option<&Anchor>) -> String {
    let Some(a) = anchor else { return String::new() };
    let Some(path) = a.path.as_deref() else { return String::new() };
    let mut s = format!(" on {}", one_line(path));
    if let Some((first, l)) = a.lines() {
        let kind = match a.line_type.as_deref() {
            Some("ADDED") => "added",
            Some("REMOVED") => "removed",
            _ => "context",
        };
        // A removed line, or a line on the left of a side-by-side diff, is numbered as the old file numbers it:
        // said, so "line 16" is not read as the new file's line 16.
        let old = if a.line_type.as_deref() == Some("REMOVED") || a.file_type.as_deref() == Some("FROM") {
            " of the old file"
        } else {
            ""
        };
        if first < l {
            s.push_str(&format!(":{first}–{l}{old} ({kind} lines)"));
        } else {
            s.push_str(&format!(":{l}{old} ({kind} line)"));
        }
    }
    if a.orphaned == Some(true) {
        s.push_str(" · outdated");
    }
    s
}

fn marks(c: &Comment) -> String {
    let mut m = String::new();
    if c.is_pending() {
        m.push_str(" · pending (a draft only its author sees)");
    }
    if c.is_task() {
        let state = if c.state.as_deref() == Some("RESOLVED") { "resolved" } else { "open" };
        m.push_str(&format!(" · task, {state}"));
    }
    if c.thread_resolved == Some(true) {
        m.push_str(" · thread resolved");
    }
    m
}

fn thread(c: &Comment, anchor: Option<&Anchor>, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let indent = "  ".repeat(depth);
    let arrow = if depth > 0 { "↳ " } else { "" };
    let who = c.author.as_ref().map(|u| u.label()).unwrap_or_else(|| "?".into());
    out.push(format!(
        "{indent}{arrow}{prefix}#{} {} {}{}{}:",
        c.id.unwrap_or(0),
        one_line(&who),
        when(c.created_date),
        if depth == 0 { where_(anchor) } else { String::new() },
        marks(c)
    ));
    out.push(cap(c.text.as_deref().unwrap_or(""), COMMENT_CHARS, "comment", ""));
    for t in &c.tasks {
        out.push(format!("{indent}  {}", old_task_line(t)));
    }
    for r in &c.comments {
        thread(r, None, "", depth + 1, out);
    }
}

/// A task of the old kind (before 7.0), on one line inside its comment's thread.
fn old_task_line(t: &OldTask) -> String {
    let who = t.author.as_ref().map(|u| u.handle()).unwrap_or("?");
    format!(
        "☐ task #{} of the old kind (before 7.0; update_pr_comment cannot change it), {} by {who} {}: {}",
        t.id.unwrap_or(0),
        if t.resolved() { "resolved" } else { "open" },
        when(t.created_date),
        one_line(&cap(t.text.as_deref().unwrap_or(""), COMMENT_CHARS, "task", ""))
    )
}

fn start_tasks(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let state = string(args, "state").unwrap_or("ALL").to_owned();
    let first = vec![
        (TasksRead::PullRequest, pull_request::request(&project, &repo, id)),
        (TasksRead::Activities, activities_request(&project, &repo, id, args, 100)),
    ];
    Step::wait(Tasks { project, repo, id, state, counts: None, page: None }, first)
}

/// The reads of `list_pr_tasks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TasksRead {
    /// The pull request, for Bitbucket's task counts.
    PullRequest,
    /// The activities that carry the tasks.
    Activities,
}

#[derive(Debug)]
struct Tasks {
    project: String,
    repo: String,
    id: u64,
    state: String,
    counts: Option<String>,
    page: Option<Page<Activity>>,
}

impl Plan for Tasks {
    type Read = TasksRead;

    fn on(&mut self, read: TasksRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, TasksRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        if read == TasksRead::PullRequest {
            self.counts = Some(match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => match pr.counts() {
                    Some(c) => format!(
                        "Bitbucket counts {} open and {} resolved task(s) on PR #{}.",
                        c.open_tasks, c.resolved_tasks, self.id
                    ),
                    None => format!("Bitbucket's task counts on PR #{}: not reported.", self.id),
                },
                Err(e) => format!("Bitbucket's task counts: not read — {e}"),
            });
        } else {
            match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => self.page = Some(p.decode()),
                Err(e) => return Some(ToolResult::error(e)),
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let page = self.page.as_ref()?;
        let mut tasks: Vec<(&Comment, Option<&Anchor>)> = Vec::new();
        let mut old: Vec<(&OldTask, u64, Option<&Anchor>)> = Vec::new();
        let (mut seen, mut seen_old) = (BTreeSet::new(), BTreeSet::new());
        for a in &page.values {
            if let Some(c) = &a.comment {
                let anchor = a.comment_anchor.as_ref().or(c.anchor.as_ref());
                collect_tasks(c, anchor, &mut seen, &mut tasks);
                collect_old_tasks(c, anchor, &mut seen_old, &mut old);
            }
        }
        let want = |c: &Comment| match self.state.as_str() {
            "OPEN" => c.state.as_deref() != Some("RESOLVED"),
            "RESOLVED" => c.state.as_deref() == Some("RESOLVED"),
            _ => true,
        };
        let shown: Vec<String> = tasks
            .iter()
            .filter(|(c, _)| want(c))
            .map(|(c, anchor)| {
                let state = if c.state.as_deref() == Some("RESOLVED") { "resolved" } else { "open" };
                let who = c.author.as_ref().map(|u| u.handle()).unwrap_or("?");
                format!(
                    "Task #{} ({state}) by {who}{}: {}",
                    c.id.unwrap_or(0),
                    where_(*anchor),
                    cap(c.text.as_deref().unwrap_or(""), COMMENT_CHARS, "task", "")
                )
            })
            .chain(old.iter().filter(|(t, ..)| match self.state.as_str() {
                "OPEN" => !t.resolved(),
                "RESOLVED" => t.resolved(),
                _ => true,
            }).map(|(t, comment, anchor)| {
                let state = if t.resolved() { "resolved" } else { "open" };
                let who = t.author.as_ref().map(|u| u.handle()).unwrap_or("?");
                format!(
                    "Task #{} ({state}; of the old kind, before 7.0: on comment #{comment}, which update_pr_comment cannot change) by {who}{}: {}",
                    t.id.unwrap_or(0),
                    where_(*anchor),
                    cap(t.text.as_deref().unwrap_or(""), COMMENT_CHARS, "task", "")
                )
            }))
            .collect();
        let mut out = vec![self.counts.clone().unwrap_or_default()];
        out.push(format!(
            "{} {} task(s) shown, from activities start={}.",
            shown.len(),
            self.state.to_lowercase().replace("all", "open and resolved"),
            page.start
        ));
        out.extend(shown);
        out.push(page.more_line("activities (with possibly more tasks)"));
        Some(ToolResult::text(out.join("\n")))
    }
}

fn collect_tasks<'a>(
    c: &'a Comment,
    anchor: Option<&'a Anchor>,
    seen: &mut BTreeSet<u64>,
    into: &mut Vec<(&'a Comment, Option<&'a Anchor>)>,
) {
    if let Some(id) = c.id
        && c.is_task()
        && seen.insert(id)
    {
        into.push((c, anchor));
    }
    for r in &c.comments {
        collect_tasks(r, anchor, seen, into);
    }
}

fn start_add(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let text = string(args, "text").unwrap_or("");
    let task = flag(args, "task") == Some(true);
    let pending = flag(args, "pending") == Some(true);
    let from = number(args, "from_line");
    let (at, place) = match (number(args, "reply_to"), string(args, "path"), number(args, "line")) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Step::Done(ToolResult::error("A reply sits in its thread: give reply_to without path or line."));
        }
        (None, None, Some(_)) => return Step::Done(ToolResult::error("line needs path: give the file too.")),
        (Some(parent), None, None) => (Place::Reply(parent), format!(" in reply to #{parent}")),
        (None, Some(p), None) => (Place::File(p), format!(" on {}", crate::text::echo(p))),
        (None, Some(p), Some(l)) => {
            let line_type = string(args, "line_type").unwrap_or("ADDED");
            let lines = match from {
                Some(f) if f > l => {
                    return Step::Done(ToolResult::error(format!(
                        "from_line ({f}) is after line ({l}): a comment on several lines runs from from_line to line."
                    )));
                }
                Some(f) if f < l => format!("{f}–{l}"),
                _ => l.to_string(),
            };
            let old = if line_type == "REMOVED" { " of the old file" } else { "" };
            let place = format!(
                " on {}:{lines}{old} ({} line{})",
                crate::text::echo(p),
                line_type.to_lowercase(),
                if lines.contains('–') { "s" } else { "" }
            );
            (Place::Line { path: p, line: l, line_type, from }, place)
        }
        (None, None, None) => (Place::PullRequest, String::new()),
    };
    if from.is_some() && number(args, "line").is_none() {
        return Step::Done(ToolResult::error(
            "from_line needs path and line: the comment runs from from_line to line.",
        ));
    }
    let request = writes::comments::add(&project, &repo, id, text, at, task, pending);
    let kind = match (pending, task) {
        (true, true) => "draft task",
        (true, false) => "draft comment",
        (false, true) => "task",
        (false, false) => "comment",
    };
    // A server before 7.7 ignores `state: PENDING` and publishes: for a draft its version is read before anything
    // is sent, and the POST waits in the plan.
    let (first, post) =
        if pending { ((AddRead::Version, server::request()), Some(request)) } else { ((AddRead::Post, request), None) };
    Step::wait(AddComment { project, repo, id, kind, place, pending, post }, vec![first])
}

/// The reads and the write of `add_pr_comment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddRead {
    /// The server's version, before a draft.
    Version,
    /// The comment posted.
    Post,
}

#[derive(Debug)]
struct AddComment {
    project: String,
    repo: String,
    id: u64,
    kind: &'static str,
    place: String,
    pending: bool,
    /// A draft's POST, until the version allows it.
    post: Option<FetchRequest>,
}

impl Plan for AddComment {
    type Read = AddRead;

    fn on(&mut self, read: AddRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, AddRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        if read == AddRead::Version {
            let nothing = "Nothing was posted.";
            let (major, minor) = review::SINCE;
            return match server::version(&outcome, about) {
                Ok(v) if v.at_least(major, minor) == Some(true) => {
                    f.fetch(AddRead::Post, self.post.take()?);
                    None
                }
                Ok(v) if v.at_least(major, minor) == Some(false) => Some(ToolResult::error(format!(
                    "This Bitbucket is {}; drafts (pending comments) came in {major}.{minor}, and an older server would publish the comment at once. {nothing} Ask the person whether to post it as a published comment (pending: false).",
                    v.text
                ))),
                Ok(v) => Some(ToolResult::error(format!(
                    "bb cannot tell whether this Bitbucket (version \"{}\") keeps drafts (7.7+); an older server would publish the comment at once. {nothing}",
                    one_line(&v.text)
                ))),
                Err(e) => Some(ToolResult::error(format!(
                    "bb could not read Bitbucket's version, which a draft needs (7.7+; an older server would publish it): {e} {nothing}"
                ))),
            };
        }
        let effect = format!("the {} was added", self.kind);
        let write = Write { effect: &effect, check: "look at list_pr_comments before adding it again" };
        Some(match errors::json::<Comment>(&outcome, about, Some(write)) {
            Ok(c) => {
                let id = c.id.map(|i| i.to_string()).unwrap_or_else(|| "?".into());
                let mut text = format!(
                    "Added {} #{id} to PR #{} in {}/{}{}.",
                    self.kind, self.id, self.project, self.repo, self.place
                );
                if self.pending && !c.is_pending() {
                    text = format!(
                        "Bitbucket published comment #{id} on PR #{} in {}/{}{} instead of keeping it as a draft (its state is {}).",
                        self.id,
                        self.project,
                        self.repo,
                        self.place,
                        c.state.as_deref().unwrap_or("not said")
                    );
                } else if self.pending {
                    text.push_str(" Only you see it until the review is published (submit_pr_review) or discarded (discard_pr_review).");
                }
                ToolResult::text(text)
            }
            Err(e) => ToolResult::error(e),
        })
    }
}

/// The tasks of the old kind (before 7.0) in a thread, each once, with the comment that holds it.
fn collect_old_tasks<'a>(
    c: &'a Comment,
    anchor: Option<&'a Anchor>,
    seen: &mut BTreeSet<u64>,
    into: &mut Vec<(&'a OldTask, u64, Option<&'a Anchor>)>,
) {
    for t in &c.tasks {
        if t.id.is_none_or(|id| seen.insert(id)) {
            into.push((t, c.id.unwrap_or(0), anchor));
        }
    }
    for r in &c.comments {
        collect_old_tasks(r, anchor, seen, into);
    }
}
