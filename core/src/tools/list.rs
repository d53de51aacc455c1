//! `list_pull_requests`: a repository's pull requests, or without a repository the current user's
//! dashboard or reviewer inbox, one line each.
//!
//! Requests: one page (1); the inbox adds Bitbucket's count of it in parallel (2), the only pull request
//! total Bitbucket reports — no repository-wide count exists, so a page's size is never called a total.
//! [reference "Pull requests": spec]

use serde_json::{Map, Value, json};

use super::flow::{self, Fetcher, Flow};
use super::text::short;
use super::{Decl, READ, b, n, object, paging, s};
use crate::bitbucket::errors::{self, Subject};
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::{Page, RawPage, repo_path};
use crate::catalogue::{Access, CallContext};
use crate::plan::{FetchOutcome, FetchRequest, PlanContext, Step, ToolResult};

/// The tool.
pub const SPEC: Decl = Decl {
    name: "list_pull_requests",
    title: "List pull requests",
    description: "Pull requests of a repository (project+repo), or without them your dashboard, or with inbox=true the open ones awaiting your review. One line each; paged.",
    schema,
    access: Access::Read,
    annotations: READ,
    start,
};

/// Title characters in a line.
pub const TITLE_CHARS: usize = 72;
/// Branch characters in a line.
const BRANCH_CHARS: usize = 30;

fn schema() -> Value {
    object(
        json!({
            "project": super::project(),
            "repo": super::repo(),
            "state": {"type": "string", "enum": ["OPEN", "MERGED", "DECLINED", "ALL"], "default": "OPEN", "description": "State"},
            "source_branch": {"type": "string", "description": "Only from this branch (repo only)"},
            "target_branch": {"type": "string", "description": "Only into this branch (repo only)"},
            "role": {"type": "string", "enum": ["AUTHOR", "REVIEWER", "PARTICIPANT"], "description": "Only where user (you, without repo) has this role"},
            "user": {"type": "string", "description": "Username for role (repo only)"},
            "text": {"type": "string", "description": "Only with this text in title or description (repo only)"},
            "draft": {"type": "boolean", "description": "Only drafts (true) or non-drafts (false) (repo only)"},
            "order": {"type": "string", "enum": ["NEWEST", "OLDEST"], "default": "NEWEST", "description": "By last update"},
            "inbox": {"type": "boolean", "description": "Your reviewer inbox (no repo)"},
            "start": super::start(),
            "limit": super::limit(25, 100)
        }),
        &[],
    )
}

/// The slot of the page of pull requests.
pub const PAGE: u32 = 0;
/// The slot of the inbox count.
pub const COUNT: u32 = 1;

/// What a list call asks Bitbucket, decided from its arguments (shared with the list view).
#[derive(Debug)]
pub struct ListQuery {
    /// The requests, filed under [`PAGE`] and [`COUNT`].
    pub first: Vec<(u32, FetchRequest)>,
    /// What is listed, in words ("Pull requests of BB/api, state OPEN, newest first").
    pub scope: String,
    /// Whether the list spans repositories (dashboard, inbox).
    pub across: bool,
    /// A source branch to keep, when the target branch was the server-side filter.
    pub source_filter: Option<String>,
    /// The project key, when one was given.
    pub project: String,
    /// The repository slug, when one was given.
    pub repo: String,
}

fn start(args: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    match query(args) {
        Ok(q) => flow::start(
            List {
                project: q.project,
                repo: q.repo,
                scope: q.scope,
                across: q.across,
                source_filter: q.source_filter,
                page: None,
                count: None,
            },
            cx,
            q.first,
        ),
        Err(e) => Step::Done(ToolResult::error(e)),
    }
}

