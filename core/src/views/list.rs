//! The pull request list (`show` kind `pull_requests`): rows as Bitbucket's pull request list, with
//! the arguments and requests of `list_pull_requests` ([`crate::reads::pull_requests`]), then the
//! avatars not cached yet. A list that shows fewer than exist says so; only the reviewer inbox has a
//! real total (its count endpoint), so only it carries one.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::Header;
use crate::bitbucket::model::{BuildStats, PullRequest};
use crate::bitbucket::{Page, RawPage};
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, AvatarStage, People};
use crate::reads::pull_request;
use crate::reads::pull_requests::{PullRequestsRead, build_stats_request, in_scope, keeps, query};
use crate::tool::Call;

/// The reads of a list view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRead {
    /// The list's own reads, as `list_pull_requests` makes them.
    List(PullRequestsRead),
    /// Bitbucket's build totals for the rows' source commits, in one request.
    BuildStats,
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
        // The dashboard and the inbox are narrowed to the admin's scope, as list_pull_requests narrows them.
        narrow: call.scope.filter(|_| q.across).cloned(),
        header: Header::new("pull_requests", args, call),
        avatars: AvatarStage::default(),
        project: q.project,
        repo: q.repo,
        title: q.scope,
        heading: q.heading,
        filter: q.filter,
        base_url: call.base_url.map(str::to_owned),
        source_filter: q.source_filter,
        stats: None,
        stats_asked: false,
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
    heading: &'static str,
    filter: Option<String>,
    base_url: Option<String>,
    source_filter: Option<String>,
    /// Build totals by commit, once read.
    stats: Option<BTreeMap<String, BuildStats>>,
    stats_asked: bool,
    page: Option<Page<PullRequest>>,
    total: Option<u64>,
    /// The view's data, built once the page has been read.
    built: Option<Value>,
    missing: Vec<String>,
    people: People,
    /// The admin's scope the list is narrowed to.
    narrow: Option<crate::scope::Scope>,
}

impl Plan for ListView {
    type Read = ListRead;

    fn on(&mut self, read: ListRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, ListRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match read {
            ListRead::List(PullRequestsRead::Page) => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => self.page = Some(p.decode()),
                Err(e) => {
                    let url = match (self.base_url.as_deref(), self.repo.is_empty()) {
                        (Some(b), false) => {
                            Some(format!("{}/pull-requests", pull_request::repo_url(b, &self.project, &self.repo)))
                        }
                        (Some(b), true) => Some(format!("{}/dashboard", b.trim_end_matches('/'))),
                        (None, _) => None,
                    };
                    return Some(self.header.error(e, url));
                }
            },
            ListRead::List(PullRequestsRead::Count) => match errors::json::<Value>(&outcome, about, None) {
                Ok(v) => self.total = v.get("count").and_then(Value::as_u64),
                Err(e) => self.missing.push(format!("Inbox count: not read — {e}")),
            },
            ListRead::BuildStats => match errors::json::<BTreeMap<String, Value>>(&outcome, about, None) {
                Ok(m) => {
                    let stats = m.into_iter().filter_map(|(k, v)| Some((k, serde_json::from_value(v).ok()?)));
                    self.stats = Some(stats.collect());
                }
                Err(e) => self.missing.push(format!("Build status: not read — {e}")),
            },
            ListRead::Avatar(a) => self.avatars.on(a, &outcome, f),
        }
        if f.waiting() > 0 {
            return None;
        }
        let page = self.page.as_ref()?;
        // The rows' build status: Bitbucket's totals for every source commit on the page, in one request.
        if !self.stats_asked {
            self.stats_asked = true;
            let mut commits: Vec<String> = page
                .values
                .iter()
                .filter(|pr| keeps(self.source_filter.as_deref(), pr) && in_scope(self.narrow.as_ref(), pr))
                .filter_map(|pr| pr.from_ref.as_ref()?.latest_commit.clone())
                .collect();
            commits.sort();
            commits.dedup();
            // The people every row names (authors, reviewers): their avatars go beside the build stats.
            for pr in page
                .values
                .iter()
                .filter(|pr| keeps(self.source_filter.as_deref(), pr) && in_scope(self.narrow.as_ref(), pr))
            {
                for user in pr.author.iter().chain(&pr.reviewers).map(|p| &p.user) {
                    self.people.note(user);
                }
            }
            self.avatars.early(&self.people, f, ListRead::Avatar);
            if !commits.is_empty() {
                f.fetch(ListRead::BuildStats, build_stats_request(&commits));
            }
            if f.waiting() > 0 {
                return None;
            }
        }
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
        let mut text = format!("Showing {} to the person: {shown} shown{more}.", self.title);
        if let Some(scope) = &self.narrow {
            let left_out = view["leftOut"].as_u64().unwrap_or(0) as usize;
            text.push(' ');
            text.push_str(&scope.narrowed(left_out));
        }
        let now = f.now_ms();
        let users = self.people.to_value(&f.avatars(), now, self.base_url.as_deref());
        Some(self.header.result(text, users, self.missing.clone(), ("list", view)))
    }
}

impl ListView {
    fn view(&mut self) -> Value {
        let Some(page) = &self.page else { return Value::Null };
        let people = &mut self.people;
        let mut items = Vec::new();
        let mut left_out = 0;
        for pr in page.values.iter().filter(|pr| keeps(self.source_filter.as_deref(), pr)) {
            if !in_scope(self.narrow.as_ref(), pr) {
                left_out += 1;
                continue;
            }
            let author = pr.author.as_ref().map(|a| people.note(&a.user));
            let reviewers: Vec<Value> = pr
                .reviewers
                .iter()
                .map(|r| json!({"user": people.note(&r.user), "status": r.status.as_deref().unwrap_or("UNAPPROVED")}))
                .collect();
            let repo = pr.to_ref.as_ref().and_then(|r| r.repository.as_ref());
            let commit = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
            let builds = match (&self.stats, commit) {
                (Some(stats), Some(c)) => stats.get(c).map(|s| {
                    json!({"successful": s.successful.unwrap_or(0), "failed": s.failed.unwrap_or(0),
                           "inProgress": s.in_progress.unwrap_or(0)})
                }),
                _ => None,
            };
            let conflicted = pr.conflicted();
            items.push(json!({
                "id": pr.id,
                "title": pr.title.as_deref().unwrap_or(""),
                "url": pr.links.as_ref().and_then(|l| l.href()),
                "project": repo.and_then(|r| r.project.as_ref()).and_then(|p| p.key.clone()),
                "repo": repo.and_then(|r| r.slug.clone()),
                "state": pr.state.as_deref().unwrap_or("OPEN"),
                "draft": pr.draft == Some(true),
                "author": author,
                "source": super::card::branch(pr.from_ref.as_ref(), self.base_url.as_deref()),
                "target": super::card::branch(pr.to_ref.as_ref(), self.base_url.as_deref()),
                "reviewers": reviewers,
                "counts": super::counts(pr),
                "conflicted": conflicted,
                "builds": builds,
                "updated": pr.updated_date,
            }));
        }
        let shown = items.len();
        let repo = (!self.repo.is_empty()).then(|| format!("{}/{}", self.project, self.repo));
        let mut view = json!({"title": self.title, "heading": self.heading, "filter": self.filter, "repo": repo,
               "items": items, "shown": shown, "more": page.next.is_some(), "next": page.next, "total": self.total});
        if self.narrow.is_some() {
            // Only a narrowed list carries it: how many of the page the scope left out.
            view["leftOut"] = json!(left_out);
            // The inbox's count spans every repository: a narrowed list says no total.
            view["total"] = Value::Null;
        }
        view
    }
}
