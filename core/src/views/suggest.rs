//! `suggest_form_values`: what the pull request form asks while the person fills it in (ADR-101). A
//! read-only tool offered to views and not to the model; each answer is small, and the page debounces.
//!
//! | `want`      | requests                                                        | answer (`structuredContent`)            |
//! |-------------|-----------------------------------------------------------------|-----------------------------------------|
//! | `branches`  | `…/branches?filterText=&orderBy=MODIFICATION&limit=10`          | `{"branches": [{"id","name","default"}]}` |
//! | `people`    | `/rest/api/latest/users?filter=&limit=10` (the user search)     | `{"people": [{"slug","name"}]}`           |
//! | `reviewers` | the repository (its id), then the default reviewers of the pair; beside them `.bitbucket/CODEOWNERS` at the target and the changed files, then each code owner they name | `{"reviewers": [{"slug","name"}], "owners": [{"slug","name","why"}]}` |
//! | `commits`   | `…/compare/commits`, `…/compare/changes` and the source's open pull requests, in parallel | `{"commits", "files", "title", "existing"}` |
//! | `preview`   | none: bb's Markdown tree (`core/src/markdown.rs`)               | `{"preview": tree}`                       |
//!
//! A person is `{"slug", "name", "initials"}`.
//!
//! The same reads build the form itself ([`super::form`]), once, when `show` draws it.

use serde_json::{Map, Value, json};

use crate::args::string;
use crate::bitbucket::RawPage;
use crate::bitbucket::model::{Commit, User};
use crate::errors::{self, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, People};
use crate::reads::compare::Refs;
use crate::reads::refs::{self, Listing};
use crate::reads::{repository, users};
use crate::text::one_line;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec};

/// The tool: read-only, offered to views and not to the model.
pub const SUGGEST_FORM_VALUES: ToolSpec = ToolSpec {
    name: "suggest_form_values",
    title: "Suggest form values",
    description: "Suggests values for the pull request form of show: branches, people, default reviewers, commits, a preview. For views, not for the model.",
    input_schema: schema,
    annotations: Annotations::READ,
    access: Access::Read,
    asks: Asks::Never,
    // The form's kind (`form::KIND`: the form imports this module; a test holds the two equal).
    scope: Scoped::Repository,
    role: Role::ViewCompanion { kind: Some("pull_request_form") },
    start,
};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "project": {"type": "string", "minLength": 1, "description": "Project key"},
            "repo": {"type": "string", "minLength": 1, "description": "Repository slug"},
            "want": {"type": "string", "enum": ["branches", "people", "reviewers", "commits", "preview"], "description": "What to suggest"},
            "text": {"type": "string", "maxLength": 65536, "description": "Branch prefix, a person's name, or Markdown"},
            "from_ref": {"type": "string", "minLength": 1, "description": "Source branch"},
            "to_ref": {"type": "string", "minLength": 1, "description": "Target branch"}
        },
        "required": ["project", "repo", "want"],
        "additionalProperties": false
    })
}

/// Branches and people suggested at most.
pub const SUGGESTIONS: u64 = 10;
/// Commits between the branches listed at most (Bitbucket's create page lists more on its Commits tab).
pub const COMMITS: u64 = 25;
/// Changed files listed at most.
pub const FILES: u64 = 100;

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    // Only a form asks, and only a client that draws views has one.
    if !call.client.renders_views {
        return Step::Done(ToolResult::text(super::NOT_SHOWN));
    }
    let text = string(args, "text").unwrap_or("");
    let mut g = Gather::new(string(args, "project").unwrap_or(""), string(args, "repo").unwrap_or(""));
    g.from = string(args, "from_ref").map(crate::reads::pull_requests::full_ref);
    g.to = string(args, "to_ref").map(crate::reads::pull_requests::full_ref);
    let need_pair = || Step::Done(ToolResult::error("Give from_ref and to_ref."));
    let first = match string(args, "want").unwrap_or("") {
        "branches" => vec![(Read::Branches, g.branches_request(text))],
        "people" => vec![(Read::People, users::search_request(text, SUGGESTIONS))],
        "reviewers" if g.from.is_some() && g.to.is_some() => {
            g.want_reviewers = true;
            g.want_owners = true;
            vec![(Read::Repo, g.repo_request())]
        }
        "commits" if g.from.is_some() && g.to.is_some() => g.compare_requests(),
        "reviewers" | "commits" => return need_pair(),
        _ => {
            let tree = crate::markdown::to_tree(text, None);
            return Step::Done(answer("Preview.", json!({ "preview": tree })));
        }
    };
    Step::wait(g, first)
}

