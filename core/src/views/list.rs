//! The pull request list (`show` kind `pull_requests`): rows as Bitbucket's pull request list, with
//! the arguments and requests of `list_pull_requests` ([`crate::tools::list::query`]), then the
//! avatars not cached yet. A list that shows fewer than exist says so; only the reviewer inbox has a
//! real total (its count endpoint), so only it carries one.

use serde_json::{Map, Value, json};

use super::Header;
use super::avatars::{AvatarStage, People};
use crate::bitbucket::errors::{self, Subject};
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::{Page, RawPage};
use crate::catalogue::CallContext;
use crate::plan::{FetchOutcome, PlanContext, Step, ToolResult};
use crate::tools::flow::{self, Fetcher, Flow};
use crate::tools::list::{COUNT, PAGE, keeps, query};

/// Starts a list view.
pub fn start(args: &Map<String, Value>, cx: &mut PlanContext, call: &CallContext<'_>) -> Step {
    let q = match query(args) {
        Ok(q) => q,
        Err(e) => return Step::Done(ToolResult::error(e)),
    };
    let list = ListView {
        header: Header::new("pull_requests", args, call),
        avatars: AvatarStage::new(call.avatars.clone()),
        project: q.project,
        repo: q.repo,
        title: q.scope,
        source_filter: q.source_filter,
        page: None,
        total: None,
        built: None,
        missing: Vec::new(),
        people: People::default(),
    };
    flow::start(list, cx, q.first)
}

#[derive(Debug)]
struct ListView {
    header: Header,
    avatars: AvatarStage,
    project: String,
    repo: String,
    title: String,
    source_filter: Option<String>,
    page: Option<Page<PullRequest>>,
    total: Option<u64>,
    /// The view's data, built once the page has been read.
    built: Option<Value>,
    missing: Vec<String>,
    people: People,
}

impl Flow for ListView {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match slot {
            PAGE => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => self.page = Some(p.decode()),
                Err(e) => return Some(ToolResult::error(e)),
            },
            COUNT => match errors::json::<Value>(&outcome, about, None) {
                Ok(v) => self.total = v.get("count").and_then(Value::as_u64),
                Err(e) => self.missing.push(format!("Inbox count: not read — {e}")),
            },
            _ => {
                self.avatars.on(slot, &outcome);
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        self.page.as_ref()?;
        // Built once; building it notes everyone it mentions, whose avatars come last.
        if self.built.is_none() {
            self.built = Some(self.view());
        }
        if self.avatars.ask(&self.people, f) {
            return None;
        }
        let view = self.built.take()?;
        let shown = view["shown"].as_u64().unwrap_or(0);
        let more = if view["more"] == Value::Bool(true) { ", more exist" } else { "" };
        let text = format!("Showing {} to the person: {shown} shown{more}.", self.title);
        let users = self.avatars.users(&self.people);
        Some(self.header.result(text, users, self.missing.clone(), ("list", view)))
    }
}

impl ListView {
    fn view(&mut self) -> Value {
        let Some(page) = &self.page else { return Value::Null };
        let people = &mut self.people;
        let mut items = Vec::new();
        for pr in page.values.iter().filter(|pr| keeps(self.source_filter.as_deref(), pr)) {
            let author = pr.author.as_ref().map(|a| people.note(&a.user));
            let reviewers: Vec<Value> = pr
                .reviewers
                .iter()
                .map(|r| json!({"user": people.note(&r.user), "status": r.status.as_deref().unwrap_or("UNAPPROVED")}))
                .collect();
            let repo = pr.to_ref.as_ref().and_then(|r| r.repository.as_ref());
            let props = pr.properties.clone().unwrap_or_default();
            items.push(json!({
                "id": pr.id,
                "title": pr.title.as_deref().unwrap_or(""),
                "url": pr.links.as_ref().and_then(|l| l.href()),
                "project": repo.and_then(|r| r.project.as_ref()).and_then(|p| p.key.clone()),
                "repo": repo.and_then(|r| r.slug.clone()),
                "state": pr.state.as_deref().unwrap_or("OPEN"),
                "draft": pr.draft == Some(true),
                "author": author,
                "source": {"branch": pr.from_ref.as_ref().map(|r| r.name())},
                "target": {"branch": pr.to_ref.as_ref().map(|r| r.name())},
                "reviewers": reviewers,
                "counts": {"comments": props.comment_count, "openTasks": props.open_task_count, "resolvedTasks": props.resolved_task_count},
                "updated": pr.updated_date,
            }));
        }
        let shown = items.len();
        json!({"title": self.title, "items": items, "shown": shown, "more": page.next.is_some(),
               "next": page.next, "total": self.total})
    }
}
