//! `completion/complete`: what an argument of a prompt or a resource template completes to, the one
//! Bitbucket read (two for refs) that lists every candidate, and the short per-person cache that makes a
//! burst of keystrokes cost that read once. The values are those starting with what was typed
//! (case-insensitively), at most 100, with `total` and `hasMore`; a failure answers none. Nothing outside
//! the admin's scope is offered, and nothing is read for a repository outside it.
//!
//! ```text
//!   project            GET /rest/api/latest/projects?limit=1000                  keys
//!   repo               GET …/projects/{project}/repos?limit=1000                  slugs
//!   pr_id, id (PR)     GET …/repos/{repo}/pull-requests?state=OPEN&limit=1000     open pull requests' ids
//!   at, id (commit)    GET …/branches?orderBy=ALPHABETICAL&limit=1000, …/tags    branches, then tags
//!   path               GET …/browse/{folder}?at=&limit=1000                        the folder's entries, one level
//! ```
//!
//! [MCP 2025-11-25 "Server features → Utilities → Completion"; docs/reference/mcp.md "Completions";
//! the reads: docs/reference/bitbucket-dc.md, as `reads/` cites them]

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::bitbucket::{Page, RawPage, repo_path, segment};
use crate::errors::{self, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::files::{Browsed, Place};
use crate::reads::refs::{self, Listing, RefEntry};
use crate::scope::Scope;
use crate::tool::Exposed;

/// At most this many values in an answer (MCP: "Must not exceed 100 items").
pub(crate) const MAX_VALUES: usize = 100;
/// How many candidates one read asks for. [assumed: Bitbucket's largest page for most listings]
const LISTED: u64 = 1000;
/// How long a listing is answered from the cache. [assumed: a keystroke burst, and a person choosing
/// among the values, take a few seconds]
pub(crate) const FRESH_MS: u64 = 10_000;
/// Listings the cache holds at most, the oldest out first. [assumed: a few per person typing at once]
pub(crate) const MAX_ENTRIES: usize = 256;

/// What is listed to complete an argument.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Source {
    /// Every project's key.
    Projects,
    /// The repositories of a project.
    Repos { project: String },
    /// The open pull requests of a repository.
    PullRequests { project: String, repo: String },
    /// A repository's branches, then its tags.
    Refs { project: String, repo: String },
    /// The entries of one folder (`""`: the root) at a ref (the default branch without one).
    Folder { project: String, repo: String, at: Option<String>, folder: String },
}

/// A completion asked for: what lists the candidates, and what was typed.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub(crate) source: Source,
    pub(crate) typed: String,
}

/// Reads `completion/complete`'s params against what `exposed` offers: `Ok(None)` for an argument bb
/// completes to nothing (no values), the sentence of an `Invalid params` error for a reference it does not know.
pub(crate) fn read(params: &Value, exposed: &Exposed) -> Result<Option<Asked>, String> {
    let reference = params.get("ref");
    let kind = reference.and_then(|r| r.get("type")).and_then(Value::as_str);
    let argument = params.get("argument");
    let (Some(name), Some(typed)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument.and_then(|a| a.get("value")).and_then(Value::as_str),
    ) else {
        return Err("Invalid params: `completion/complete` needs `argument` with its `name` and `value`.".into());
    };
    // What the template or prompt names: a pull request's id, or a commit's.
    let id_is_pr = match kind {
        Some("ref/prompt") => {
            let prompt = reference.and_then(|r| r.get("name")).and_then(Value::as_str).unwrap_or("");
            if crate::prompts::find(prompt, exposed).is_none() {
                let shown: String = prompt.chars().take(100).collect();
                return Err(format!("Invalid params: unknown prompt `{shown}`; prompts/list gives the prompts."));
            }
            true
        }
        Some("ref/resource") => {
            let uri = reference.and_then(|r| r.get("uri")).and_then(Value::as_str).unwrap_or("");
            let Some(template) = crate::resources::offered_template(uri, exposed) else {
                let shown: String = uri.chars().take(200).collect();
                return Err(format!(
                    "Invalid params: `{shown}` is no resource template of bb's; resources/templates/list gives them."
                ));
            };
            template.contains("pull-requests")
        }
        _ => return Err("Invalid params: `ref` must be a `ref/prompt` or a `ref/resource`.".into()),
    };
    let context = params.pointer("/context/arguments");
    let given =
        |key: &str| context.and_then(|c| c.get(key)).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let repo = || Some((given("project")?.to_owned(), given("repo")?.to_owned()));
    let source = match name {
        "project" => Some(Source::Projects),
        "repo" => given("project").map(|p| Source::Repos { project: p.to_owned() }),
        "pr_id" => repo().map(|(project, repo)| Source::PullRequests { project, repo }),
        "id" if id_is_pr => repo().map(|(project, repo)| Source::PullRequests { project, repo }),
        "id" | "at" => repo().map(|(project, repo)| Source::Refs { project, repo }),
        "path" => repo().map(|(project, repo)| {
            let folder = typed.rsplit_once('/').map_or("", |(f, _)| f).trim_matches('/').to_owned();
            Source::Folder { project, repo, at: given("at").map(str::to_owned), folder }
        }),
        _ => None,
    };
    Ok(source.map(|source| Asked { source, typed: typed.to_owned() }))
}

