//! `resources/list` ([`crate::resources::listing`]): a page of the person's open pull requests and of
//! those awaiting their review, read by a plan filed in the table of work as a completion's is (the read
//! limits, shared reads and cancellation apply), and answered dressed as the list.

use serde_json::{Value, json};

use super::read::Dress;
use super::{Answer, Session};
use crate::jsonrpc::{ErrorReply, INVALID_PARAMS, Id};
use crate::plan::Step;
use crate::resources;
use crate::shared::Shared;
use crate::stateless;

impl Session {
    /// Answers `resources/list`: a page of the person's open pull requests and of those awaiting their
    /// review, read as a completion's listing is (the table of work, its limits and cancellation);
    /// nothing while no tool reads a pull request. `stateless` for a 2026-07-28 request.
    pub(super) fn list_resources(
        &mut self,
        id: &Id,
        params: &Value,
        stateless: bool,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let at = match resources::listing::Cursor::read(params) {
            Ok(at) => at,
            Err(why) => return Answer::Now(Err(ErrorReply::new(Some(id.clone()), INVALID_PARAMS, why))),
        };
        let exposed = if stateless { std::sync::Arc::clone(&sh.config.exposed) } else { self.exposed(sh) };
        if exposed.get("get_pull_request").is_none() {
            // Nobody's: the same for every person, as long as bb runs.
            let none = json!({"resources": []});
            return Answer::Now(Ok(if stateless {
                stateless::cacheable(stateless::complete(none, sh.config.version), stateless::LIST_TTL_MS)
            } else {
                none
            }));
        }
        let annotated = self.takes_links(stateless);
        let Step::Wait(plan) = resources::listing::plan(at, sh.config.scope.as_deref(), annotated) else {
            return Answer::Now(Ok(json!({"resources": []})));
        };
        self.read_later(id, plan, "resources/list", tag, batch, stateless, Dress::Listing, sh);
        Answer::Later
    }
}
