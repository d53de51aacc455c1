//! `enable_toolset`: a session turns a group of bb's tools on for itself. What it sees from then on is
//! the exposure with that group ([`crate::caches::Caches::session_made`]: made once per set of
//! groups, its tool list kept as bytes like the server's), and its client is told with
//! `notifications/tools/list_changed`, sent before the answer on the same input (over HTTP, the POST's
//! event stream), so that a client that lists again finds the tools there by the time the model reads
//! the answer. When the group brings prompts or resource templates (their tools' group), the client is
//! told `notifications/prompts/list_changed` and `notifications/resources/list_changed` the same way.

use serde_json::{Value, json};

use super::Session;
use crate::logging::Level;
use crate::plan::ToolResult;
use crate::shared::Shared;
use crate::tool::{Exposed, Role};
use crate::toolsets::{Toolset, Toolsets, WRITES};

impl Session {
    /// Turns on the group `args` names for this session.
    pub(super) fn enable_toolset(&mut self, args: Option<&Value>, tag: u64, sh: &mut Shared) -> ToolResult {
        let before = self.exposed(sh);
        let offer = before.offerable();
        let Some(name) = args.and_then(|a| a.get("toolset")).and_then(Value::as_str) else {
            return ToolResult::error(format!("enable_toolset needs `toolset`: {}.", offered(offer)));
        };
        if name == WRITES {
            return ToolResult::error(
                "`writes` (merging, auto-merge, applying a suggestion, setting a build status) cannot be turned on \
                 from a conversation: only the person who runs bb gives it (--allow-writes).",
            );
        }
        let Some(group) = Toolset::parse(name) else {
            let shown: String = name.chars().take(60).collect();
            return ToolResult::error(format!("`{shown}` is not a toolset. {}.", offered(offer)));
        };
        if !offer.contains(group) {
            let tools = of_group(&before, group);
            return if tools.is_empty() {
                ToolResult::error(format!("{name} has no tool this server exposes: its operator excluded them."))
            } else {
                ToolResult::text(format!("{name} is already on: {}.", tools.join(", ")))
            };
        }
        let widened = self.widened.with(group);
        let Some(made) = sh.caches.session_made(&sh.config, widened) else {
            return ToolResult::error("This server's tool list is fixed: no toolset can be turned on.");
        };
        let after = std::sync::Arc::clone(made.exposed());
        self.widened = widened;
        self.sees = Some(made);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}), Some(tag), sh);
        // The prompts and the resource templates follow the tools they are read with.
        if crate::prompts::list(&before) != crate::prompts::list(&after) {
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}), Some(tag), sh);
        }
        if crate::resources::templates(&before) != crate::resources::templates(&after) {
            self.send(json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}), Some(tag), sh);
        }
        self.log(Level::Info, format!("toolset {name} turned on for the session"), sh);

        let added: Vec<&str> = after.tools().iter().filter(|t| before.get(t.name).is_none()).map(|t| t.name).collect();
        let mut text = format!("Turned on {name} for this session: {}. Your tool list has them now.", added.join(", "));
        let kinds: Vec<&str> = after.kinds().iter().filter(|k| before.kind(k.name).is_none()).map(|k| k.name).collect();
        if !kinds.is_empty() && after.get("show").is_some() {
            text.push_str(&format!(" show can draw {} too.", kinds.join(", ")));
        }
        if !after.offerable().is_empty() {
            text.push_str(&format!(" Still off: {}.", offered(after.offerable())));
        }
        ToolResult::text(text)
    }
}

/// The groups of `offer`, each with what it is for.
fn offered(offer: Toolsets) -> String {
    let groups: Vec<String> = offer.groups().map(|g| format!("{} ({})", g.name(), g.about())).collect();
    if groups.is_empty() { "every toolset is on".into() } else { format!("one of {}", groups.join("; ")) }
}

/// The exposed tools of `group`.
fn of_group(exposed: &Exposed, group: Toolset) -> Vec<&'static str> {
    exposed.tools().iter().filter(|t| t.role == Role::Data(group)).map(|t| t.name).collect()
}
