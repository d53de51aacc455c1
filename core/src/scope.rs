//! The admin's scope (`--project KEY`, `--repo KEY/slug`, `BB_SCOPE`): the projects and repositories a
//! server may touch, and each tool's rule for it ([`Scoped`], in every `ToolSpec`, with no default).
//!
//! The scope is checked on the arguments bb sends, after filling in, never on text Bitbucket answered:
//! `session/call.rs` fills and refuses before a tool starts; the tools that narrow (the dashboard and
//! inbox, `search_repositories`, `search_code`) read it from their `Call` and filter their answer.
//!
//! Project keys compare case-insensitively, as Bitbucket's do; a repository slug is lowercase in
//! Bitbucket and compares lowercased.

use serde_json::{Map, Value};

/// The projects and repositories a server may touch. Plain data, fixed at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Whole projects, by key (as given).
    pub projects: Vec<String>,
    /// Repositories, as `(project key, slug)`.
    pub repositories: Vec<(String, String)>,
}

/// How a tool is held to the scope: every tool says, beside its definition, so a new tool must choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoped {
    /// Takes `project` and `repo`: filled in when absent and the scope names exactly one repository,
    /// refused with one sentence when they name a repository outside.
    Repository,
    /// `list_pull_requests`: with a repository, as [`Scoped::Repository`]; without one (the dashboard,
    /// the inbox), narrowed to the scope.
    RepositoryOrNarrowed,
    /// Reaches across projects (`search_repositories`, `search_code`): the request is narrowed where
    /// Bitbucket can, the answer filtered to the scope, and it says so; a project or repository it names
    /// is checked as [`Scoped::Repository`] checks one.
    Narrowed,
    /// Addresses a commit: bound through the repository the call names (checked as
    /// [`Scoped::Repository`]); a call that names only a commit (`commit_id` alone) is refused while a
    /// scope is set, as Bitbucket's commit-only build read spans every repository.
    Commit,
    /// `show` and `refresh_view`: the rule of the kind's own tool applies to the arguments the view
    /// carries (for `refresh_view`, those of the show call it names, navigation in place included).
    View,
    /// Acts on the session only (`enable_toolset`): nothing to scope.
    Session,
    /// Touches no project at all. No bb tool has this rule today; a tool that takes it says why.
    Unscoped,
}

impl Scoped {
    /// The rule in words, for the scope table (tests, docs).
    pub fn words(self) -> &'static str {
        match self {
            Scoped::Repository => "repository",
            Scoped::RepositoryOrNarrowed => "repository, or narrowed without one",
            Scoped::Narrowed => "narrowed",
            Scoped::Commit => "through its repository; commit alone refused",
            Scoped::View => "as the view's tool",
            Scoped::Session => "session",
            Scoped::Unscoped => "unscoped",
        }
    }
}

