//! `prompts/get`: a prompt's resources read as `resources/read` reads them, each by running its tool
//! through the call machinery ([`Session::tools_call`]: arguments, the admin's scope, `--read-only`,
//! reads, deadlines, cancellation, the audit trail), all at once, then embedded in the prompt's
//! messages ([`crate::prompts`]). Each part is a call of its own under an id bb makes from the
//! request's; the prompt is answered when the last part is.
//!
//! ```text
//!   prompts/get ──prompts::read──▶ Asked ──each part──▶ tools_call(part id, Dress::Embedded)
//!        │                                                 ├─ Now: kept      └─ Later: answer_later ─▶ gathered
//!        └─ unknown prompt, bad argument: -32602           the first part refused or missing: -32602
//!   every part kept ─▶ GetPromptResult (the instruction, then each resource embedded)
//! ```

use std::sync::Arc;

use serde_json::{Value, json};

use super::read::Dress;
use super::{Answer, Session};
use crate::jsonrpc::{self, ErrorReply, INTERNAL_ERROR, INVALID_PARAMS, Id, RESOURCE_NOT_FOUND};
use crate::prompts::{self, Asked};
use crate::protocol::ClientProfile;
use crate::shared::Shared;
use crate::stateless;

/// A `prompts/get` waiting on its parts.
#[derive(Debug)]
pub(super) struct Gathering {
    asked: Asked,
    /// Each part as `resources/read` answered it, once it has.
    parts: Vec<Option<Result<Value, ErrorReply>>>,
    /// The tag of the input that brought it.
    pub(super) tag: u64,
    /// The batch it belongs to, if any.
    batch: Option<u64>,
    /// A 2026-07-28 request: its answer is completed.
    stateless: bool,
}

/// The id of part `index` of the prompt answering request `prompt`: a call of its own, in the audit
/// trail and the table of work.
fn part_id(prompt: &Id, index: usize) -> Id {
    Id::from_value(&json!(format!("bb/prompt/{}/{index}", prompt.to_value()))).unwrap_or_else(|| prompt.clone())
}

impl Session {
    /// Answers `prompts/get`, or starts the reads of its parts; `client` is a 2026-07-28 request's own.
    pub(super) fn get_prompt(
        &mut self,
        id: &Id,
        params: &Value,
        client: Option<ClientProfile>,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let stateless = client.is_some();
        let exposed = if stateless { Arc::clone(&sh.config.exposed) } else { self.exposed(sh) };
        let asked = match prompts::read(params, &exposed) {
            Ok(asked) => asked,
            Err(why) => return Answer::Now(Err(ErrorReply::new(Some(id.clone()), INVALID_PARAMS, why))),
        };
        let named = asked.parts();
        let mut gathering = Gathering { asked, parts: named.iter().map(|_| None).collect(), tag, batch, stateless };
        for (index, part) in named.iter().enumerate() {
            let (tool, args) = part.call();
            let sub = part_id(id, index);
            let dress = Dress::Embedded { uri: part.uri(), missing: false, prompt: id.clone(), index };
            let params = json!({"name": tool, "arguments": args});
            let now = match self.tools_call(&sub, &params, client.clone(), tag, None, Some(dress), sh) {
                Answer::Later => continue,
                // Refused before its tool ran (the scope, read-only): the refusal's sentence.
                Answer::Now(Ok(v)) if v.get("isError").is_some() => {
                    let said = v["content"][0]["text"].as_str().unwrap_or("refused").to_owned();
                    Err(ErrorReply::new(Some(sub.clone()), INVALID_PARAMS, said))
                }
                Answer::Now(Ok(contents)) => Ok(contents),
                Answer::Now(Err(reply)) => Err(reply),
                Answer::Made(_) => Err(ErrorReply::new(Some(sub.clone()), INTERNAL_ERROR, "not a resource")),
            };
            self.audit_part(&sub, &now, sh);
            // The pull request itself could not be read: nothing else is.
            if index == 0
                && let Err(reply) = now
            {
                return Answer::Now(Err(failed(id, reply)));
            }
            gathering.parts[index] = Some(now);
        }
        if gathering.parts.iter().all(Option::is_some) {
            return Answer::Now(answer(id, gathering, sh.config.version));
        }
        if let Some(b) = batch {
            self.batch_waits_on_one(b);
        }
        self.prompts.insert(id.clone(), gathering);
        Answer::Later
    }

