//! `completion/complete` ([`crate::completion`]): answered from the person's cache when a listing of the
//! same source is fresh, else by a plan of reads filed in the table of work as a tool call's are, so the
//! read limits, shared reads and cancellation apply. A failure answers no values.
//!
//! ```text
//!   completion/complete ──completion::read──▶ nothing to complete, outside the scope: no values, nothing read
//!        │                                   └▶ Asked ──cache fresh──▶ values now
//!        └─ unknown ref: -32602                        └─ plan ──reads──▶ answer_later: kept, then the values
//! ```

use std::sync::Arc;

use serde_json::Value;

use super::read::Dress;
use super::{Answer, Session};
use crate::completion;
use crate::jsonrpc::{ErrorReply, INVALID_PARAMS, Id};
use crate::plan::Step;
use crate::shared::Shared;
use crate::stateless;

impl Session {
    /// Answers `completion/complete`, or starts the read that lists its candidates; `stateless` for a
    /// 2026-07-28 request.
    pub(super) fn complete(
        &mut self,
        id: &Id,
        params: &Value,
        is_stateless: bool,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let version = sh.config.version;
        let now = |v: Value| Answer::Now(Ok(if is_stateless { stateless::complete(v, version) } else { v }));
        let exposed = if is_stateless { Arc::clone(&sh.config.exposed) } else { self.exposed(sh) };
        let asked = match completion::read(params, &exposed) {
            Ok(Some(asked)) => asked,
            Ok(None) => return now(completion::answer("", None)),
            Err(why) => return Answer::Now(Err(ErrorReply::new(Some(id.clone()), INVALID_PARAMS, why))),
        };
        let scope = sh.config.scope.clone();
        if !asked.source.in_scope(scope.as_deref()) {
            return now(completion::answer("", None));
        }
        let person = self.principal();
        if let Some(listed) = sh.completions.get(&person, &asked.source, sh.now_ms) {
            return now(completion::answer(&asked.typed, Some(listed)));
        }
        let Step::Wait(plan) = asked.source.plan(scope.as_deref()) else {
            return now(completion::answer("", None));
        };
        let dress = Dress::Completion { source: asked.source, typed: asked.typed };
        self.read_later(id, plan, "completion", tag, batch, is_stateless, dress, sh);
        Answer::Later
    }
}
