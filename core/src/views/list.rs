//! The pull request list (`show` kind `pull_requests`): rows as Bitbucket's pull request list, with
//! the arguments and requests of `list_pull_requests` ([`crate::reads::pull_requests`]), then the
//! avatars not cached yet. A list that shows fewer than exist says so; only the reviewer inbox has a
//! real total (its count endpoint), so only it carries one.

use serde_json::{Map, Value, json};

use super::Header;
use crate::bitbucket::errors::{self, Subject};
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::{Page, RawPage};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, AvatarStage, People};
use crate::reads::pull_requests::{PullRequestsRead, keeps, query};
use crate::tool::Call;

/// The reads of a list view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRead {
    /// The list's own reads, as `list_pull_requests` makes them.
    List(PullRequestsRead),
    /// An avatar of someone the list shows.
    Avatar(Avatar),
}

/// Starts a list view.
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let q = match query(args) {
        Ok(q) => q,
        Err(e) => return Step::Done(ToolResult::error(e)),
    };
    let list = ListView {
        header: Header::new("pull_requests", args, call),
        avatars: AvatarStage::default(),
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
    let first = q.first.into_iter().map(|(r, q)| (ListRead::List(r), q)).collect();
    Step::wait(list, first)
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

impl Plan for ListView {
    type Read = ListRead;

    fn on(&mut self, read: ListRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, ListRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match read {
            ListRead::List(PullRequestsRead::Page) => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => self.page = Some(p.decode()),
                Err(e) => return Some(ToolResult::error(e)),
            },
            ListRead::List(PullRequestsRead::Count) => match errors::json::<Value>(&outcome, about, None) {
                Ok(v) => self.total = v.get("count").and_then(Value::as_u64),
                Err(e) => self.missing.push(format!("Inbox count: not read — {e}")),
            },
            ListRead::Avatar(a) => self.avatars.on(a, &outcome, f),
        }
        if f.waiting() > 0 {
            return None;
        }
        self.page.as_ref()?;
        // Built once; building it notes everyone it mentions, whose avatars come last.
        if self.built.is_none() {
            self.built = Some(self.view());
        }
        if self.avatars.ask(&self.people, f, ListRead::Avatar) {
            return None;
        }
        let view = self.built.take()?;
        let shown = view["shown"].as_u64().unwrap_or(0);
        let more = if view["more"] == Value::Bool(true) { ", more exist" } else { "" };
        let text = format!("Showing {} to the person: {shown} shown{more}.", self.title);
        let now = f.now_ms();
        let users = self.people.to_value(f.avatars(), now);
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