/// The requests of a list call, or the sentence that says which arguments do not go together.
pub fn query(args: &Map<String, Value>) -> Result<ListQuery, String> {
    let (project, repo) = (s(args, "project"), s(args, "repo"));
    let start = n(args, "start").unwrap_or(0);
    let limit = n(args, "limit").unwrap_or(25);
    let state = s(args, "state").unwrap_or("OPEN").to_owned();
    let order = s(args, "order").unwrap_or("NEWEST").to_owned();
    let role = s(args, "role");
    let mut query = Vec::new();
    let mut scope;
    let mut first = Vec::new();
    let mut source_filter = None;
    match (project, repo) {
        (Some(p), Some(r)) => {
            if b(args, "inbox") == Some(true) {
                return Err("inbox lists across repositories: leave project and repo out.".into());
            }
            query.push(("state".into(), state.clone()));
            let (source, target) = (s(args, "source_branch"), s(args, "target_branch"));
            // `at` filters one ref, the direction says which end. [reference "Pull requests": spec]
            match (source, target) {
                (Some(src), None) => {
                    query.push(("direction".into(), "OUTGOING".into()));
                    query.push(("at".into(), full_ref(src)));
                }
                (_, Some(tgt)) => {
                    query.push(("direction".into(), "INCOMING".into()));
                    query.push(("at".into(), full_ref(tgt)));
                    source_filter = source.map(str::to_owned);
                }
                (None, None) => {}
            }
            if let Some(t) = s(args, "text") {
                query.push(("filterText".into(), t.to_owned()));
            }
            if let Some(d) = b(args, "draft") {
                query.push(("draft".into(), d.to_string()));
            }
            match (role, s(args, "user")) {
                (Some(_), None) => {
                    return Err("In a repository, role filters by user: give user (a username) with role.".into());
                }
                (role, Some(u)) => {
                    query.push(("username.1".into(), u.to_owned()));
                    if let Some(role) = role {
                        query.push(("role.1".into(), role.to_owned()));
                    }
                }
                (None, None) => {}
            }
            query.push(("order".into(), order.clone()));
            paging(&mut query, start, limit);
            scope = format!("Pull requests of {p}/{r}");
            first.push((PAGE, FetchRequest::get(format!("{}/pull-requests", repo_path(p, r)), query)));
        }
        (None, None) => {
            for arg in ["source_branch", "target_branch", "text", "draft", "user"] {
                if args.contains_key(arg) {
                    return Err(format!("{arg} needs a repository: give project and repo too."));
                }
            }
            if b(args, "inbox") == Some(true) {
                query.push(("role".into(), "reviewer".into()));
                paging(&mut query, start, limit);
                scope = "Your reviewer inbox".to_owned();
                first.push((PAGE, FetchRequest::get("/rest/api/latest/inbox/pull-requests", query)));
                first.push((
                    COUNT,
                    FetchRequest::get(
                        "/rest/api/latest/inbox/pull-requests/count",
                        vec![("role".into(), "reviewer".into())],
                    ),
                ));
            } else {
                query.push(("state".into(), state.clone()));
                if let Some(role) = role {
                    query.push(("role".into(), role.to_owned()));
                }
                query.push(("order".into(), order.clone()));
                paging(&mut query, start, limit);
                scope = "Your pull requests (dashboard)".to_owned();
                first.push((PAGE, FetchRequest::get("/rest/api/latest/dashboard/pull-requests", query)));
            }
        }
        _ => return Err("Give both project and repo, or neither (your dashboard).".into()),
    }
    if b(args, "inbox") != Some(true) {
        scope.push_str(&format!(", state {state}, {} first", if order == "OLDEST" { "oldest" } else { "newest" }));
    }
    Ok(ListQuery {
        first,
        scope,
        across: repo.is_none(),
        source_filter,
        project: project.unwrap_or("").to_owned(),
        repo: repo.unwrap_or("").to_owned(),
    })
}

/// Whether `pr` passes the source-branch filter (none keeps every pull request).
pub fn keeps(source_filter: Option<&str>, pr: &PullRequest) -> bool {
    source_filter.is_none_or(|want| {
        let from = pr.from_ref.as_ref();
        from.is_some_and(|r| r.display_id.as_deref() == Some(want) || r.id.as_deref() == Some(&full_ref(want)))
    })
}