fn answer(text: &str, structured: Value) -> ToolResult {
    ToolResult { structured: Some(structured), ..ToolResult::text(text) }
}

/// What the form's reads are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The repository: its id, for the default reviewers.
    Repo,
    /// The default branch, when the draft names no target.
    DefaultBranch,
    /// Branches matching a prefix.
    Branches,
    /// People matching a name.
    People,
    /// The default reviewers for the branch pair.
    Reviewers,
    /// The commits the source has that the target has not.
    Commits,
    /// The files those commits change.
    Changes,
    /// The open pull requests out of the source, for one into the target already.
    Existing,
    /// One person the draft names, for their name.
    Person,
    /// The draft's source branch, to tell whether it exists (its newest commit).
    Source,
    /// An avatar of someone the form shows.
    Avatar(Avatar),
    /// `.bitbucket/CODEOWNERS` on the target branch (crate::codeowners).
    CodeOwners,
    /// The files the source changes, for the code owners' patterns (the same read as [`Read::Changes`]: the
    /// drive shares an identical read in flight).
    OwnedPaths,
    /// The code owner of this index, by user name or e-mail, for their name.
    Owner(u8),
}

/// What the form keeps of `.bitbucket/CODEOWNERS` as it is read: its lines, each cut at 1,000 characters, to
/// 64 KiB of text (bb's choice; a longer file's rules past it are not read).
const OWNERS_SHARE: crate::fetch::LineShare = crate::fetch::LineShare { bytes: 64 * 1024, line_chars: 1000 };

/// Code owners found for the pair, in the file's order, and what each read of them found.
#[derive(Debug, Default)]
pub struct Owners {
    /// The rules, once read (none when the file is missing or unreadable).
    rules: Option<Vec<crate::codeowners::Rule>>,
    /// The changed paths, once read.
    paths: Option<Vec<String>>,
    /// Each owner the rules give the paths, with the pattern that names them, and the person once read.
    found: Vec<(crate::codeowners::Owner, String, Option<Value>)>,
    /// The owners' reads were asked for.
    asked: bool,
}

/// The reads of the form and of its suggestions, and what they found.
#[derive(Debug)]
pub struct Gather {
    pub(super) project: String,
    pub(super) repo: String,
    /// The source, as a full ref.
    pub(super) from: Option<String>,
    /// The target, as a full ref.
    pub(super) to: Option<String>,
    /// Read the default reviewers once the repository's id is known.
    pub(super) want_reviewers: bool,
    /// Read the commits once the target is known.
    pub(super) want_commits: bool,
    /// What was found, by answer key.
    pub(super) found: Map<String, Value>,
    /// The people found, for a view's `users`.
    pub(super) people: People,
    /// Reads that failed, in words.
    pub(super) missing: Vec<String>,
    /// The first read failed: the repository cannot be read.
    pub(super) failed: Option<String>,
    /// The draft's source branch does not exist: the form marks its field with these words, once, and reads
    /// nothing of the pair.
    pub(super) bad_source: Option<String>,
    /// Read the code owners once both branches are known.
    pub(super) want_owners: bool,
    /// The code owners, as their reads come in.
    owners: Owners,
}

impl Gather {
    /// Nothing read yet, for `project`/`repo`.
    pub fn new(project: &str, repo: &str) -> Gather {
        Gather {
            project: project.to_owned(),
            repo: repo.to_owned(),
            from: None,
            to: None,
            want_reviewers: false,
            want_commits: false,
            found: Map::new(),
            people: People::default(),
            missing: Vec::new(),
            failed: None,
            bad_source: None,
            want_owners: false,
            owners: Owners::default(),
        }
    }

