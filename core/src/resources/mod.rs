//! Bitbucket as MCP resources: the templates `resources/templates/list` offers, what a
//! `bitbucket://` URI names ([`uri`]), and the `resource_link` a tool's answer carries to the
//! resource it read. A resource is read by its tool: `resources/read` of a URI runs the tool the URI
//! names through the session's call machinery (`session/read.rs`), so both give the same text.
//!
//! The view page, `ui://bb/view`, is a resource of its own (`made.rs`), outside these templates.

pub(crate) mod listing;
pub(crate) mod uri;

use serde_json::{Value, json};

use crate::protocol::ProtocolVersion;
use crate::tool::Exposed;
pub(crate) use uri::{Named, What};

/// The media type of every template's text: the tool's short answer, plain text.
pub(crate) const MIME: &str = "text/plain";

/// One resource template, and the tool that reads what it names.
#[derive(Debug)]
struct Template {
    /// Its RFC 6570 template.
    uri_template: &'static str,
    /// Its name (programmatic).
    name: &'static str,
    /// What a host shows.
    title: &'static str,
    /// What it is.
    description: &'static str,
    /// The tool that reads it: the template is offered only while that tool is exposed.
    tool: &'static str,
}

const TEMPLATES: [Template; 5] = [
    Template {
        uri_template: "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}",
        name: "pull_request",
        title: "Pull request",
        description: "A pull request: state, branches, reviewers, merge outcome, builds and description (as get_pull_request).",
        tool: "get_pull_request",
    },
    Template {
        uri_template: "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}/diff",
        name: "pull_request_diff",
        title: "Pull request diff",
        description: "A pull request's changed files and line-numbered diff (as get_pull_request_diff).",
        tool: "get_pull_request_diff",
    },
    Template {
        uri_template: "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}/threads",
        name: "pull_request_threads",
        title: "Pull request threads",
        description: "A pull request's comment threads (as list_pr_comments).",
        tool: "list_pr_comments",
    },
    Template {
        uri_template: "bitbucket://projects/{project}/repos/{repo}/files/{+path}{?at}",
        name: "file",
        title: "File",
        description: "A file's first lines at a branch, tag or commit, the default branch without one (as get_file).",
        tool: "get_file",
    },
    Template {
        uri_template: "bitbucket://projects/{project}/repos/{repo}/commits/{id}",
        name: "commit",
        title: "Commit",
        description: "A commit: message, author, parents and diff (as get_commit).",
        tool: "get_commit",
    },
];

/// The `resources/templates/list` result: the templates whose tool `exposed` has.
pub(crate) fn templates(exposed: &Exposed) -> Value {
    let listed: Vec<Value> = TEMPLATES
        .iter()
        .filter(|t| exposed.get(t.tool).is_some())
        .map(|t| {
            json!({"uriTemplate": t.uri_template, "name": t.name, "title": t.title,
                   "description": t.description, "mimeType": MIME})
        })
        .collect();
    json!({"resourceTemplates": listed})
}

/// The template `uri` is, when `exposed` offers it (a `ref/resource` of `completion/complete` names one).
pub(crate) fn offered_template(uri: &str, exposed: &Exposed) -> Option<&'static str> {
    TEMPLATES.iter().find(|t| t.uri_template == uri && exposed.get(t.tool).is_some()).map(|t| t.uri_template)
}

/// Whether a client on `version` may be sent a `resource_link` (added in 2025-06-18; 2026-07-28 has it).
pub(crate) fn links_for(version: ProtocolVersion) -> bool {
    version >= ProtocolVersion::V2025_06_18
}

/// The `resource_link` content item for a call of `tool` with these checked arguments, for the tools
/// that read one whole resource (a pull request, its diff, a file, a commit; not a page of threads).
pub(crate) fn link(tool: &str, args: &serde_json::Map<String, Value>) -> Option<Value> {
    let named = Named::of_call(tool, args).filter(|n| !matches!(n.what, What::Threads(_)))?;
    let repo = format!("{}/{}", named.project, named.repo);
    let name = match &named.what {
        What::PullRequest(id) => format!("{repo}#{id}"),
        What::Diff(id) => format!("{repo}#{id} diff"),
        What::Threads(id) => format!("{repo}#{id} threads"),
        What::File { path, at: Some(at) } => format!("{repo} {path}@{at}"),
        What::File { path, at: None } => format!("{repo} {path}"),
        What::Commit(id) => format!("{repo}@{id}"),
    };
    Some(json!({"type": "resource_link", "uri": named.uri(), "name": name, "mimeType": MIME}))
}
