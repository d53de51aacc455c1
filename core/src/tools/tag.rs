//! `create_tag`: a tag made at a branch, a tag or a commit; with a message it is annotated. A write a person
//! can undo (the tag can be deleted) that adds something: exposed without `--allow-writes`.
//!
//! Request: one POST `/rest/api/latest/projects/{key}/repos/{slug}/tags` `{name, startPoint, message?}` → 200 with
//! the tag `{id, displayId, latestCommit, hash?}` [reference "Projects, repositories, branches, commits, tags,
//! users": spec, 9.4 `createTag`], never retried. A name already taken: 409 DuplicateTagException [assumed: the
//! 9.4 spec lists no 409 here; its `/git/latest` twin answers 400 "the provided ref name already existed"], so
//! either status with a message that says "exists" is said as the tag already existing.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::string;
use crate::confirm::{Confirming, Question, quoted};
use crate::errors::{self, Subject, Write};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::refs::RefEntry;
use crate::text::{one_line, short, short_commit};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;

/// `create_tag`, for the catalogue.
pub const SPEC: ToolSpec = ToolSpec {
    name: "create_tag",
    title: "Create tag",
    description: "Tag a branch, tag or commit; a message makes the tag annotated.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::Always { untouched: "no tag was created" },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Repositories),
    annotations: Annotations::ADD,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "name": {"type": "string", "maxLength": 255, "description": "Tag name"},
               "start_point": super::git_ref(),
               "message": {"type": "string", "description": "Annotation"}}),
        &["project", "repo", "name", "start_point"],
    )
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let name = string(args, "name").unwrap_or("").to_owned();
    let start_point = string(args, "start_point").unwrap_or("");
    if call.confirming == Confirming::Ask {
        return Step::Ask(Question {
            message: format!(
                "Create tag {} at {} in {project}/{repo}. A tag others have fetched cannot be taken back.",
                quoted(&name, 120),
                quoted(start_point, 120)
            ),
            confirm: format!("Create tag {}", crate::text::visible(&name).chars().take(80).collect::<String>()),
            pin: Value::Object(Map::new()),
        });
    }
    let request = writes::repository::create_tag(&project, &repo, &name, start_point, string(args, "message"));
    Step::wait(CreateTag { project, repo, name }, vec![((), request)])
}

#[derive(Debug)]
struct CreateTag {
    project: String,
    repo: String,
    name: String,
}

impl Plan for CreateTag {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let name = short(&one_line(&self.name), 100);
        let write =
            Write { effect: "the tag was created", check: "look for it with list_tags before creating it again" };
        Some(match errors::json::<RefEntry>(&outcome, about, Some(write)) {
            Ok(tag) => {
                let kind = if tag.annotated() { "annotated tag" } else { "tag" };
                ToolResult::text(format!(
                    "Created {kind} {} at {} in {}/{}.",
                    short(&one_line(tag.name()), 100),
                    short_commit(tag.commit()),
                    self.project,
                    self.repo
                ))
            }
            Err(e) => match e.refusal().filter(|r| {
                r.exception.ends_with("DuplicateTagException")
                    || r.exception.ends_with("DuplicateRefException")
                    || (matches!(r.status, 400 | 409) && r.message.contains("exist"))
            }) {
                Some(r) => ToolResult::error(format!(
                    "Tag {name} already exists in {}/{} (Bitbucket: \"{}\"): nothing was created; list_tags shows its commit.",
                    self.project, self.repo, r.message
                )),
                None => ToolResult::error(e),
            },
        })
    }
}