    /// `.bitbucket/CODEOWNERS` on the target, and the files the source changes, in parallel.
    fn owners_requests(&self) -> Vec<(Read, FetchRequest)> {
        let place = crate::reads::files::Place {
            project: self.project.clone(),
            repo: self.repo.clone(),
            path: ".bitbucket/CODEOWNERS".into(),
            at: self.to.clone(),
        };
        let refs = Refs {
            project: self.project.clone(),
            repo: self.repo.clone(),
            from: self.from.clone().unwrap_or_default(),
            to: self.to.clone().unwrap_or_default(),
        };
        vec![
            (Read::CodeOwners, place.window_request(0, crate::codeowners::MAX_RULES as u64, OWNERS_SHARE)),
            (Read::OwnedPaths, refs.changes_request(None, FILES)),
        ]
    }

    /// Once the rules and the paths are in: each owner's read, for their name (a missing file asks for none).
    fn ask_owners(&mut self, f: &mut Fetches<'_, '_, Read>) {
        let o = &mut self.owners;
        let (Some(rules), Some(paths)) = (&o.rules, &o.paths) else {
            return;
        };
        if o.asked {
            return;
        }
        o.asked = true;
        let owners = crate::codeowners::owners_of(rules, paths.iter().map(String::as_str));
        for (i, (owner, pattern)) in owners.into_iter().enumerate() {
            let request = match &owner {
                crate::codeowners::Owner::User(slug) => users::request(slug),
                crate::codeowners::Owner::Email(mail) => users::search_request(mail, 5),
            };
            f.fetch(Read::Owner(i as u8), request);
            o.found.push((owner, pattern, None));
        }
    }

    /// The code owners read, for the answer: `[{slug, name, initials, why}]`, in the file's order.
    fn owners_value(&self) -> Option<Value> {
        let o = &self.owners;
        o.asked.then(|| Value::Array(o.found.iter().filter_map(|(_, _, p)| p.clone()).collect()))
    }

    pub(super) fn repo_request(&self) -> FetchRequest {
        repository::request(&self.project, &self.repo)
    }

    pub(super) fn default_branch_request(&self) -> FetchRequest {
        repository::default_branch_request(&self.project, &self.repo)
    }

    /// The branches whose name contains `prefix`, the most recently changed first.
    fn branches_request(&self, prefix: &str) -> FetchRequest {
        let listing = Listing { filter: Some(prefix), order: Some("MODIFICATION"), start: None, limit: SUGGESTIONS };
        refs::branches_request(&self.project, &self.repo, &listing)
    }

    /// The first commits and changed files between the branches, in parallel.
    pub(super) fn compare_requests(&self) -> Vec<(Read, FetchRequest)> {
        let refs = Refs {
            project: self.project.clone(),
            repo: self.repo.clone(),
            from: self.from.clone().unwrap_or_default(),
            to: self.to.clone().unwrap_or_default(),
        };
        let existing = crate::reads::pull_requests::open_from_request(&self.project, &self.repo, &refs.from);
        vec![
            (Read::Commits, refs.commits_request(None, COMMITS)),
            (Read::Changes, refs.changes_request(None, FILES)),
            (Read::Existing, existing),
        ]
    }

    fn user(&mut self, u: &User) -> Value {
        let slug = self.people.note(u);
        let name = u.display_name.clone().unwrap_or_else(|| slug.clone());
        json!({"slug": slug, "initials": crate::reads::avatars::initials(&name), "name": name})
    }

