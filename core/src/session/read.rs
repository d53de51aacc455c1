//! `resources/read` of a `bitbucket://` URI, and how a call's answer is dressed. A resource is read by
//! running the tool its URI names as a `tools/call` would ([`crate::resources::uri`]): the same checks of
//! its arguments, the admin's scope and `--read-only`, the same reads, deadlines and cancellation; only
//! the answer is dressed as the resource's contents. A tool's own answer carries a `resource_link` to
//! the resource it read, for a client on 2025-06-18 or later.
//!
//! ```text
//!   resources/read {uri} ──parse──▶ (tool, args) ──tools_call──▶ Answer::Now ─┐
//!                         └─ names nothing: -32002 (-32602 on 2026-07-28)     └▶ Later: Pending.dress
//!   Dress::Tool{link}     CallToolResult + {type: resource_link} when not an error
//!   Dress::Resource{uri}  {contents: [{uri, mimeType, text}]} (and a picture's {uri, mimeType, blob}); a tool
//!                         error: not found, else -32603
//! ```

use serde_json::{Value, json};

use super::{Answer, Session, truncate};
use crate::jsonrpc::{ErrorReply, INTERNAL_ERROR, INVALID_PARAMS, Id, RESOURCE_NOT_FOUND};
use crate::protocol::ClientProfile;
use crate::resources::{self, MIME};
use crate::shared::Shared;
use crate::stateless;

/// How long a 2026-07-28 client may keep a resource it read: a pull request moves, so briefly, and
/// only for the person who read it (`cacheScope: "private"`). [assumed: half a minute, about a live
/// card's quickest refresh]
pub(crate) const RESOURCE_TTL_MS: u64 = 30_000;

/// How a call's answer is dressed.
#[derive(Debug, Clone)]
pub(super) enum Dress {
    /// As the tool's result, with a link to the resource it read when there is one.
    Tool {
        /// The `resource_link` content item.
        link: Option<Value>,
    },
    /// As the contents of the resource at `uri` (`resources/read`).
    Resource {
        /// The URI read.
        uri: String,
        /// Bitbucket answered one of the call's reads 404: a failed read is of a missing resource.
        missing: bool,
    },
    /// As the contents of the resource at `uri`, part `index` of the prompt answering request `prompt`
    /// (`session/prompt.rs`): dressed as `resources/read` dresses it, and embedded in the prompt.
    Embedded {
        /// The URI read.
        uri: String,
        /// As [`Dress::Resource`]'s.
        missing: bool,
        /// The `prompts/get` request it belongs to.
        prompt: Id,
        /// Which of the prompt's parts.
        index: usize,
    },
    /// As a `resources/list` result: the person's pull requests, listed (`resources/listing.rs`).
    Listing,
    /// Not sent: a watch's read of the pull request it watches (`session/watch.rs` takes the result).
    Watch,
    /// As a `completion/complete` result: the candidates listed from `source` that start with `typed`
    /// (`session/complete.rs`).
    Completion {
        /// What was listed.
        source: crate::completion::Source,
        /// What the person typed.
        typed: String,
    },
}

impl Dress {
    /// Notes that Bitbucket answered one of the call's reads 404 (a resource's read then failed for want
    /// of it, rather than failed to read it).
    pub(super) fn saw_missing(&mut self) {
        if let Dress::Resource { missing, .. } | Dress::Embedded { missing, .. } = self {
            *missing = true;
        }
    }

