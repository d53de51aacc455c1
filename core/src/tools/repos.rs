//! `search_repositories`: repositories across projects by name, with their clone addresses (what the bb
//! CLI's `get_repository_clone_info` gives, for every repository listed).
//!
//! Request: one `GET /rest/api/latest/repos?name=&projectname=&start&limit` → a page of
//! `{slug, name, project {key, name}, public, links {clone [{href, name: http|ssh}]}}`; `name` and
//! `projectname` match case-insensitively within names; with `project_key`, `GET …/projects/{key}/repos?start&limit`,
//! the project's every repository [reference "Projects, repositories, branches,
//! commits, tags, users": spec]. `get_repository_clone_info`: the repository and its default branch, in
//! parallel. The requests and the repository's decoding are [`crate::reads::repository`]'s.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::RawPage;
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::repository::{self, Summary};
use crate::text::{one_line, short};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `search_repositories`.
pub const SPEC: ToolSpec = ToolSpec {
    name: "search_repositories",
    title: "Search repositories",
    description: "Repositories by name across projects, or every one of a project_key, with clone addresses; paged.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Narrowed,
    role: Role::Data(Toolset::Repositories),
    annotations: Annotations::READ,
    start,
};

fn schema() -> Value {
    object(
        json!({"name": {"type": "string", "description": "Name contains"},
               "project": {"type": "string", "description": "Project name contains"},
               "project_key": {"type": "string", "description": "Every repository of this project"},
               "start": super::start(), "limit": super::limit(25, 100)}),
        &[],
    )
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let name = string(args, "name").unwrap_or("").to_owned();
    let project = string(args, "project").unwrap_or("").to_owned();
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(25));
    // The admin's scope: a project named by key must be in it; the answer is filtered to it.
    let narrow = call.scope.cloned();
    if let Some(key) = string(args, "project_key") {
        if let Some(scope) = call.scope.filter(|s| !s.touches_project(key)) {
            return Step::Done(ToolResult::error(scope.outside(&format!("project {key}"))));
        }
        if !name.is_empty() || !project.is_empty() {
            return Step::Done(ToolResult::error(
                "Give either project_key (every repository of that project) or name/project (a search across projects), not both.",
            ));
        }
        let request = repository::project_repos_request(key, start, limit);
        return Step::wait(Search { name, project, key: Some(key.to_owned()), narrow }, vec![((), request)]);
    }
    let request = repository::search_request(&name, &project, start, limit);
    Step::wait(Search { name, project, key: None, narrow }, vec![((), request)])
}

#[derive(Debug)]
struct Search {
    name: String,
    project: String,
    /// The project whose every repository is listed.
    key: Option<String>,
    /// The admin's scope the answer is filtered to.
    narrow: Option<crate::scope::Scope>,
}

impl Plan for Search {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: self.key.as_deref().unwrap_or(""), repo: "", pr: None };
        let mut page = match errors::json::<RawPage>(&outcome, about, None) {
            Ok(p) => p.decode::<Summary>(),
            Err(e) => return Some(ToolResult::error(e)),
        };
        // Filtered by each repository's own key and slug (one that names neither is outside).
        let narrowed = self.narrow.as_ref().map(|scope| {
            let before = page.values.len();
            page.values.retain(|r| {
                let key = r.project.as_ref().and_then(|p| p.key.as_deref());
                key.zip(r.slug.as_deref()).is_some_and(|(k, s)| scope.holds(k, s))
            });
            scope.narrowed(before - page.values.len())
        });
        let mut what = Vec::new();
        if !self.name.is_empty() {
            what.push(format!("named like \"{}\"", short(&one_line(&self.name), 60)));
        }
        if !self.project.is_empty() {
            what.push(format!("in projects named like \"{}\"", short(&one_line(&self.project), 60)));
        }
        if let Some(key) = &self.key {
            what.push(format!("of project {key}"));
        }
        let what = if what.is_empty() { String::new() } else { format!(" {}", what.join(" ")) };
        let mut out = vec![format!("Repositories{what}, from start={}: {} shown.", page.start, page.values.len())];
        for r in &page.values {
            let key = r.project.as_ref().and_then(|p| p.key.as_deref()).unwrap_or("?");
            let slug = r.slug.as_deref().unwrap_or("?");
            let mut line = format!("{}/{}", short(&one_line(key), 60), short(&one_line(slug), 100));
            if let Some(n) = r.name.as_deref().filter(|n| *n != slug) {
                line.push_str(&format!(" \"{}\"", short(&one_line(n), 100)));
            }
            if r.public == Some(true) {
                line.push_str(" (public)");
            }
            for (kind, href) in r.clone_links() {
                line.push_str(&format!(" {}: {}", short(&one_line(kind), 10), short(&one_line(href), 300)));
            }
            out.push(line);
        }
        out.push(page.more_line("repositories"));
        out.extend(narrowed);
        Some(ToolResult::text(out.join("\n")))
    }
}

/// `get_repository_clone_info`.
pub const CLONE_SPEC: ToolSpec = ToolSpec {
    name: "get_repository_clone_info",
    title: "Get repository clone info",
    description: "A repository's clone addresses (http, ssh) and default branch.",
    input_schema: clone_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Repositories),
    annotations: Annotations::READ,
    start: start_clone,
};

fn clone_schema() -> Value {
    object(json!({"project": super::project(), "repo": super::repo()}), &["project", "repo"])
}

/// What the clone answer reads: the repository and its default branch, side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloneRead {
    Repo,
    DefaultBranch,
}

fn start_clone(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let first = vec![
        (CloneRead::Repo, repository::request(&project, &repo)),
        (CloneRead::DefaultBranch, repository::default_branch_request(&project, &repo)),
    ];
    Step::wait(CloneInfo { project, repo, found: None, default: None }, first)
}

#[derive(Debug)]
struct CloneInfo {
    project: String,
    repo: String,
    found: Option<Result<Summary, BitbucketError>>,
    default: Option<String>,
}

impl Plan for CloneInfo {
    type Read = CloneRead;

    fn on(&mut self, read: CloneRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, CloneRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        match read {
            CloneRead::Repo => self.found = Some(errors::json::<Summary>(&outcome, about, None)),
            // An empty repository has no default branch yet: said as "none", not as an error.
            CloneRead::DefaultBranch => {
                self.default = repository::default_branch(&outcome, about).ok().and_then(|b| b.display_id);
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        Some(match self.found.take() {
            Some(Ok(r)) => {
                let mut out = vec![format!(
                    "{}/{}: default branch {}.",
                    self.project,
                    self.repo,
                    self.default.as_deref().map_or("none".to_owned(), |d| short(&one_line(d), 100))
                )];
                for (kind, href) in r.clone_links() {
                    out.push(format!("{}: {}", short(&one_line(kind), 10), short(&one_line(href), 300)));
                }
                ToolResult::text(out.join("\n"))
            }
            Some(Err(e)) => ToolResult::error(e),
            None => ToolResult::error("The repository was not read. This is a bug in bb."),
        })
    }
}
