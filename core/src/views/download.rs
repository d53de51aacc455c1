//! `download_file`: what a view saves through the host (MCP Apps draft `ui/download-file`, where the host offers
//! `downloadFile`): a pull request's patch from its diff view, or a file at a ref from its source view. A view
//! companion, as `refresh_view` is: offered with `show`, hidden from the model (`_meta.ui.visibility: ["app"]`).
//!
//! Requests: one. A patch is `GET …/pull-requests/{id}.patch` ("Stream a patch representing a pull-request" in the
//! DC REST reference; [assumed]: its body is `git diff`'s text); a file is `GET …/raw/{path}?at` (the file's
//! bytes) [reference "Files, blame, search"]. The answer carries the bytes in `_meta["bb/download"]`
//! (`{name, mimeType, text | blob, bytes}`: text when they are UTF-8, else base64), which the page hands to the
//! host; the model's text says only what was saved. Within [`MAX_BYTES`]: a larger file is said, with its page in
//! Bitbucket, rather than carried (a host relays the whole answer, and bb holds it until written).

use serde_json::{Map, Value, json};

use crate::args::{number, string};
use crate::errors::{self, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec};

/// The most bytes one download carries: 8 MiB, a patch of some 100,000 lines.
pub const MAX_BYTES: usize = 8 << 20;

/// The tool: read-only, offered to views and not to the model.
pub const DOWNLOAD_FILE: ToolSpec = ToolSpec {
    name: "download_file",
    title: "Download a file",
    description: "A pull request's patch (pr_id) or a file at a ref (path, at), for a view to save through the host. For views, not for the model.",
    input_schema: schema,
    annotations: Annotations::READ,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::ViewCompanion { kind: None },
    start,
};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "project": {"type": "string", "minLength": 1, "maxLength": 128, "description": "Project key"},
            "repo": {"type": "string", "minLength": 1, "maxLength": 128, "description": "Repository slug"},
            "pr_id": {"type": "integer", "minimum": 1, "description": "The pull request whose patch to save"},
            "path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The file to save"},
            "at": {"type": "string", "maxLength": 1024, "description": "Branch, tag or commit of the file; default branch if omitted"}
        },
        "required": ["project", "repo"],
        "additionalProperties": false
    })
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    if !call.client.renders_views {
        return Step::Done(ToolResult::text(super::NOT_SHOWN));
    }
    let (project, repo) = crate::args::repository(args);
    let repo_path = crate::bitbucket::repo_path(&project, &repo);
    let (what, request) = match (number(args, "pr_id"), string(args, "path")) {
        (Some(id), None) => (
            What::Patch { id, name: format!("{project}-{repo}-pr-{id}.patch") },
            FetchRequest::get(format!("{repo_path}/pull-requests/{id}.patch"), Vec::new()),
        ),
        (None, Some(path)) => {
            let at = string(args, "at").filter(|a| !a.is_empty());
            let query = at.map(|a| vec![("at".to_owned(), a.to_owned())]).unwrap_or_default();
            let name = path.rsplit('/').next().unwrap_or(path).to_owned();
            (
                What::File { path: path.to_owned(), name },
                FetchRequest::get(format!("{repo_path}/raw/{}", crate::bitbucket::file_path(path)), query),
            )
        }
        _ => {
            return Step::Done(ToolResult::error(
                "download_file takes pr_id (the pull request's patch) or path (a file), one of them.",
            ));
        }
    };
    Step::wait(Download { project, repo, what }, vec![((), request)])
}

#[derive(Debug)]
enum What {
    Patch { id: u64, name: String },
    File { path: String, name: String },
}

#[derive(Debug)]
struct Download {
    project: String,
    repo: String,
    what: What,
}

impl Plan for Download {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let pr = match &self.what {
            What::Patch { id, .. } => Some(*id),
            What::File { .. } => None,
        };
        let about = Subject { project: &self.project, repo: &self.repo, pr };
        let bytes = match errors::body(&outcome, about, None) {
            Ok(b) => b,
            Err(e) => return Some(ToolResult::error(e)),
        };
        let (name, mime, what) = match &self.what {
            What::Patch { id, name } => {
                (name.clone(), "text/x-diff", format!("the patch of PR #{id} in {}/{}", self.project, self.repo))
            }
            What::File { path, name } => {
                (name.clone(), "application/octet-stream", format!("{path} in {}/{}", self.project, self.repo))
            }
        };
        if bytes.len() > MAX_BYTES {
            return Some(ToolResult::error(format!(
                "{what} is {} MiB, more than a view saves ({} MiB): open it in Bitbucket.",
                bytes.len() >> 20,
                MAX_BYTES >> 20
            )));
        }
        let mut file = json!({"name": name, "bytes": bytes.len()});
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                file["mimeType"] = json!(if matches!(self.what, What::Patch { .. }) { mime } else { "text/plain" });
                file["text"] = json!(text);
            }
            Err(_) => {
                file["mimeType"] = json!(mime);
                file["blob"] = json!(crate::encoding::base64(bytes));
            }
        }
        let mut meta = Map::new();
        meta.insert("bb/download".into(), file);
        Some(ToolResult {
            text: vec![format!("Read {what} for the person to save ({} bytes).", bytes.len())],
            structured: None,
            is_error: false,
            meta: Some(meta),
            images: Vec::new(),
        })
    }
}
