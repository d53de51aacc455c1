//! The pull request form (`show` kind `pull_request_form`): the model drafts, the person submits
//! (ADR-101). Its input is a draft in `create_pull_request`'s arguments, any of them but the repository
//! left out; the view is Bitbucket's "Create pull request" page filled with it. Nothing is created
//! here: the page's Create button calls `create_pull_request` through the host.
//!
//! Requests, in stages: the repository (its id, for default reviewers), the source branch's newest commit
//! when the draft names one (a 404: the branch does not exist, the form marks the field and reads nothing of
//! the pair) and, when the draft names no target, the default branch, in parallel; then, with both branches
//! known, the default reviewers for
//! the pair, the commits between them and the files they change, and `.bitbucket/CODEOWNERS` at the target
//! (then each code owner it gives the changed files, for their name), in parallel; with the first stage,
//! each reviewer the draft names, for their name (6 requests and one per named reviewer, 10 at most);
//! then the avatars of the reviewers not cached yet. The same
//! reads answer the page's `suggest_form_values` as the person changes the branches.
//! A form is never read again by itself: the page does not call `refresh_view` for it.

use serde_json::{Map, Value, json};

use super::Header;
use super::suggest::{Gather, Read};
use crate::args::{flag, string};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::AvatarStage;
use crate::reads::pull_request::repo_url;
use crate::reads::users;
use crate::tool::Call;

/// The kind's name.
pub const KIND: &str = "pull_request_form";
/// The draft's reviewers whose names are read, at most.
const MAX_NAMED: usize = 10;
/// Of `create_pull_request`'s arguments, what a draft must have.
pub const REQUIRED: &[&str] = &["project", "repo"];

/// The form's arguments: create_pull_request's, of which only [`REQUIRED`] are required. A draft: the model
/// fills what it knows, the person the rest.
pub fn args_schema(schema: &mut Value) {
    schema["required"] = json!(REQUIRED);
}

/// Starts the form for the draft in `args`.
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let mut g = Gather::new(string(args, "project").unwrap_or(""), string(args, "repo").unwrap_or(""));
    g.from = string(args, "from_ref").map(crate::reads::pull_requests::full_ref);
    g.to = string(args, "to_ref").map(crate::reads::pull_requests::full_ref);
    g.want_reviewers = flag(args, "default_reviewers") != Some(false);
    g.want_commits = true;
    g.want_owners = true;
    let mut first = vec![(Read::Repo, g.repo_request())];
    if let Some(from) = g.from.as_deref() {
        first.push((Read::Source, crate::reads::refs::resolve_request(&g.project, &g.repo, from)));
    }
    if g.to.is_none() {
        first.push((Read::DefaultBranch, g.default_branch_request()));
    }
    // The draft's reviewers by name (each one request, a few at most).
    let named = args.get("reviewers").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    for slug in named.take(MAX_NAMED) {
        first.push((Read::Person, users::request(slug)));
    }
    let form = Form {
        header: Header::new(KIND, args, call),
        base_url: call.base_url.map(str::to_owned),
        args: args.clone(),
        g,
        avatars: AvatarStage::default(),
    };
    Step::wait(form, first)
}

#[derive(Debug)]
struct Form {
    header: Header,
    base_url: Option<String>,
    args: Map<String, Value>,
    g: Gather,
    avatars: AvatarStage,
}

impl Plan for Form {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        match read {
            Read::Avatar(a) => self.avatars.on(a, &outcome, f),
            _ => self.g.take(read, &outcome, f),
        }
        if let Some(e) = self.g.failed.take() {
            let url = self.base_url.as_deref().map(|b| repo_url(b, &self.g.project, &self.g.repo));
            return Some(self.header.error(e, url));
        }
        if f.waiting() > 0 || self.avatars.ask(&self.g.people, f, Read::Avatar) {
            return None;
        }
        Some(self.finish(f))
    }
}

impl Form {
    fn finish(&mut self, f: &mut Fetches<'_, '_, Read>) -> ToolResult {
        let g = &mut self.g;
        let short = |r: &Option<String>| r.as_deref().map(|r| r.strip_prefix("refs/heads/").unwrap_or(r).to_owned());
        let (from, to) = (short(&g.from), short(&g.to));
        let reviewers: Vec<&str> = self
            .args
            .get("reviewers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let title = string(&self.args, "title").map(str::to_owned);
        let found = |k: &str| g.found.get(k).cloned().unwrap_or(Value::Null);
        let part = json!({
            "project": g.project, "repo": g.repo,
            "url": self.base_url.as_deref().map(|b| repo_url(b, &g.project, &g.repo)),
            "from": from, "to": to,
            "title": title, "suggestedTitle": found("title"),
            "description": string(&self.args, "description").unwrap_or(""),
            "reviewers": reviewers,
            "defaultReviewers": found("reviewers"),
            "codeOwners": found("owners"),
            "draft": flag(&self.args, "draft") == Some(true),
            "commits": found("commits"),
            "files": found("files"),
            "existing": found("existing"),
            "invalid": g.bad_source.as_ref().map(|m| json!({"field": "from", "message": m})),
        });
        let now = f.now_ms();
        let users = g.people.to_value(&f.avatars(), now, self.base_url.as_deref());
        // The code owners Bitbucket will suggest, said to the model as the form offers them.
        let owners: Vec<String> = g
            .found
            .get("owners")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| Some(format!("{} ({})", o["slug"].as_str()?, o["why"].as_str()?)))
            .collect();
        let owners = if owners.is_empty() {
            String::new()
        } else {
            format!(" The form offers the code owners of the changed files: {}.", owners.join(", "))
        };
        let text = format!(
            "The person sees the form to create a pull request in {}/{}{}; nothing is created unless they press Create, and you will be told if they do.{owners}{}",
            g.project,
            g.repo,
            match (&from, &to) {
                (Some(a), Some(b)) => format!(" from {a} into {b}"),
                _ => String::new(),
            },
            g.bad_source
                .as_ref()
                .map(|m| format!(" {m} The form marks the source branch for the person to choose another."))
                .unwrap_or_default()
        );
        self.header.result(text, users, std::mem::take(&mut g.missing), ("form", part))
    }
}
