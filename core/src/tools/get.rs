//! `get_pull_request`: one pull request in a dozen lines, with Bitbucket's own counts and its source
//! commit's builds in one line.
//!
//! Requests: the pull request and the pull request page's build listing, in parallel; then, for an open
//! pull request, Bitbucket's merge check, and the source commit's Code Insights reports (4). On a server without
//! that listing (404), the source commit's legacy build stats too (5 in all). [reference "Builds", "Pull requests",
//! "Code Insights"]

use serde_json::{Map, Value, json};

use super::object;
use crate::args::number;
use crate::bitbucket::Page;
use crate::bitbucket::model::{Build, MergeCheck, Participant, PullRequest};
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::builds::{BuildsRead, BuildsReader, Fallback};
use crate::reads::insights::{InsightsRead, InsightsReader};
use crate::reads::pull_request;
use crate::text::builds::stats_line;
use crate::text::review::reviewer_states;
use crate::text::{cap, one_line, short_commit, when};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `get_pull_request`, for the catalogue: reads only; its kind is the card.
pub const SPEC: ToolSpec = ToolSpec {
    name: "get_pull_request",
    title: "Get pull request",
    description: "A pull request: state, branches, reviewers, merge outcome, counts, builds and description.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::READ,
    start,
};

/// Default number of description characters shown.
pub const DESCRIPTION_CHARS: u64 = 1000;
/// Title characters shown.
pub const TITLE_CHARS: usize = 300;
/// Builds asked for from the pull request's build listing.
const BUILDS_LIMIT: u64 = 100;

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "description_chars": {"type": "integer", "minimum": 0, "maximum": 200000, "default": DESCRIPTION_CHARS,
                                     "description": "Most description characters"}}),
        &["project", "repo", "pr_id"],
    )
}

/// The reads of `get_pull_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GetRead {
    /// The pull request; its source commit is the one whose builds are read, and an open one is checked for merge.
    PullRequest,
    /// Its builds.
    Builds(BuildsRead),
    /// Bitbucket's merge check, for an open pull request.
    MergeCheck,
    /// The source commit's Code Insights reports.
    Insights(InsightsRead),
}

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let description_chars = number(args, "description_chars").unwrap_or(DESCRIPTION_CHARS) as usize;
    // One page of the listing; on a server without it, the source commit's totals.
    let (builds, listing) = BuildsReader::new((&project, &repo, id), 0, BUILDS_LIMIT, 1, Fallback::Stats, false);
    let first = vec![
        (GetRead::PullRequest, pull_request::request(&project, &repo, id)),
        (GetRead::Builds(BuildsRead::Listing), listing),
    ];
    Step::wait(Get { project, repo, id, description_chars, pr: None, builds, merge_check: None, insights: None }, first)
}

#[derive(Debug)]
struct Get {
    project: String,
    repo: String,
    id: u64,
    description_chars: usize,
    pr: Option<PullRequest>,
    builds: BuildsReader,
    merge_check: Option<String>,
    insights: Option<InsightsReader>,
}

impl Plan for Get {
    type Read = GetRead;

    fn on(&mut self, read: GetRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, GetRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let mut more = |r, request| f.fetch(GetRead::Builds(r), request);
        match read {
            GetRead::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => {
                    let commit = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
                    self.builds.source_commit(commit, &mut more);
                    if let Some(c) = commit {
                        let (reader, first) = InsightsReader::new((&self.project, &self.repo, c), None);
                        for (r, q) in first {
                            f.fetch(GetRead::Insights(r), q);
                        }
                        self.insights = Some(reader);
                    }
                    if pr.state.as_deref() == Some("OPEN") {
                        f.fetch(
                            GetRead::MergeCheck,
                            pull_request::merge_check_request(&self.project, &self.repo, self.id),
                        );
                    }
                    self.pr = Some(pr);
                }
                Err(e) => return Some(ToolResult::error(e)),
            },
            GetRead::Builds(r) => self.builds.on(r, &outcome, &mut more),
            GetRead::Insights(r) => {
                if let Some(reader) = self.insights.as_mut() {
                    reader.on(r, &outcome, &mut |r, q| f.fetch(GetRead::Insights(r), q));
                }
            }
            GetRead::MergeCheck => {
                self.merge_check = Some(match errors::json::<MergeCheck>(&outcome, about, None) {
                    Ok(m) => merge_check_line(&m),
                    Err(e) => format!("Merge check: not read — {e}"),
                })
            }
        }
        if f.waiting() > 0 || self.builds.waits_for_commit() {
            return None;
        }
        let pr = self.pr.as_ref()?;
        let mut builds = builds_text(&self.builds);
        if let Some(line) = self.insights.as_ref().and_then(insights_line) {
            builds.push('\n');
            builds.push_str(&line);
        }
        Some(ToolResult::text(render(pr, &builds, self.merge_check.as_deref(), self.description_chars)))
    }
}

