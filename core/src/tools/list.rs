//! `list_pull_requests`: a repository's pull requests, or without a repository the current user's
//! dashboard or reviewer inbox, one line each.
//!
//! Requests: one page (1); the inbox adds Bitbucket's count of it in parallel (2), the only pull request
//! total Bitbucket reports — no repository-wide count exists, so a page's size is never called a total.
//! [reference "Pull requests": spec]

use serde_json::{Map, Value, json};

use super::object;
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::{Page, RawPage};
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_requests::{PullRequestsRead, in_scope, keeps, query};
use crate::text::short;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `list_pull_requests`, for the catalogue: reads only; its kind is the list view.
pub const SPEC: ToolSpec = ToolSpec {
    name: "list_pull_requests",
    title: "List pull requests",
    description: "Pull requests of a repository, or without one your dashboard or reviewer inbox; paged.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::RepositoryOrNarrowed,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::READ,
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
            "role": {"type": "string", "enum": ["AUTHOR", "REVIEWER", "PARTICIPANT"], "description": "Where user (you, without repo) has this role"},
            "user": {"type": "string", "description": "Username for role (repo only)"},
            "text": {"type": "string", "description": "Text in title or description (repo only)"},
            "draft": {"type": "boolean", "description": "Drafts only, or none (repo only)"},
            "order": {"type": "string", "enum": ["NEWEST", "OLDEST"], "default": "NEWEST", "description": "By last update"},
            "inbox": {"type": "boolean", "description": "Your reviewer inbox (no repo)"},
            "start": super::start(),
            "limit": super::limit(25, 100)
        }),
        &[],
    )
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    match query(args) {
        Ok(q) => Step::wait(
            List {
                // The dashboard and the inbox span repositories: narrowed to the admin's scope. A
                // repository's own list was checked against it before the call started.
                narrow: call.scope.filter(|_| q.across).cloned(),
                project: q.project,
                repo: q.repo,
                scope: q.scope,
                across: q.across,
                source_filter: q.source_filter,
                page: None,
                count: None,
            },
            q.first,
        ),
        Err(e) => Step::Done(ToolResult::error(e)),
    }
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
    /// The admin's scope the answer is narrowed to.
    narrow: Option<crate::scope::Scope>,
}

impl Plan for List {
    type Read = PullRequestsRead;

    fn on(
        &mut self,
        read: PullRequestsRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, PullRequestsRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match read {
            PullRequestsRead::Page => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => self.page = Some(p.decode()),
                Err(e) => return Some(ToolResult::error(e)),
            },
            PullRequestsRead::Count => {
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
        let kept: Vec<&PullRequest> =
            page.values.iter().filter(|pr| keeps(self.source_filter.as_deref(), pr)).collect();
        let shown: Vec<&PullRequest> = kept.iter().copied().filter(|pr| in_scope(self.narrow.as_ref(), pr)).collect();
        let mut head = format!("{}: {} shown (start={})", self.scope, shown.len(), page.start);
        if self.source_filter.is_some() {
            head.push_str(&format!(", {} of this page's {} match source_branch", shown.len(), page.values.len()));
        }
        head.push('.');
        lines.push(head);
        if let Some(scope) = &self.narrow {
            lines.push(scope.narrowed(kept.len() - shown.len()));
        }
        // The inbox's count spans every repository: a narrowed list leaves it out.
        if let Some(c) = self.count.as_ref().filter(|_| self.narrow.is_none()) {
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

/// One pull request on one line: `#id STATE source→target author reviews[, merge] · title`.
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
    let reviews = crate::text::review::tally(pr);
    let state = pr.state.as_deref().unwrap_or("?");
    // What get_pull_request says of it too: the merge commit of a merged one, the conflicts of an open one.
    let merge = match pr.merge_commit() {
        Some(c) => format!(", merge commit {}", c.short()),
        None if state == "OPEN" && pr.conflicted() => ", merge: conflicted".to_owned(),
        None => String::new(),
    };
    (format!("{id} {state}{draft} {src}→{tgt} by {author}, {reviews}{merge} · {t}"), cut)
}