    /// The answer to request `id`, from the tool's `result` (a `CallToolResult`): completed for 2026-07-28
    /// (`stateless`) with the server's `version`.
    pub(super) fn finish(
        &self,
        id: &Id,
        mut result: Value,
        stateless: bool,
        version: &str,
    ) -> Result<Value, ErrorReply> {
        let failed = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let text = || -> String {
            let blocks = result.get("content").and_then(Value::as_array).into_iter().flatten();
            blocks.filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n\n")
        };
        match self {
            Dress::Tool { link } => {
                if let (Some(link), false) = (link, failed)
                    && let Some(content) = result.get_mut("content").and_then(Value::as_array_mut)
                {
                    content.push(link.clone());
                }
                Ok(if stateless { stateless::complete(result, version) } else { result })
            }
            Dress::Completion { typed, .. } => {
                let answer = crate::completion::answer(typed, crate::completion::listed(&result).as_ref());
                Ok(if stateless { stateless::complete(answer, version) } else { answer })
            }
            Dress::Watch => Ok(result),
            Dress::Listing => match resources::listing::answer(&result) {
                Ok(listed) if stateless => {
                    Ok(stateless::cacheable_for(stateless::complete(listed, version), RESOURCE_TTL_MS, "private"))
                }
                Ok(listed) => Ok(listed),
                Err(said) => Err(ErrorReply::new(Some(id.clone()), INTERNAL_ERROR, said)),
            },
            // A prompt's part is what a handshake's `resources/read` answers; the prompt completes its own answer.
            Dress::Embedded { uri, missing, .. } => {
                Dress::Resource { uri: uri.clone(), missing: *missing }.finish(id, result, false, version)
            }
            Dress::Resource { uri, missing: absent } if failed => {
                let said = text();
                // Bitbucket's own 404, seen among the call's reads: not the words of its sentence.
                let code = if *absent { missing(stateless) } else { INTERNAL_ERROR };
                let mut reply = ErrorReply::new(Some(id.clone()), code, said);
                reply.data = Some(json!({"uri": uri}));
                Err(reply)
            }
            Dress::Resource { uri, .. } => {
                // A picture (get_file of an image) comes as the resource's bytes beside its sentence.
                let mut items = vec![json!({"uri": uri, "mimeType": MIME, "text": text()})];
                let blocks = result.get("content").and_then(Value::as_array).into_iter().flatten();
                items.extend(blocks.filter(|b| b.get("type").and_then(Value::as_str) == Some("image")).map(|b| {
                    json!({"uri": uri, "mimeType": b.get("mimeType").cloned().unwrap_or(Value::Null), "blob": b.get("data").cloned().unwrap_or(Value::Null)})
                }));
                let contents = json!({"contents": items});
                Ok(if stateless {
                    stateless::cacheable_for(stateless::complete(contents, version), RESOURCE_TTL_MS, "private")
                } else {
                    contents
                })
            }
        }
    }
}

/// The code of a missing resource: -32602 on 2026-07-28, -32002 before (MCP schema 2026-07-28, error codes).
pub(super) fn missing(stateless: bool) -> i64 {
    if stateless { INVALID_PARAMS } else { RESOURCE_NOT_FOUND }
}

/// "Resource not found" for `uri`, with the URI in `data`.
pub(super) fn not_found(id: &Id, uri: &str, stateless: bool, why: &str) -> ErrorReply {
    let mut reply = ErrorReply::new(
        Some(id.clone()),
        missing(stateless),
        format!("Resource not found: `{}`{why}", truncate(uri, 200)),
    );
    reply.data = Some(json!({"uri": uri}));
    reply
}

impl Session {
    /// Reads a `bitbucket://` resource by running the tool its URI names; `client` is a 2026-07-28
    /// request's own (`None`: the session's).
    pub(super) fn read_resource(
        &mut self,
        id: &Id,
        uri: &str,
        client: Option<ClientProfile>,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let stateless = client.is_some();
        let Some(named) = resources::uri::parse(uri) else {
            return Answer::Now(Err(not_found(
                id,
                uri,
                stateless,
                ". bb's resources are the view page and the templates resources/templates/list gives.",
            )));
        };
        let (tool, args) = named.call();
        let params = json!({"name": tool, "arguments": args});
        let dress = Dress::Resource { uri: uri.to_owned(), missing: false };
        match self.tools_call(id, &params, client, tag, batch, Some(dress), sh) {
            // Refused before the tool ran (its arguments, the scope, read-only): a resource this bb does not
            // serve, in the refusal's words. (A dressed answer never carries `isError`.)
            Answer::Now(Ok(v)) if v.get("isError").is_some() => {
                let said = v["content"][0]["text"].as_str().unwrap_or("refused");
                let mut reply = ErrorReply::new(Some(id.clone()), missing(stateless), said.to_owned());
                reply.data = Some(json!({"uri": uri}));
                Answer::Now(Err(reply))
            }
            Answer::Now(Err(mut e)) if e.code == INVALID_PARAMS => {
                e.code = missing(stateless);
                e.message = format!("Resource not found: `{}`. {}", truncate(uri, 200), e.message);
                Answer::Now(Err(e))
            }
            other => other,
        }
    }

    /// Whether this request's client may be sent a `resource_link`: 2025-06-18 or later.
    pub(super) fn takes_links(&self, stateless: bool) -> bool {
        stateless || self.version.is_some_and(resources::links_for)
    }
}