/// The builds line of the answer: the listing's, the commit's totals, or why neither was read.
fn builds_text(b: &BuildsReader) -> String {
    if let Some(e) = &b.error {
        return format!("Builds: not read — {e}");
    }
    match (&b.page, &b.stats) {
        (Some(page), _) => builds_line(page),
        (None, Some(Ok(stats))) => stats_line(stats, STATS_LEAD),
        (None, Some(Err(e))) => format!("Builds: not read — {e}"),
        (None, None) => "Builds: not read.".into(),
    }
}

/// The source commit's Code Insights in one line: the failed and pending reports by title, the passed counted; none
/// on a server without Code Insights or a commit without reports. Which reports the merge check requires is said in
/// its vetoes (the merge check line), Bitbucket's REST API naming them nowhere else [assumed].
fn insights_line(r: &InsightsReader) -> Option<String> {
    if r.absent {
        return None;
    }
    if let Some(e) = &r.error {
        return Some(format!("Code Insights: not read — {e}"));
    }
    let reports = r.ordered();
    if reports.is_empty() {
        return None;
    }
    let named = |word: &str| -> Vec<String> {
        reports
            .iter()
            .filter(|x| crate::text::insights::result_word(x.result.as_deref()) == word)
            .map(|x| crate::text::short(x.title.as_deref().or(x.key.as_deref()).unwrap_or("?"), 40))
            .collect()
    };
    let mut parts = Vec::new();
    for word in ["failed", "pending"] {
        let names = named(word);
        if !names.is_empty() {
            let more = if names.len() > 5 { format!(", {} more", names.len() - 5) } else { String::new() };
            parts.push(format!("{} {word} ({}{more})", names.len(), names[..names.len().min(5)].join(", ")));
        }
    }
    let passed = named("passed").len();
    if passed > 0 {
        parts.push(format!("{passed} passed"));
    }
    let more = if r.reports_more { " (more reports exist)" } else { "" };
    Some(format!("Code Insights: {}{more}.", parts.join(", ")))
}

/// Bitbucket's merge check in one line: whether it would merge now, else its vetoes in its own words.
fn merge_check_line(m: &MergeCheck) -> String {
    if m.can_merge == Some(true) && m.vetoes.is_empty() {
        return "Merge check: Bitbucket would merge it now.".into();
    }
    let vetoes: Vec<String> = m
        .vetoes
        .iter()
        .map(|v| {
            let summary = one_line(v.summary_message.as_deref().unwrap_or(""));
            match v.detailed_message.as_deref().map(one_line) {
                Some(d) if !d.is_empty() && d != summary => format!("{summary} ({})", crate::text::short(&d, 160)),
                _ => summary,
            }
        })
        .collect();
    let mut line = format!("Merge check: blocked — {} issue(s)", vetoes.len().max(1));
    if m.conflicted == Some(true) {
        line.push_str(", the branches conflict");
    }
    if !vetoes.is_empty() {
        line.push_str(&format!(": {}", vetoes.join("; ")));
    }
    line.push('.');
    line
}

/// What the commit's totals are called when they stand in for the pull request's listing.
const STATS_LEAD: &str = "Builds of the source commit (any branch; this server has no pull request build listing)";