impl Scope {
    /// Reads scope entries (`KEY` or `KEY/slug`, as `--project`, `--repo` and `BB_SCOPE` give them).
    /// A malformed entry is an error sentence naming it.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Scope, String> {
        let mut scope = Scope::default();
        for raw in entries {
            let entry = raw.trim();
            let bad = |why: &str| format!("The scope entry `{raw}` is not a project key or KEY/slug: {why}.");
            if entry.is_empty() {
                return Err(bad("it is empty"));
            }
            let (key, slug) = match entry.split_once('/') {
                Some((k, s)) => (k, Some(s)),
                None => (entry, None),
            };
            if !valid_key(key) {
                return Err(bad("a project key is letters, digits and _ (e.g. OPS or ~user)"));
            }
            match slug {
                None => {
                    if !scope.projects.iter().any(|p| p.eq_ignore_ascii_case(key)) {
                        scope.projects.push(key.to_owned());
                    }
                }
                Some(slug) => {
                    if !valid_slug(slug) {
                        return Err(bad("a repository slug is letters, digits, '-', '_' and '.' (e.g. OPS/infra)"));
                    }
                    let pair = (key.to_owned(), slug.to_ascii_lowercase());
                    if !scope.repositories.iter().any(|(k, s)| k.eq_ignore_ascii_case(key) && *s == pair.1) {
                        scope.repositories.push(pair);
                    }
                }
            }
        }
        Ok(scope)
    }

    /// Whether the scope names nothing (no scope).
    pub fn is_empty(&self) -> bool {
        self.projects.is_empty() && self.repositories.is_empty()
    }

    /// Whether the repository `project`/`repo` is in scope.
    pub fn holds(&self, project: &str, repo: &str) -> bool {
        self.holds_project(project)
            || self.repositories.iter().any(|(k, s)| k.eq_ignore_ascii_case(project) && s.eq_ignore_ascii_case(repo))
    }

    /// Whether the whole project is in scope.
    pub fn holds_project(&self, project: &str) -> bool {
        self.projects.iter().any(|p| p.eq_ignore_ascii_case(project))
    }

    /// Whether any of the project is in scope (the whole project or one of its repositories).
    pub fn touches_project(&self, project: &str) -> bool {
        self.holds_project(project) || self.repositories.iter().any(|(k, _)| k.eq_ignore_ascii_case(project))
    }

    /// Whether a repository named `KEY/slug` (as Bitbucket's search answers name them) is in scope.
    pub fn holds_full_name(&self, full: &str) -> bool {
        full.split_once('/').is_some_and(|(k, s)| self.holds(k, s))
    }

    /// The one repository the scope names, when it names exactly one and no whole project.
    pub fn only_repository(&self) -> Option<(&str, &str)> {
        match (self.projects.as_slice(), self.repositories.as_slice()) {
            ([], [(k, s)]) => Some((k, s)),
            _ => None,
        }
    }

    /// The scope in words: "project OPS, WEB/site".
    pub fn words(&self) -> String {
        let projects = self.projects.iter().map(|p| format!("project {p}"));
        let repos = self.repositories.iter().map(|(k, s)| format!("{k}/{s}"));
        projects.chain(repos).collect::<Vec<_>>().join(", ")
    }

    /// What a call naming `what` (a repository `KEY/slug` or "project KEY") outside the scope is told.
    pub fn outside(&self, what: &str) -> String {
        format!("{what} is outside this server's scope: {}. Nothing was read.", self.words())
    }

    /// What a narrowed answer says; `left_out` of what Bitbucket answered were not shown.
    pub fn narrowed(&self, left_out: usize) -> String {
        let left = match left_out {
            0 => String::new(),
            n => format!(" {n} outside it left out of this page."),
        };
        format!("Narrowed to this server's scope: {}.{left}", self.words())
    }

    /// Fills `project` and `repo` into `args` when absent and the scope names exactly one repository.
    pub fn fill(&self, args: &mut Map<String, Value>) {
        if let Some((key, slug)) = self.only_repository() {
            args.entry("project").or_insert_with(|| Value::from(key));
            args.entry("repo").or_insert_with(|| Value::from(slug));
        }
    }

    /// Checks the repository (or project) `args` name: `Err` is the one sentence the call answers.
    /// `need` says a call must name a repository (a tool bound to one).
    pub fn check_repository(&self, args: &Map<String, Value>, need: bool) -> Result<(), String> {
        let text = |k: &str| args.get(k).and_then(Value::as_str);
        match (text("project"), text("repo")) {
            (Some(p), Some(r)) if self.holds(p, r) => Ok(()),
            (Some(p), Some(r)) => Err(self.outside(&format!("{p}/{r}"))),
            (Some(p), None) if !need && self.touches_project(p) => Ok(()),
            (Some(p), None) if !need => Err(self.outside(&format!("project {p}"))),
            _ => Err(format!(
                "Give project and repo: this server's scope is {}, and bb reads nothing outside it.",
                self.words()
            )),
        }
    }
}

/// A project key as Bitbucket forms them (a personal project's starts with `~`).
fn valid_key(key: &str) -> bool {
    let body = key.strip_prefix('~').unwrap_or(key);
    !body.is_empty() && body.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// A repository slug as Bitbucket forms them.
fn valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug != "."
        && slug != ".."
        && slug.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::Scope;

    #[test]
    fn entries_read_and_compare_as_bitbucket_does() {
        let s = Scope::parse(["OPS", "web/Site", " BB/api "]).unwrap();
        assert!(s.holds("ops", "anything") && s.holds("WEB", "site") && s.holds("bb", "API"));
        assert!(!s.holds("BB", "cli") && !s.holds("WEB", "frontend"));
        assert!(s.touches_project("bb") && !s.touches_project("SAND"));
        assert_eq!(s.words(), "project OPS, web/site, BB/api");
        assert!(Scope::parse(["BB/"]).is_err() && Scope::parse([""]).is_err() && Scope::parse(["a b"]).is_err());
        assert!(Scope::parse(["BB/api/x"]).is_err());
        assert_eq!(Scope::parse(["BB/api"]).unwrap().only_repository(), Some(("BB", "api")));
    }
}