fn full_ref(branch: &str) -> String {
    if branch.starts_with("refs/") { branch.to_owned() } else { format!("refs/heads/{branch}") }
}

#[derive(Debug)]
struct List {
    project: String,
    repo: String,
    scope: String,
    across: bool,
    source_filter: Option<String>,
    page: Option<Page<PullRequest>>,
    count: Option<String>,
}

impl Flow for List {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match slot {
            PAGE => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => self.page = Some(p.decode()),
                Err(e) => return Some(ToolResult::error(e)),
            },
            _ => {
                self.count = Some(match errors::json::<Value>(&outcome, about, None) {
                    Ok(v) => match v.get("count").and_then(Value::as_u64) {
                        Some(c) => format!("Bitbucket counts {c} pull request(s) awaiting your review."),
                        None => "Bitbucket's inbox count was not in its answer.".to_owned(),
                    },
                    Err(e) => format!("Bitbucket's inbox count: not read — {e}"),
                })
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let page = self.page.as_ref()?;
        Some(ToolResult::text(self.render(page)))
    }
}

impl List {
    fn render(&self, page: &Page<PullRequest>) -> String {
        let mut lines = Vec::new();
        let shown: Vec<&PullRequest> =
            page.values.iter().filter(|pr| keeps(self.source_filter.as_deref(), pr)).collect();
        let mut head = format!("{}: {} shown (start={})", self.scope, shown.len(), page.start);
        if self.source_filter.is_some() {
            head.push_str(&format!(", {} of this page's {} match source_branch", shown.len(), page.values.len()));
        }
        head.push('.');
        lines.push(head);
        if let Some(c) = &self.count {
            lines.push(c.clone());
        }
        let mut cut = false;
        for pr in &shown {
            let (line, was_cut) = pr_line(pr, self.across);
            cut |= was_cut;
            lines.push(line);
        }
        if cut {
            lines.push(format!("(… ends a title or branch cut at {TITLE_CHARS}/{BRANCH_CHARS} characters; get_pull_request shows it whole.)"));
        }
        lines.push(page.more_line("pull requests"));
        lines.join("\n")
    }
}

/// One pull request on one line: `#id STATE source→target author reviews · title`.
fn pr_line(pr: &PullRequest, across: bool) -> (String, bool) {
    let from = pr.from_ref.clone().unwrap_or_default();
    let to = pr.to_ref.clone().unwrap_or_default();
    let title = pr.title.as_deref().unwrap_or("");
    let src = short(from.name(), BRANCH_CHARS);
    let tgt = short(to.name(), BRANCH_CHARS);
    let t = short(title, TITLE_CHARS);
    let cut = t.chars().count() < title.chars().count() || src.len() < from.name().len() || tgt.len() < to.name().len();
    let id = match (across, to.repository.as_ref()) {
        (true, Some(r)) => format!("{}#{}", r.full_name(), pr.id.unwrap_or(0)),
        _ => format!("#{}", pr.id.unwrap_or(0)),
    };
    let draft = if pr.draft == Some(true) { " draft" } else { "" };
    let author = pr.author.as_ref().map(|a| a.user.handle()).unwrap_or("?");
    let total = pr.reviewers.len();
    let approved = pr.reviewers.iter().filter(|r| r.status.as_deref() == Some("APPROVED")).count();
    let changes = pr.reviewers.iter().filter(|r| r.status.as_deref() == Some("NEEDS_WORK")).count();
    let mut reviews = format!("{approved}/{total} approved");
    if changes > 0 {
        reviews.push_str(&format!(", {changes} requested changes"));
    }
    let state = pr.state.as_deref().unwrap_or("?");
    (format!("{id} {state}{draft} {src}→{tgt} by {author}, {reviews} · {t}"), cut)
}