/// One line for the pull request page's build listing: counts by state (of all when the listing is
/// complete), and the builds that did not succeed, by name.
pub fn builds_line(page: &Page<Build>) -> String {
    if page.values.is_empty() && page.next.is_none() {
        return "Builds: none on the source commit for this branch.".into();
    }
    let mut counts: Vec<(&str, usize, Vec<String>)> = Vec::new();
    for b in &page.values {
        let state = crate::text::build_state(b.state.as_deref());
        let name = b.name.as_deref().or(b.key.as_deref()).unwrap_or("?");
        match counts.iter_mut().find(|(s, _, _)| *s == state) {
            Some(entry) => {
                entry.1 += 1;
                entry.2.push(one_line(name));
            }
            None => counts.push((state, 1, vec![one_line(name)])),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(state, count, names)| {
            if *state == "successful" {
                format!("{count} {state}")
            } else {
                let mut shown: Vec<String> = names.iter().take(5).map(|n| crate::text::short(n, 40)).collect();
                if names.len() > 5 {
                    shown.push(format!("{} more", names.len() - 5));
                }
                format!("{count} {state} ({})", shown.join(", "))
            }
        })
        .collect();
    let scope = match page.next {
        None => format!("{}", page.values.len()),
        Some(n) => format!("first {} shown, more exist — get_build_status start={n}", page.values.len()),
    };
    format!("Builds ({scope}): {}", parts.join(", "))
}

fn person(p: &Participant) -> String {
    crate::text::short(&p.user.label(), 80)
}

/// The answer's text: title, branches, dates, people, counts, then `merge_check` and `builds` as written, then the
/// description cut at `description_chars`.
fn render(pr: &PullRequest, builds: &str, merge_check: Option<&str>, description_chars: usize) -> String {
    let mut out = Vec::new();
    let state = pr.state.as_deref().unwrap_or("?");
    let draft = if pr.draft == Some(true) { " (draft)" } else { "" };
    let title = one_line(&cap(pr.title.as_deref().unwrap_or(""), TITLE_CHARS, "title", ""));
    out.push(format!("PR #{} · {state}{draft} · {title}", pr.id.unwrap_or(0)));
    let (from, to) = (pr.from_ref.clone().unwrap_or_default(), pr.to_ref.clone().unwrap_or_default());
    let target_repo = to.repository.as_ref().map(|r| r.full_name()).unwrap_or_else(|| "?".into());
    let source_repo = from.repository.as_ref().map(|r| r.full_name()).unwrap_or_else(|| target_repo.clone());
    let source =
        if source_repo == target_repo { from.name().to_owned() } else { format!("{source_repo}:{}", from.name()) };
    let author = pr.author.as_ref().map(person).unwrap_or_else(|| "?".into());
    out.push(format!(
        "{target_repo}: {} → {} · by {author} · version {}",
        one_line(&source),
        one_line(to.name()),
        pr.version.unwrap_or(0)
    ));
    let mut dates = format!("Created {} · updated {}", when(pr.created_date), when(pr.updated_date));
    if pr.closed_date.is_some() {
        dates.push_str(&format!(" · closed {}", when(pr.closed_date)));
    }
    dates.push_str(&format!(" · source commit {}", short_commit(from.latest_commit.as_deref())));
    if let Some(c) = pr.merge_commit() {
        dates.push_str(&format!(" · merge commit {}", c.short()));
    }
    out.push(dates);
    if pr.reviewers.is_empty() {
        out.push("Reviewers: none".into());
    } else {
        let list: Vec<String> =
            reviewer_states(pr).map(|(r, state)| format!("{} {}", person(r), state.words())).collect();
        out.push(format!("Reviewers ({}): {}", pr.reviewers.len(), list.join("; ")));
    }
    if !pr.participants.is_empty() {
        let list: Vec<String> = pr.participants.iter().map(person).collect();
        out.push(format!("Participants ({}): {}", list.len(), list.join("; ")));
    }
    let props = pr.properties.clone().unwrap_or_default();
    let outcome = match props.merge_result.and_then(|m| m.outcome).as_deref() {
        Some("CLEAN") => "clean".to_owned(),
        Some("CONFLICTED") => "conflicted".to_owned(),
        Some(other) => other.to_lowercase(),
        None => "not reported".to_owned(),
    };
    out.push(match pr.counts() {
        Some(c) => format!(
            "Merge: {outcome} · tasks: {} open, {} resolved · comments: {}",
            c.open_tasks, c.resolved_tasks, c.comments
        ),
        None => format!("Merge: {outcome} · tasks: not reported · comments: not reported"),
    });
    out.extend(merge_check.map(str::to_owned));
    out.push(builds.to_owned());
    match pr.description.as_deref() {
        None | Some("") => out.push("Description: none".into()),
        Some(d) => {
            out.push("Description:".into());
            out.push(cap(d, description_chars, "description", "ask with a larger description_chars for more"));
        }
    }
    out.join("\n")
}