impl Source {
    /// Whether the admin's scope lets it be listed (a project it touches, a repository it holds).
    pub(crate) fn in_scope(&self, scope: Option<&Scope>) -> bool {
        let Some(scope) = scope else { return true };
        match self {
            Source::Projects => true,
            Source::Repos { project } => scope.touches_project(project),
            Source::PullRequests { project, repo }
            | Source::Refs { project, repo }
            | Source::Folder { project, repo, .. } => scope.holds(project, repo),
        }
    }

    /// The plan that lists its candidates.
    pub(crate) fn plan(&self, scope: Option<&Scope>) -> Step {
        let page = || vec![("limit".to_owned(), LISTED.to_string())];
        let first = match self {
            Source::Projects => vec![(Read::Projects, FetchRequest::get("/rest/api/latest/projects", page()))],
            Source::Repos { project } => vec![(
                Read::Repos,
                FetchRequest::get(format!("/rest/api/latest/projects/{}/repos", segment(project)), page()),
            )],
            Source::PullRequests { project, repo } => {
                let mut query = vec![("state".to_owned(), "OPEN".to_owned())];
                query.extend(page());
                vec![(
                    Read::PullRequests,
                    FetchRequest::get(format!("{}/pull-requests", repo_path(project, repo)), query),
                )]
            }
            Source::Refs { project, repo } => {
                let listing = Listing { order: Some("ALPHABETICAL"), limit: LISTED, ..Listing::default() };
                vec![
                    (Read::Branches, refs::branches_request(project, repo, &listing)),
                    (Read::Tags, refs::tags_request(project, repo, &listing)),
                ]
            }
            Source::Folder { project, repo, at, folder } => {
                let place =
                    Place { project: project.clone(), repo: repo.clone(), path: folder.clone(), at: at.clone() };
                vec![(Read::Folder, place.browse_request(0, LISTED))]
            }
        };
        let candidates = Candidates {
            source: self.clone(),
            scope: scope.cloned(),
            got: BTreeMap::new(),
            more: false,
            failed: false,
        };
        Step::wait(candidates, first)
    }
}

/// The reads of a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Read {
    Projects,
    Repos,
    PullRequests,
    Branches,
    Tags,
    Folder,
}

/// A completion's plan: its candidates as each read lists them; `more` when a listing went on past its page.
#[derive(Debug)]
struct Candidates {
    source: Source,
    scope: Option<Scope>,
    got: BTreeMap<Read, Vec<String>>,
    more: bool,
    failed: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Keyed {
    key: Option<String>,
    slug: Option<String>,
    id: Option<u64>,
}

impl Plan for Candidates {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        let about = Subject { project: "", repo: "", pr: None };
        let names: Option<(Vec<String>, bool)> = match read {
            Read::Projects | Read::Repos | Read::PullRequests => {
                errors::json::<RawPage>(&outcome, about, None).ok().map(RawPage::decode::<Keyed>).map(|page| {
                    let more = page.next.is_some();
                    let names = page.values.into_iter().filter_map(|k| match read {
                        Read::Projects => k.key,
                        Read::Repos => k.slug,
                        _ => k.id.map(|id| id.to_string()),
                    });
                    (names.collect(), more)
                })
            }
            Read::Branches | Read::Tags => errors::json::<RawPage>(&outcome, about, None)
                .ok()
                .map(RawPage::decode::<RefEntry>)
                .map(|page: Page<RefEntry>| {
                    let more = page.next.is_some();
                    (page.values.iter().map(|r| r.name().to_owned()).collect(), more)
                }),
            Read::Folder => self.folder(&outcome),
        };
        match names {
            Some((names, more)) => {
                self.more |= more;
                self.got.insert(read, names);
            }
            None => self.failed = true,
        }
        (f.waiting() == 0).then(|| self.done())
    }
}

impl Candidates {
    fn folder(&self, outcome: &FetchOutcome) -> Option<(Vec<String>, bool)> {
        let Source::Folder { project, repo, at, folder } = &self.source else { return None };
        let place = Place { project: project.clone(), repo: repo.clone(), path: folder.clone(), at: at.clone() };
        let Ok(Browsed::Folder(page)) = crate::reads::files::browsed(outcome, &place) else { return None };
        let lead = if folder.is_empty() { String::new() } else { format!("{folder}/") };
        let names = page.values.iter().map(|c| {
            let slash = if c.kind.as_deref() == Some("DIRECTORY") { "/" } else { "" };
            format!("{lead}{}{slash}", c.name())
        });
        Some((names.collect(), page.next.is_some()))
    }

