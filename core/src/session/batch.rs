//! JSON-RPC batches (2025-03-26 only): every message of a batch is handled as if it came alone, and
//! the answers go out together, in one array, once the last request that waits on Bitbucket has
//! answered. A batch is counted call by call against the same bounds as single calls.

use serde_json::Value;

use super::{Reply, Session};
use crate::jsonrpc::{ErrorReply, INVALID_REQUEST, Message};
use crate::limits::MAX_BATCH;
use crate::protocol::ProtocolVersion;
use crate::shared::Shared;

/// A batch whose answers are sent together, once the last of its requests has answered.
#[derive(Debug)]
pub(super) struct Batch {
    /// The tag of the input that brought it.
    pub(super) tag: u64,
    /// How many of its requests still wait on Bitbucket.
    waiting: usize,
    answers: Vec<Value>,
}

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
        self.batches.insert(batch_id, Batch { tag, waiting: 0, answers: Vec::new() });
        for item in items {
            let answer = match item {
                Ok(message) => match self.dispatch(message, tag, Some(batch_id), sh) {
                    Some(Reply::Value(v)) => Some(v),
                    // A batch's answers are values: only a single request gets a message made once.
                    Some(Reply::Bytes(bytes)) => serde_json::from_slice(&bytes).ok(),
                    None => None,
                },
                Err(reply) => Some(reply.to_value()),
            };
            if let Some(answer) = answer
                && let Some(b) = self.batches.get_mut(&batch_id)
            {
                b.answers.push(answer);
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
        if let Some(b) = self.batches.get_mut(&batch) {
            b.waiting = b.waiting.saturating_sub(1);
            b.answers.push(answer);
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
                self.send(Value::Array(b.answers), Some(b.tag), sh);
            }
        }
    }
}
