//! `update_pr_comment`: edits a comment's text, resolves or reopens a task, with the comment's version read
//! by bb itself; nothing is written when nothing would change.
//!
//! Requests: `GET …/pull-requests/{id}/comments/{commentId}` for the comment and its `version`, then
//! `PUT …/comments/{commentId}` `{version, text?, state?}` (the version is required; a stale one is 409
//! CommentOutOfDateException) [spec: 9.4 `getComment_2`, `updateComment_2`]. Tasks are comments with
//! `severity: BLOCKER`, resolved with `state: RESOLVED` (7.0+) [reference "Pull requests": spec, rec]. The PUT
//! is never retried: on a 409 the comment is read once more (a read, not a second write) so the answer can say
//! what it is now. 2 requests; 1 when nothing would change or the comment is missing; 3 after a 409.

use serde_json::{Map, Value, json};

use super::object;
use super::versioned::{self, Written};
use crate::args::{number, string};
use crate::bitbucket::model::Comment;
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_request;
use crate::text::{cap, one_line, when};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes::comments;

/// The text quoted back in an answer (what was replaced, what the comment says now).
const QUOTE_CHARS: usize = 500;

/// `update_pr_comment`, for the catalogue. Destructive: replaced text is gone from Bitbucket (it keeps no
/// earlier texts; the answer quotes what was replaced). Idempotent: the same call again finds nothing to change
/// and writes nothing. A write a person can undo, so exposed without `--allow-writes`.
pub const SPEC: ToolSpec = ToolSpec {
    name: "update_pr_comment",
    title: "Update pull request comment",
    description: "Edit a comment's text or resolve/reopen a task; bb reads its version.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations { read_only: false, destructive: true, idempotent: true, open_world: true },
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "comment_id": {"type": "integer", "minimum": 1, "description": "Comment or task id"},
               "text": {"type": "string", "minLength": 1, "description": "New text (Markdown)"},
               "state": {"type": "string", "enum": ["RESOLVED", "OPEN"], "description": "For a task"}}),
        &["project", "repo", "pr_id", "comment_id"],
    )
}

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let text = string(args, "text").map(str::to_owned);
    let state = string(args, "state").map(str::to_owned);
    if text.is_none() && state.is_none() {
        return Step::Done(ToolResult::error("Nothing to update: give text, state, or both."));
    }
    let edit = Edit { project, repo, id, comment: number(args, "comment_id").unwrap_or(0), text, state, read: None };
    let first = pull_request::comment_request(&edit.project, &edit.repo, edit.id, edit.comment);
    Step::wait(edit, vec![(EditRead::Comment, first)])
}

/// The reads and the write of `update_pr_comment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditRead {
    /// The comment, for its version and what it says.
    Comment,
    /// The `PUT` of the new text or state, with the version read.
    Update,
    /// The comment once more, after a 409.
    Again,
}

#[derive(Debug)]
struct Edit {
    project: String,
    repo: String,
    id: u64,
    comment: u64,
    text: Option<String>,
    state: Option<String>,
    /// The comment as bb read it before writing.
    read: Option<Comment>,
}

