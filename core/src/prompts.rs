//! Prompts a person picks from the host's menu: what each is called, the arguments it takes, the
//! resources it embeds and the instruction it gives. A prompt's resources are read as `resources/read`
//! reads them, by running their tools through the session's call machinery (`session/prompt.rs`), so a
//! prompt is bound by the same arguments, scope, read-only rule, reads and deadlines as a tool call.
//!
//! ```text
//!   prompts/get {name, arguments: {project, repo, pr_id}} ──read──▶ Asked ──parts──▶ [Named] (resources)
//!        each read as resources/read would ─▶ {type: resource, resource: {uri, mimeType, text}}
//!   messages: the instruction (user), then one embedded resource per part (user)
//! ```
//!
//! A prompt is offered while every tool its parts are read by is exposed (`offered`). [MCP 2025-11-25
//! "Server features → Prompts"; docs/reference/mcp.md "Prompts"]

use serde_json::{Map, Value, json};

use crate::resources::{Named, What};
use crate::tool::Exposed;

/// What a prompt embeds, each a resource of the pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The pull request, with its builds (`get_pull_request` names the failing ones).
    PullRequest,
    /// Its diff, within `get_pull_request_diff`'s budget.
    Diff,
    /// Its comment threads.
    Threads,
}

/// One prompt.
#[derive(Debug)]
pub(crate) struct Prompt {
    /// Its name (programmatic), as `prompts/get` and `ref/prompt` name it.
    pub(crate) name: &'static str,
    title: &'static str,
    description: &'static str,
    parts: &'static [Part],
    /// The instruction, given the pull request's name (`BB/api #1`).
    instruction: fn(&str) -> String,
}

/// The arguments every prompt takes, each required: name, title, description.
pub(crate) const ARGUMENTS: [(&str, &str, &str); 3] = [
    ("project", "Project", "The project key (BB)"),
    ("repo", "Repository", "The repository slug (api)"),
    ("pr_id", "Pull request", "The pull request's id (1)"),
];

const PROMPTS: [Prompt; 2] = [
    Prompt {
        name: "review_pull_request",
        title: "Review a pull request",
        description: "Review a pull request as a colleague would: its diff, builds and open threads attached; findings by file and line, then a verdict, submitted nowhere.",
        parts: &[Part::PullRequest, Part::Diff, Part::Threads],
        instruction: review,
    },
    Prompt {
        name: "explain_pull_request",
        title: "Explain a pull request",
        description: "Explain what a pull request changes and why, for a person new to the code: the pull request and its diff attached.",
        parts: &[Part::PullRequest, Part::Diff],
        instruction: explain,
    },
];

fn review(pr: &str) -> String {
    format!(
        "Review pull request {pr} as a thoughtful colleague would. The pull request (its description, branches, \
reviewers and builds), its diff and its comment threads are attached below.\n\n\
Read the diff closely. Look for bugs, missed cases, unclear names, missing tests and anything that will be hard \
to change later; where a build failed, say what in the change may have caused it; don't repeat what an open thread \
already says, but say whether you agree with it.\n\n\
Write your findings first, grouped by file, each with its line number as the diff numbers it, what is wrong or \
risky, and what you would do instead. Then give a verdict (approve, approve with comments, or needs work) and \
one sentence why. Do not approve, comment or submit anything in Bitbucket: this review is for the person to read \
and act on."
    )
}

fn explain(pr: &str) -> String {
    format!(
        "Explain pull request {pr} to a person who is new to this code. The pull request and its diff are attached \
below.\n\n\
Start with what it changes and why, in two or three sentences, from its title, description and diff. Then walk \
through the changes file by file, in the order that makes them easiest to follow: what each part of the code is \
for, what the change does to it, and how the parts fit together. Say where a reader should start, and what the \
pull request alone leaves unclear. Do not change anything in Bitbucket."
    )
}

impl Prompt {
    /// The tools its parts are read by.
    fn tools(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.parts.iter().map(|p| named("", "", 1, *p).call().0)
    }

    /// Whether `exposed` has every tool its parts are read by.
    fn offered(&self, exposed: &Exposed) -> bool {
        self.tools().all(|t| exposed.get(t).is_some())
    }
}

fn named(project: &str, repo: &str, id: u64, part: Part) -> Named {
    let what = match part {
        Part::PullRequest => What::PullRequest(id),
        Part::Diff => What::Diff(id),
        Part::Threads => What::Threads(id),
    };
    Named { project: project.to_owned(), repo: repo.to_owned(), what }
}