    /// Takes one outcome; asks for what follows from it. Done when nothing is waiting.
    pub(super) fn take(&mut self, read: Read, outcome: &FetchOutcome, f: &mut Fetches<'_, '_, Read>) {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: None };
        match read {
            Read::Repo => match repository::id(outcome, about) {
                Ok(id) => self.found.insert("repoId".into(), json!(id)),
                Err(e) => {
                    self.failed = Some(e.into());
                    return;
                }
            },
            Read::DefaultBranch => match repository::default_branch(outcome, about) {
                Ok(b) => {
                    self.to = b.id;
                    None
                }
                Err(e) => {
                    self.missing.push(format!("Default branch: not read — {e}"));
                    None
                }
            },
            Read::Branches => match errors::json::<RawPage>(outcome, about, None) {
                Ok(p) => {
                    let list: Vec<Value> = p
                        .values
                        .iter()
                        .map(|b| {
                            json!({"id": b.get("id"), "name": b.get("displayId"),
                                   "default": b.get("isDefault").and_then(Value::as_bool).unwrap_or(false)})
                        })
                        .collect();
                    self.found.insert("branches".into(), json!(list))
                }
                Err(e) => return self.fail(e),
            },
            Read::People => match errors::json::<RawPage>(outcome, about, None) {
                Ok(p) => {
                    let list: Vec<Value> = p.decode::<User>().values.iter().map(|u| self.user(u)).collect();
                    self.found.insert("people".into(), json!(list))
                }
                Err(e) => return self.fail(e),
            },
            Read::Reviewers => match errors::json::<Vec<User>>(outcome, about, None) {
                Ok(users) => {
                    let list: Vec<Value> = users.iter().map(|u| self.user(u)).collect();
                    self.found.insert("reviewers".into(), json!(list))
                }
                Err(e) => {
                    self.missing.push(format!("Default reviewers: not read — {e}"));
                    None
                }
            },
            Read::Commits => match errors::json::<RawPage>(outcome, about, None) {
                Ok(p) => {
                    let more = p.is_last_page == Some(false);
                    let commits = p.decode::<Commit>().values;
                    let title = suggested_title(&commits, self.from.as_deref().unwrap_or(""));
                    let items: Vec<Value> = commits
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "short": c.display_id,
                                   "message": c.message.as_deref().map(|m| one_line(m.lines().next().unwrap_or(""))),
                                   "author": c.author.as_ref().map(|a| a.display_name.clone().or(a.name.clone())),
                                   "at": c.author_timestamp})
                        })
                        .collect();
                    self.found.insert("title".into(), json!(title));
                    self.found.insert("commits".into(), json!({"items": items, "more": more}))
                }
                Err(e) => return self.fail(format!("Commits: not read — {e}")),
            },
            Read::Person => match errors::json::<User>(outcome, about, None) {
                Ok(u) => {
                    self.people.note(&u);
                    None
                }
                // A name bb cannot find stays as given; Create says what Bitbucket makes of it.
                Err(_) => None,
            },
            // Only Bitbucket's 404 says the branch is not there; any other failure leaves it to the reads after.
            Read::Source => {
                if errors::body(outcome, about, None).is_err_and(|e| e.refusal().is_some_and(|r| r.status == 404)) {
                    let name = self.from.as_deref().unwrap_or("");
                    let name = name.strip_prefix("refs/heads/").unwrap_or(name);
                    self.bad_source =
                        Some(format!("Branch \"{}\" does not exist in {project}/{repo}.", one_line(name)));
                }
                None
            }
            // The form takes its avatars itself.
            Read::Avatar(_) => None,
            // A missing or unreadable file suggests no one; a line bb cannot read is skipped (codeowners.rs).
            Read::CodeOwners => {
                let place =
                    crate::reads::files::Place { project: project.clone(), repo: repo.clone(), ..Default::default() };
                self.owners.rules = Some(match crate::reads::files::browsed_within(outcome, &place, OWNERS_SHARE) {
                    Ok(crate::reads::files::Browsed::Lines(l)) => {
                        crate::codeowners::parse(l.lines.iter().map(String::as_str))
                    }
                    _ => Vec::new(),
                });
                self.ask_owners(f);
                None
            }
            Read::OwnedPaths => {
                let paths = errors::json::<RawPage>(outcome, about, None)
                    .map(|p| {
                        p.values
                            .iter()
                            .filter_map(|c| c.pointer("/path/toString")?.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                self.owners.paths = Some(paths);
                self.ask_owners(f);
                None
            }
            // An owner Bitbucket does not know (or who cannot read the repository) is left out, as Bitbucket leaves them.
            Read::Owner(i) => {
                let user = match self.owners.found.get(usize::from(i)).map(|o| &o.0) {
                    Some(crate::codeowners::Owner::User(_)) => errors::json::<User>(outcome, about, None).ok(),
                    // The user search matches an e-mail address in part: the one whose address it is, whole.
                    Some(crate::codeowners::Owner::Email(mail)) => {
                        errors::json::<RawPage>(outcome, about, None).ok().and_then(|p| {
                            let same = |v: &&Value| {
                                v.get("emailAddress")
                                    .and_then(Value::as_str)
                                    .is_some_and(|a| a.eq_ignore_ascii_case(mail))
                            };
                            p.values.iter().find(same).and_then(|v| serde_json::from_value::<User>(v.clone()).ok())
                        })
                    }
                    None => None,
                };
                if let Some(u) = user {
                    let mut person = self.user(&u);
                    let pattern = self.owners.found.get(usize::from(i)).map(|o| o.1.clone()).unwrap_or_default();
                    person["why"] = json!(format!("owns {}", one_line(&pattern)));
                    if let Some(o) = self.owners.found.get_mut(usize::from(i)) {
                        o.2 = Some(person);
                    }
                }
                None
            }
            Read::Changes => match errors::json::<RawPage>(outcome, about, None) {
                Ok(p) => {
                    let more = p.is_last_page == Some(false);
                    let items: Vec<Value> = p
                        .values
                        .iter()
                        .map(|c| json!({"path": c.pointer("/path/toString"), "type": c.get("type")}))
                        .collect();
                    self.found.insert("files".into(), json!({"items": items, "more": more}))
                }
                Err(e) => return self.fail(format!("Changed files: not read — {e}")),
            },
            // Said as soon as both branches are chosen, not after Create; a failed read only leaves it unsaid
            // (Create still meets Bitbucket's refusal).
            Read::Existing => match errors::json::<RawPage>(outcome, about, None) {
                Ok(p) => {
                    let prs = p.decode::<crate::bitbucket::model::PullRequest>().values;
                    let to = self.to.clone().unwrap_or_default();
                    self.found.insert(
                        "existing".into(),
                        crate::reads::pull_requests::open_into(&prs, &to).unwrap_or(Value::Null),
                    )
                }
                Err(_) => None,
            },
        };
        if f.waiting() > 0 {
            return;
        }
        let pair = self.from.is_some() && self.to.is_some() && self.bad_source.is_none();
        if self.want_reviewers
            && pair
            && let Some(id) = self.found.get("repoId").and_then(Value::as_u64)
        {
            self.want_reviewers = false;
            f.fetch(
                Read::Reviewers,
                crate::reads::pull_requests::default_reviewers_request(
                    &self.project,
                    &self.repo,
                    id,
                    self.from.as_deref().unwrap_or_default(),
                    self.to.as_deref(),
                ),
            );
        }
        if self.want_commits && pair {
            self.want_commits = false;
            for (r, q) in self.compare_requests() {
                f.fetch(r, q);
            }
        }
        if self.want_owners && pair {
            self.want_owners = false;
            for (r, q) in self.owners_requests() {
                f.fetch(r, q);
            }
        }
        if f.waiting() == 0
            && let Some(owners) = self.owners_value()
        {
            self.found.insert("owners".into(), owners);
        }
    }

    fn fail(&mut self, e: impl Into<String>) {
        self.missing.push(e.into());
    }
}

