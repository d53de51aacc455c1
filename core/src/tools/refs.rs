//! A repository's refs: `list_branches` (the default branch marked), `list_tags` and `resolve_ref`.
//!
//! Requests: one each, [`crate::reads::refs`]'s. `GET …/repos/{slug}/branches?filterText&orderBy&start&limit` →
//! a page of `{id, displayId, latestCommit, isDefault}`; `GET …/repos/{slug}/tags?filterText&orderBy&start&limit`
//! → a page of `{id, displayId, latestCommit, hash}` (`hash` set for an annotated tag); `resolve_ref` asks
//! `GET …/repos/{slug}/commits?until={ref}&limit=1`, whose first value is the commit the ref names
//! [reference "Projects, repositories, branches, commits, tags, users": spec].

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::RawPage;
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::refs::{self, Listing, RefEntry};
use crate::text::{one_line, short, short_commit, when};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// Characters of a ref's name in a line.
const NAME_CHARS: usize = 100;

/// `list_branches`.
pub const BRANCHES_SPEC: ToolSpec = ToolSpec {
    name: "list_branches",
    title: "List branches",
    description: "A repository's branches with their head commits, the default marked; paged.",
    input_schema: list_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Repositories),
    annotations: Annotations::READ,
    start: start_branches,
};

/// `list_tags`.
pub const TAGS_SPEC: ToolSpec = ToolSpec {
    name: "list_tags",
    title: "List tags",
    description: "A repository's tags with their commits; paged.",
    input_schema: list_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Repositories),
    annotations: Annotations::READ,
    start: start_tags,
};

/// `resolve_ref`.
pub const RESOLVE_SPEC: ToolSpec = ToolSpec {
    name: "resolve_ref",
    title: "Resolve ref",
    description: "The commit a branch, tag or commit id names.",
    input_schema: resolve_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Repositories),
    annotations: Annotations::READ,
    start: start_resolve,
};

fn list_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "filter": {"type": "string", "description": "Name contains"},
               "order": {"type": "string", "enum": ["ALPHABETICAL", "MODIFICATION"], "description": "MODIFICATION: newest first"},
               "start": super::start(), "limit": super::limit(25, 500)}),
        &["project", "repo"],
    )
}

fn resolve_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "ref": super::git_ref()}),
        &["project", "repo", "ref"],
    )
}

/// The listing the arguments ask for.
fn listing(args: &Map<String, Value>) -> Listing<'_> {
    Listing {
        filter: string(args, "filter").filter(|f| !f.is_empty()),
        order: string(args, "order"),
        start: Some(number(args, "start").unwrap_or(0)),
        limit: number(args, "limit").unwrap_or(25),
    }
}

fn start_branches(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let request = refs::branches_request(&project, &repo, &listing(args));
    Step::wait(
        Refs { project, repo, tags: false, filter: string(args, "filter").map(str::to_owned) },
        vec![((), request)],
    )
}

fn start_tags(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let request = refs::tags_request(&project, &repo, &listing(args));
    Step::wait(
        Refs { project, repo, tags: true, filter: string(args, "filter").map(str::to_owned) },
        vec![((), request)],
    )
}

#[derive(Debug)]
struct Refs {
    project: String,
    repo: String,
    tags: bool,
    filter: Option<String>,
}

impl Plan for Refs {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let page = match errors::json::<RawPage>(&outcome, about, None) {
            Ok(p) => p.decode::<RefEntry>(),
            Err(e) => return Some(ToolResult::error(e)),
        };
        let noun = if self.tags { "tags" } else { "branches" };
        let filter = match self.filter.as_deref().filter(|f| !f.is_empty()) {
            Some(f) => format!(" matching \"{}\"", short(&one_line(f), 60)),
            None => String::new(),
        };
        let mut out = vec![format!(
            "{} of {}/{}{filter}, from start={}: {} shown.",
            if self.tags { "Tags" } else { "Branches" },
            self.project,
            self.repo,
            page.start,
            page.values.len()
        )];
        for r in &page.values {
            let mut line = format!("{} {}", short(&one_line(r.name()), NAME_CHARS), short_commit(r.commit()));
            if r.is_default() {
                line.push_str(" (default)");
            }
            if self.tags && r.annotated() {
                line.push_str(" (annotated)");
            }
            out.push(line);
        }
        out.push(page.more_line(noun));
        Some(ToolResult::text(out.join("\n")))
    }
}

fn start_resolve(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let name = string(args, "ref").unwrap_or("").to_owned();
    let request = refs::resolve_request(&project, &repo, &name);
    Step::wait(Resolve { project, repo, name }, vec![((), request)])
}

#[derive(Debug)]
struct Resolve {
    project: String,
    repo: String,
    name: String,
}

impl Plan for Resolve {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let name = short(&one_line(&self.name), NAME_CHARS);
        let first = refs::commits(&outcome, about).map(|p| p.values.into_iter().next());
        Some(match first {
            Ok(None) => ToolResult::error(format!("{name} in {}/{} has no commits.", self.project, self.repo)),
            Ok(Some(c)) => ToolResult::text(format!(
                "{name} in {}/{} is commit {} ({}): {}",
                self.project,
                self.repo,
                c.id.as_deref().unwrap_or("?"),
                when(c.author_timestamp),
                short(c.message.as_deref().unwrap_or("").lines().next().unwrap_or(""), 120)
            )),
            Err(e) if not_found(&outcome) => ToolResult::error(format!(
                "{name} names no branch, tag or commit in {}/{}: {e}",
                self.project, self.repo
            )),
            Err(e) => ToolResult::error(e),
        })
    }
}

/// Whether Bitbucket answered 404 for a commit or ref it does not have (not for the repository).
pub(super) fn not_found(outcome: &FetchOutcome) -> bool {
    crate::reads::compare::ref_not_found(outcome)
}
