//! JSON-RPC batches (2025-03-26 only): every message of a batch is handled as if it came alone, and
//! the answers go out together, in one array, once the last request that waits on Bitbucket has
//! answered. A batch is counted call by call against the same bounds as single calls, and its answers
//! together against [`BATCH_ANSWER_BYTES`]: an answer that would take them past it is left out, and
//! its request is answered with a sentence that says so and how to ask again, so a batch of forty large
//! views never becomes one answer of hundreds of megabytes that sits in memory until the client reads it.

use serde_json::{Value, json};

use super::{Reply, Session};
use crate::contract::{Output, Said};
use crate::jsonrpc::{ErrorReply, INVALID_REQUEST, Message};
use crate::limits::{BATCH_ANSWER_BYTES, MAX_BATCH};
use crate::protocol::ProtocolVersion;
use crate::shared::Shared;

/// A batch whose answers are sent together, once the last of its requests has answered.
#[derive(Debug)]
pub(super) struct Batch {
    /// The tag of the input that brought it.
    pub(super) tag: u64,
    /// How many of its requests still wait on Bitbucket.
    waiting: usize,
    /// Its answers so far, each encoded once, as it came.
    answers: Vec<Vec<u8>>,
    /// The bytes they take.
    bytes: usize,
}

impl Batch {
    /// Adds an encoded answer, or, when it would take the batch's answers past [`BATCH_ANSWER_BYTES`],
    /// the sentence that says it was left out.
    fn add(&mut self, answer: Vec<u8>) {
        let answer = if self.bytes.saturating_add(answer.len()) > BATCH_ANSWER_BYTES {
            serde_json::to_vec(&left_out(&answer)).unwrap_or_default()
        } else {
            answer
        };
        self.bytes = self.bytes.saturating_add(answer.len());
        self.answers.push(answer);
    }

    /// The batch's answer: its answers in one JSON array.
    fn message(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes + self.answers.len() + 1);
        out.push(b'[');
        for (i, a) in self.answers.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&a);
        }
        out.push(b']');
        out
    }
}

/// What a request whose answer did not fit in its batch is answered with: a tool call's result that
/// says so (the model reads it), or for any other request a JSON-RPC error. Only the answer's id and
/// whether it is a tool's result are read of it.
fn left_out(answer: &[u8]) -> Value {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        id: Value,
        result: Option<ProbeResult>,
    }
    #[derive(serde::Deserialize)]
    struct ProbeResult {
        content: Option<serde::de::IgnoredAny>,
    }
    let probe = serde_json::from_slice::<Probe>(answer).ok();
    let tool = probe.as_ref().and_then(|p| p.result.as_ref()).is_some_and(|r| r.content.is_some());
    let id = probe.map_or(Value::Null, |p| p.id);
    let cap = BATCH_ANSWER_BYTES >> 20;
    let mb = ((answer.len() + (1 << 19)) >> 20).max(1);
    let words = format!(
        "This answer (about {mb} MB) was left out: the answers of one batch may take at most {cap} MB together, and the \
         others took that. Ask for it again on its own, or in a smaller batch."
    );
    if tool {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": words}], "isError": true}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": ANSWER_LEFT_OUT, "message": words}})
    }
}

/// The JSON-RPC error of a request whose answer did not fit in its batch (JSON-RPC's range for
/// implementation-defined server errors).
const ANSWER_LEFT_OUT: i64 = -32001;

impl Session {
    pub(super) fn handle_batch(&mut self, items: Vec<Result<Message, ErrorReply>>, tag: u64, sh: &mut Shared) {
        if !self.version.is_some_and(ProtocolVersion::accepts_batches) {
            let reply = ErrorReply::new(
                None,
                INVALID_REQUEST,
                "Invalid request: JSON-RPC batches are accepted only under protocol version 2025-03-26.",
            );
            self.send(reply.to_value(), Some(tag), sh);
            return;
        }
        if items.len() > MAX_BATCH {
            let reply = ErrorReply::new(
                None,
                INVALID_REQUEST,
                format!(
                    "Invalid request: a batch may hold at most {MAX_BATCH} messages; send them in smaller batches."
                ),
            );
            self.send(reply.to_value(), Some(tag), sh);
            return;
        }
        let batch_id = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(batch_id, Batch { tag, waiting: 0, answers: Vec::new(), bytes: 0 });
        for item in items {
            let answer = match item {
                Ok(message) => match self.dispatch(message, tag, Some(batch_id), sh) {
                    Some(Reply::Value(v)) => {
                        self.audit_answer(&v, sh);
                        serde_json::to_vec(&v).ok()
                    }
                    Some(Reply::Bytes(bytes)) => Some(bytes),
                    None => None,
                },
                Err(reply) => serde_json::to_vec(&reply.to_value()).ok(),
            };
            if let Some(answer) = answer
                && let Some(b) = self.batches.get_mut(&batch_id)
            {
                b.add(answer);
            }
        }
        self.finish_batch_if_done(batch_id, sh);
    }

    /// One more of the batch's requests waits on Bitbucket.
    pub(super) fn batch_waits_on_one(&mut self, batch: u64) {
        if let Some(b) = self.batches.get_mut(&batch) {
            b.waiting += 1;
        }
    }

    /// One of the batch's requests that waited has its answer.
    pub(super) fn batch_answered(&mut self, batch: u64, answer: Value, sh: &mut Shared) {
        self.audit_answer(&answer, sh);
        if let Some(b) = self.batches.get_mut(&batch) {
            b.waiting = b.waiting.saturating_sub(1);
            if let Ok(answer) = serde_json::to_vec(&answer) {
                b.add(answer);
            }
        }
        self.finish_batch_if_done(batch, sh);
    }

    /// One of the batch's requests that waited was cancelled: it gets no answer.
    pub(super) fn batch_lost_one(&mut self, batch: u64, sh: &mut Shared) {
        if let Some(b) = self.batches.get_mut(&batch) {
            b.waiting = b.waiting.saturating_sub(1);
        }
        self.finish_batch_if_done(batch, sh);
    }

    fn finish_batch_if_done(&mut self, batch_id: u64, sh: &mut Shared) {
        if self.batches.get(&batch_id).is_some_and(|b| b.waiting == 0)
            && let Some(b) = self.batches.remove(&batch_id)
        {
            // A batch of notifications only is answered with nothing at all (JSON-RPC 2.0 §6).
            if !b.answers.is_empty() {
                let tag = b.tag;
                sh.out.push_back(Output::Send {
                    session: self.id,
                    tag: Some(tag),
                    message: b.message(),
                    said: Said::Result,
                });
            }
        }
    }
}