impl Edit {
    fn noun(c: &Comment) -> &'static str {
        if c.is_task() { "task" } else { "comment" }
    }

    /// The update, or the answer when there is nothing to write.
    fn plan(&self, c: &Comment) -> Result<FetchRequest, ToolResult> {
        let (n, noun) = (self.comment, Self::noun(c));
        let current = c.state.as_deref().unwrap_or("OPEN");
        if self.state.is_some() && !c.is_task() {
            return Err(ToolResult::error(format!(
                "Comment #{n} is not a task, so it cannot be resolved or reopened; nothing was changed."
            )));
        }
        let new_text = self.text.as_deref().filter(|t| Some(*t) != c.text.as_deref());
        let new_state = self.state.as_deref().filter(|s| *s != current);
        let Some(version) = c.version else {
            return Err(ToolResult::error(format!(
                "Bitbucket did not say {noun} #{n}'s version, so bb cannot update it; nothing was changed."
            )));
        };
        if new_text.is_none() && new_state.is_none() {
            let state = if c.is_task() { format!(" and is {}", words(current)) } else { String::new() };
            return Err(ToolResult::text(format!(
                "{} #{n} already says that{state}: nothing to change.",
                capitalised(noun)
            )));
        }
        Ok(comments::edit(&self.project, &self.repo, self.id, n, version, new_text, new_state))
    }

    fn done(&self, c: &Comment) -> String {
        let before = self.read.as_ref();
        let noun = Self::noun(c);
        let mut did = Vec::new();
        if let Some(s) = &self.state
            && before.and_then(|b| b.state.as_deref()) != Some(s.as_str())
        {
            did.push(if s == "RESOLVED" { "resolved" } else { "reopened" });
        }
        let edited = self.text.is_some() && before.and_then(|b| b.text.as_deref()) != self.text.as_deref();
        if edited {
            did.insert(0, "edited");
        }
        let mut out = format!(
            "{} {noun} #{} on PR #{} in {}/{} (version {}).",
            capitalised(&did.join(" and ")),
            self.comment,
            self.id,
            self.project,
            self.repo,
            c.version.map(|v| v.to_string()).unwrap_or_else(|| "?".into())
        );
        if edited {
            let was = before.and_then(|b| b.text.as_deref()).unwrap_or("");
            out.push_str(&format!(" It said before: {}", cap(was, QUOTE_CHARS, "text", "")));
        }
        out
    }

    /// What the comment is now, after a 409, in one sentence.
    fn now(&self, c: &Comment) -> String {
        let noun = Self::noun(c);
        let was = self.read.as_ref().and_then(|r| r.version).map(|v| v.to_string()).unwrap_or_else(|| "?".into());
        let mut state = String::new();
        if c.is_task() {
            state = format!(", {}", words(c.state.as_deref().unwrap_or("OPEN")));
            if let Some(r) = c.resolver.as_ref().filter(|_| c.state.as_deref() == Some("RESOLVED")) {
                state.push_str(&format!(" by {}", r.handle()));
            }
        }
        format!(
            "{} #{} changed after bb read it (version {was}, now {}) and was not updated: it is now a {noun}{state}, last changed {}, saying: {}",
            capitalised(noun),
            self.comment,
            c.version.map(|v| v.to_string()).unwrap_or_else(|| "?".into()),
            when(c.updated_date),
            one_line(&cap(c.text.as_deref().unwrap_or(""), QUOTE_CHARS, "text", ""))
        )
    }
}

fn words(state: &str) -> &'static str {
    if state == "RESOLVED" { "resolved" } else { "open" }
}

fn capitalised(s: &str) -> String {
    s.chars().take(1).flat_map(char::to_uppercase).chain(s.chars().skip(1)).collect()
}

impl Plan for Edit {
    type Read = EditRead;

    fn on(&mut self, read: EditRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, EditRead>) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: Some(self.id) };
        match read {
            EditRead::Comment => {
                let read = versioned::read(&outcome, about, |c| self.plan(c), f, EditRead::Update);
                read.map(|c| self.read = Some(c)).err()
            }
            EditRead::Update => {
                let write = Write {
                    effect: "the comment was updated",
                    check: "read it with list_pr_comments (or list_pr_tasks) before trying again",
                };
                match versioned::written(&outcome, about, write, errors::json::<Comment>) {
                    Written::Done(c) => Some(ToolResult::text(self.done(&c))),
                    // What the comment is now takes a read: a 409 carries only the version.
                    Written::Stale { .. } => {
                        f.fetch(
                            EditRead::Again,
                            pull_request::comment_request(&self.project, &self.repo, self.id, self.comment),
                        );
                        None
                    }
                    Written::Failed(e) => Some(ToolResult::error(e)),
                }
            }
            EditRead::Again => Some(ToolResult::error(match errors::json::<Comment>(&outcome, about, None) {
                Ok(c) => self.now(&c),
                Err(e) => versioned::again_failed(&format!("Comment #{}", self.comment), "updated", &e),
            })),
        }
    }
}