    /// Part `index` of the prompt answering `prompt` was read (as request `sub`): kept, and the prompt
    /// answered once every part is.
    pub(super) fn gathered(
        &mut self,
        sub: &Id,
        prompt: &Id,
        index: usize,
        dressed: Result<Value, ErrorReply>,
        sh: &mut Shared,
    ) {
        self.audit_part(sub, &dressed, sh);
        let Some(gathering) = self.prompts.get_mut(prompt) else { return };
        if let Some(slot) = gathering.parts.get_mut(index) {
            *slot = Some(dressed);
        }
        if !gathering.parts.iter().all(Option::is_some) {
            return;
        }
        let Some(gathering) = self.prompts.remove(prompt) else { return };
        let (tag, batch) = (gathering.tag, gathering.batch);
        let message = match answer(prompt, gathering, sh.config.version) {
            Ok(result) => jsonrpc::result_value(prompt, result),
            Err(reply) => reply.to_value(),
        };
        match batch {
            Some(b) => self.batch_answered(b, message, sh),
            None => self.send(message, Some(tag), sh),
        }
    }

    /// Drops a prompt the client cancelled: its parts' work is withdrawn and it gets no answer.
    /// `false` when `id` is no prompt waiting on its parts.
    pub(super) fn cancel_prompt(&mut self, id: &Id, sh: &mut Shared) -> bool {
        let Some(gathering) = self.prompts.remove(id) else { return false };
        for (index, part) in gathering.parts.iter().enumerate() {
            if part.is_none() {
                let sub = part_id(id, index);
                self.pending.remove(&sub);
                self.audit_cancelled(&sub, "the client cancelled the prompt", sh);
                sh.work.cancel_steps(self.id, &sub, &mut sh.out);
                sh.work.cancel_call(self.id, &sub, &mut sh.out);
            }
        }
        if let Some(b) = gathering.batch {
            self.batch_lost_one(b, sh);
        }
        self.settle(gathering.tag, sh);
        true
    }

    /// The audit trail's record of a part, when the trail noted it.
    fn audit_part(&mut self, sub: &Id, dressed: &Result<Value, ErrorReply>, sh: &mut Shared) {
        if !self.calls.contains_key(sub) {
            return;
        }
        let message = match dressed {
            Ok(result) => jsonrpc::result_value(sub, result.clone()),
            Err(reply) => ErrorReply { id: Some(sub.clone()), ..reply.clone() }.to_value(),
        };
        self.audit_answer(&message, sh);
    }
}

/// The prompt's answer once every part is kept: an error when the pull request could not be read.
fn answer(id: &Id, gathering: Gathering, version: &'static str) -> Result<Value, ErrorReply> {
    let mut parts = Vec::with_capacity(gathering.parts.len());
    for (index, part) in gathering.parts.into_iter().enumerate() {
        match part {
            Some(Err(reply)) if index == 0 => return Err(failed(id, reply)),
            Some(Ok(contents)) => parts.push(Ok(contents["contents"][0].clone())),
            Some(Err(reply)) => parts.push(Err(reply.message)),
            None => parts.push(Err("it was not read.".to_owned())),
        }
    }
    let result = gathering.asked.result(parts);
    Ok(if gathering.stateless { stateless::complete(result, version) } else { result })
}

/// The prompt's error when its pull request could not be read: a missing one (or a refusal) is an
/// invalid argument, anything else an internal error; in the read's words.
fn failed(id: &Id, reply: ErrorReply) -> ErrorReply {
    let code = if matches!(reply.code, RESOURCE_NOT_FOUND | INVALID_PARAMS) { INVALID_PARAMS } else { INTERNAL_ERROR };
    let mut out = ErrorReply::new(Some(id.clone()), code, reply.message);
    out.data = reply.data;
    out
}