/// The title Bitbucket's create page starts from: the commit's first line when there is one commit,
/// else the source branch's last part in words ("feature/add-paging" → "Add paging"). [assumed]
pub fn suggested_title(commits: &[Commit], from: &str) -> String {
    if let [one] = commits
        && let Some(line) = one.message.as_deref().and_then(|m| m.lines().next()).filter(|l| !l.trim().is_empty())
    {
        return one_line(line.trim());
    }
    let name = from.rsplit('/').next().unwrap_or(from).replace(['-', '_'], " ");
    let mut chars = name.trim().chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

impl Plan for Gather {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        self.take(read, &outcome, f);
        if let Some(e) = &self.failed {
            return Some(ToolResult::error(e.clone()));
        }
        if f.waiting() > 0 {
            return None;
        }
        if let Some(e) = self.missing.first() {
            return Some(ToolResult::error(e.clone()));
        }
        self.found.remove("repoId");
        let n = self.found.values().map(|v| v.as_array().map_or(usize::from(!v.is_null()), Vec::len)).sum::<usize>();
        Some(answer(&format!("{n} suggestions."), Value::Object(std::mem::take(&mut self.found))))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_suggestions_serve_the_forms_kind() {
        let form = crate::tool::Role::ViewCompanion { kind: Some(super::super::form::KIND) };
        assert_eq!(super::SUGGEST_FORM_VALUES.role, form);
    }
}