/// The prompt named `name` when `exposed` offers it.
pub(crate) fn find(name: &str, exposed: &Exposed) -> Option<&'static Prompt> {
    PROMPTS.iter().find(|p| p.name == name && p.offered(exposed))
}

/// Whether `exposed` offers any prompt (what the capabilities declare).
pub(crate) fn any_offered(exposed: &Exposed) -> bool {
    PROMPTS.iter().any(|p| p.offered(exposed))
}

/// The `prompts/list` result: the prompts `exposed` offers.
pub(crate) fn list(exposed: &Exposed) -> Value {
    let arguments: Vec<Value> = ARGUMENTS
        .iter()
        .map(|(name, title, description)| {
            json!({"name": name, "title": title, "description": description, "required": true})
        })
        .collect();
    let prompts: Vec<Value> = PROMPTS
        .iter()
        .filter(|p| p.offered(exposed))
        .map(|p| json!({"name": p.name, "title": p.title, "description": p.description, "arguments": arguments}))
        .collect();
    json!({"prompts": prompts})
}

/// A `prompts/get` read: which prompt, for which pull request.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    prompt: &'static Prompt,
    project: String,
    repo: String,
    id: u64,
}

/// Reads `prompts/get`'s params against what `exposed` offers: the sentence of an `Invalid params` error
/// when the prompt is unknown or an argument is missing or invalid.
pub(crate) fn read(params: &Value, exposed: &Exposed) -> Result<Asked, String> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err("Invalid params: `prompts/get` needs the prompt's `name`.".into());
    };
    let Some(prompt) = find(name, exposed) else {
        let offered: Vec<&str> = PROMPTS.iter().filter(|p| p.offered(exposed)).map(|p| p.name).collect();
        let shown: String = name.chars().take(100).collect();
        return Err(match offered.is_empty() {
            true => format!("Invalid params: unknown prompt `{shown}`; this bb offers no prompts."),
            false => format!("Invalid params: unknown prompt `{shown}`; this bb offers {}.", offered.join(", ")),
        });
    };
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err("Invalid params: `arguments` must be an object of strings.".into()),
    };
    let text = |key: &str| -> Result<String, String> {
        let value = match args.get(key) {
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        match value.is_empty() {
            true => Err(format!("Invalid params: {} needs the argument `{key}` ({}).", prompt.name, hint(key))),
            false => Ok(value),
        }
    };
    let (project, repo, id) = (text("project")?, text("repo")?, text("pr_id")?);
    let id = id.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
        format!("Invalid params: `pr_id` must be a pull request's id, a whole number from 1; got `{}`.", short(&id))
    })?;
    Ok(Asked { prompt, project, repo, id })
}

fn hint(key: &str) -> &'static str {
    ARGUMENTS.iter().find(|(name, ..)| *name == key).map_or("", |(.., description)| description)
}

fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

impl Asked {
    /// The resources it embeds, in order: the tool and arguments each is read by, and its URI.
    pub(crate) fn parts(&self) -> Vec<Named> {
        self.prompt.parts.iter().map(|p| named(&self.project, &self.repo, self.id, *p)).collect()
    }

    /// The pull request's name as the instruction says it.
    fn pull_request(&self) -> String {
        format!("{}/{} #{}", self.project, self.repo, self.id)
    }

    /// The `prompts/get` result, from each part as `resources/read` answered it: its contents, or the
    /// sentence that says why it could not be read (said to the model in place of the resource).
    pub(crate) fn result(&self, parts: Vec<Result<Value, String>>) -> Value {
        let mut messages = vec![json!({"role": "user", "content": {"type": "text",
                                       "text": (self.prompt.instruction)(&self.pull_request())}})];
        for (named, part) in self.parts().iter().zip(parts) {
            let content = match part {
                Ok(contents) => json!({"type": "resource", "resource": contents}),
                Err(why) => json!({"type": "text", "text": format!("{} could not be read: {why}", named.uri())}),
            };
            messages.push(json!({"role": "user", "content": content}));
        }
        json!({"description": format!("{}: {}", self.prompt.title, self.pull_request()), "messages": messages})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_prompt_reads_its_parts_with_the_tools_the_templates_name() {
        let review: Vec<&str> = PROMPTS[0].tools().collect();
        assert_eq!(review, ["get_pull_request", "get_pull_request_diff", "list_pr_comments"]);
        let explain: Vec<&str> = PROMPTS[1].tools().collect();
        assert_eq!(explain, ["get_pull_request", "get_pull_request_diff"]);
    }
}
