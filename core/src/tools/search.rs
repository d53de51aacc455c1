//! `search_code`: Bitbucket's code search, across every repository the user can read or within a
//! project or a repository, each match as `KEY/repo path:line: text`.
//!
//! Request: one `POST /rest/search/latest/search` ([`crate::reads::search`]). The project and repository
//! become Bitbucket's own filters in the query (`project:KEY repo:slug`). A server without a search index
//! gets one sentence that names the tools that still work, never a raw 404.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::search;
use crate::text::{one_line, short};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `search_code`.
pub const SPEC: ToolSpec = ToolSpec {
    name: "search_code",
    title: "Search code",
    description: "Bitbucket's code search (default branches): matching lines as KEY/repo path:line: text; terms, \"phrases\", ext:rs, lang:, path:; paged.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Narrowed,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start,
};

/// Matching lines shown per file; the file's hit count says how many it has.
const LINES_PER_FILE: usize = 5;
/// The longest matching line shown whole.
const LINE_CHARS: usize = 300;

fn schema() -> Value {
    object(
        json!({"query": {"type": "string", "maxLength": 1000, "description": "What to find"},
               "project": {"type": "string", "description": "Only this project key"},
               "repo": {"type": "string", "description": "Only this repository slug (with project)"},
               "start": super::start(), "limit": super::limit(25, 100)}),
        &["query"],
    )
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let asked = string(args, "query").unwrap_or("").trim().to_owned();
    if asked.is_empty() {
        return Step::Done(ToolResult::error("`query` is blank: give the words or identifier to find."));
    }
    let project = string(args, "project").map(str::to_owned);
    let repo = string(args, "repo").map(str::to_owned);
    if repo.is_some() && project.is_none() {
        return Step::Done(ToolResult::error("`repo` needs `project`: give the repository's project key too."));
    }
    // The admin's scope: what the call names must be in it; a call that names nothing is narrowed to it
    // in Bitbucket's query when the scope is one project or one repository, and its answer filtered.
    let mut narrow_terms = None;
    if let Some(scope) = call.scope {
        match (&project, &repo) {
            (Some(p), Some(r)) if !scope.holds(p, r) => {
                return Step::Done(ToolResult::error(scope.outside(&format!("{p}/{r}"))));
            }
            (Some(p), None) if !scope.touches_project(p) => {
                return Step::Done(ToolResult::error(scope.outside(&format!("project {p}"))));
            }
            (None, _) => {
                narrow_terms = match (scope.projects.as_slice(), scope.repositories.as_slice()) {
                    ([p], []) if !p.chars().any(char::is_whitespace) => Some(format!(" project:{p}")),
                    ([], [(p, r)]) => Some(format!(" project:{p} repo:{r}")),
                    _ => None,
                };
            }
            _ => {}
        }
    }
    let mut query = asked.clone();
    // Bitbucket's own filters; a key or slug with a space could not be one, and Bitbucket has none.
    for (filter, value) in [("project", &project), ("repo", &repo)] {
        if let Some(v) = value {
            if v.chars().any(char::is_whitespace) {
                return Step::Done(ToolResult::error(format!(
                    "`{filter}` cannot hold spaces: no Bitbucket {filter} key or slug does."
                )));
            }
            query.push_str(&format!(" {filter}:{v}"));
        }
    }
    if let Some(terms) = narrow_terms {
        query.push_str(&terms);
    }
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(25));
    let scope = match (&project, &repo) {
        (Some(p), Some(r)) => format!(" in {p}/{r}"),
        (Some(p), None) => format!(" in project {p}"),
        _ => String::new(),
    };
    let narrow = call.scope.cloned();
    Step::wait(Search { asked, scope, narrow }, vec![((), search::request(&query, start, limit))])
}

#[derive(Debug)]
struct Search {
    asked: String,
    scope: String,
    /// The admin's scope the answer is filtered to.
    narrow: Option<crate::scope::Scope>,
}

impl Plan for Search {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let mut found = match search::found(&outcome) {
            Ok(f) => f,
            Err(e) => return Some(ToolResult::error(e)),
        };
        // Filtered to the scope by the repository each hit names (a hit that names none is outside).
        let narrowed = self.narrow.as_ref().map(|scope| {
            let before = found.hits.len();
            found.hits.retain(|h| scope.holds_full_name(&h.repository));
            scope.narrowed(before - found.hits.len())
        });
        let answer = self.answer(found);
        Some(match narrowed {
            Some(line) if !answer.is_error => {
                let mut answer = answer;
                if let Some(text) = answer.text.first_mut() {
                    text.push('\n');
                    text.push_str(&line);
                }
                answer
            }
            _ => answer,
        })
    }
}

impl Search {
    fn answer(&self, found: search::Found) -> ToolResult {
        let what = format!("\"{}\"{}", short(&one_line(&self.asked), 200), self.scope);
        let total = found.total.map(|t| format!("{t} file(s) match")).unwrap_or_else(|| "files match".into());
        if found.hits.is_empty() {
            return ToolResult::text(if found.start == 0 {
                format!("Code search for {what}: nothing matches (Bitbucket searches default branches only).")
            } else {
                format!("Code search for {what}: no files from start={}.", found.start)
            });
        }
        let mut out =
            vec![format!("Code search for {what}: {total}; {} shown from start={}.", found.hits.len(), found.start)];
        for h in &found.hits {
            let file = format!("{} {}", h.repository, one_line(&h.file));
            if h.lines.is_empty() {
                out.push(format!("{file} (the path matches)"));
            }
            for (n, text) in h.lines.iter().take(LINES_PER_FILE) {
                out.push(format!("{file}:{n}: {}", short(text.trim(), LINE_CHARS)));
            }
            if h.lines.len() > LINES_PER_FILE {
                let more = h.lines.len() - LINES_PER_FILE;
                out.push(format!("{file}: {more} more matching line(s); get_file reads the file."));
            }
        }
        out.push(match found.next {
            Some(n) => format!("More files match — start={n}."),
            None => "No more files match.".to_owned(),
        });
        ToolResult::text(out.join("\n"))
    }
}