    /// Every candidate, in order (branches before tags), those outside the scope left out.
    fn done(&mut self) -> ToolResult {
        let mut values: Vec<String> = std::mem::take(&mut self.got).into_values().flatten().collect();
        if let Some(scope) = &self.scope {
            match &self.source {
                Source::Projects => values.retain(|key| scope.touches_project(key)),
                Source::Repos { project } => values.retain(|slug| scope.holds(project, slug)),
                _ => {}
            }
        }
        let mut result = ToolResult::text("");
        result.structured = Some(json!({"values": values, "more": self.more, "failed": self.failed}));
        result
    }
}

/// The candidates a plan listed, from its answer: `None` when a read failed (nothing is kept).
pub(crate) fn listed(result: &Value) -> Option<Listed> {
    let s = result.get("structuredContent")?;
    if s.get("failed").and_then(Value::as_bool) != Some(false) {
        return None;
    }
    let values = s.get("values")?.as_array()?.iter().filter_map(Value::as_str).map(str::to_owned).collect();
    Some(Listed { values, more: s.get("more").and_then(Value::as_bool).unwrap_or(false) })
}

/// A source's candidates as listed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listed {
    values: Vec<String>,
    /// Bitbucket had more than one page of them.
    more: bool,
}

/// The `completion/complete` result: the candidates that start with `typed`, at most [`MAX_VALUES`].
pub(crate) fn answer(typed: &str, listed: Option<&Listed>) -> Value {
    let Some(listed) = listed else { return json!({"completion": {"values": [], "total": 0, "hasMore": false}}) };
    let typed = typed.to_lowercase();
    let matching: Vec<&String> = listed.values.iter().filter(|v| v.to_lowercase().starts_with(&typed)).collect();
    let total = matching.len();
    let values: Vec<&String> = matching.into_iter().take(MAX_VALUES).collect();
    json!({"completion": {"values": values, "total": total, "hasMore": total > MAX_VALUES || listed.more}})
}

/// The listings answered lately, per person: what a burst of keystrokes is answered from.
#[derive(Debug, Default)]
pub(crate) struct CompletionCache {
    entries: BTreeMap<(String, Source), (u64, Listed)>,
}

impl CompletionCache {
    /// The listing of `source` for `person`, when read within [`FRESH_MS`] of `now_ms`.
    pub(crate) fn get(&self, person: &str, source: &Source, now_ms: u64) -> Option<&Listed> {
        let (at, listed) = self.entries.get(&(person.to_owned(), source.clone()))?;
        (now_ms.saturating_sub(*at) < FRESH_MS).then_some(listed)
    }

    /// Keeps `listed` for `person`; the stale go first, then the oldest while there are too many.
    pub(crate) fn put(&mut self, person: &str, source: Source, listed: Listed, now_ms: u64) {
        self.entries.retain(|_, (at, _)| now_ms.saturating_sub(*at) < FRESH_MS);
        while self.entries.len() >= MAX_ENTRIES {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, (at, _))| *at).map(|(k, _)| k.clone()) else {
                break;
            };
            self.entries.remove(&oldest);
        }
        self.entries.insert((person.to_owned(), source), (now_ms, listed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(values: &[&str]) -> Listed {
        Listed { values: values.iter().map(|v| (*v).to_owned()).collect(), more: false }
    }

    #[test]
    fn values_start_with_what_was_typed_whatever_its_case() {
        let v = answer("b", Some(&listed(&["BB", "OPS", "BAR"])));
        assert_eq!(v["completion"]["values"], json!(["BB", "BAR"]));
        assert_eq!(v["completion"]["total"], 2);
    }

    #[test]
    fn at_most_a_hundred_values_with_the_total_and_has_more() {
        let many: Vec<String> = (0..150).map(|i| format!("r{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let v = answer("", Some(&listed(&refs)));
        assert_eq!(v["completion"]["values"].as_array().map(Vec::len), Some(100));
        assert_eq!(v["completion"]["total"], 150);
        assert_eq!(v["completion"]["hasMore"], true);
    }

    #[test]
    fn the_cache_forgets_after_its_seconds_and_keeps_people_apart() {
        let mut c = CompletionCache::default();
        c.put("ann", Source::Projects, listed(&["BB"]), 1_000);
        assert!(c.get("ann", &Source::Projects, 1_000 + FRESH_MS - 1).is_some());
        assert!(c.get("bob", &Source::Projects, 1_001).is_none());
        assert!(c.get("ann", &Source::Projects, 1_000 + FRESH_MS).is_none());
    }

    #[test]
    fn the_cache_holds_at_most_its_entries() {
        let mut c = CompletionCache::default();
        for i in 0..(MAX_ENTRIES as u64 + 10) {
            c.put(&format!("p{i}"), Source::Projects, listed(&[]), i);
        }
        assert_eq!(c.entries.len(), MAX_ENTRIES);
        assert!(c.get("p0", &Source::Projects, 300).is_none());
    }
}
