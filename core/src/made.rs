//! The answers that never change while a server runs, made once and kept as bytes: the first page of
//! `tools/list` and the view page (`resources/read`), as each protocol era writes them, and the
//! instructions. Servers given the same [`crate::Caches`] (the HTTP shell runs eight) share them.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::jsonrpc::Id;
use crate::listing::tools_page;
use crate::protocol::VIEW_MIME_TYPE;
use crate::stateless;
use crate::tool::{Exposed, VIEW_URI};

/// An answer made once when the server starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Made {
    /// The first page of `tools/list` (exposure is fixed at start), for a client that renders views
    /// (`apps`: with the tools only views call) or not.
    ToolsList {
        /// The client declared the MCP Apps extension with bb's view type.
        apps: bool,
    },
    /// `resources/read` of the view page (static, the same for everyone).
    View,
    /// [`Made::ToolsList`] as 2026-07-28 answers it: complete, with serverInfo and cache hints.
    StatelessToolsList {
        /// The request declared the MCP Apps extension with bb's view type.
        apps: bool,
    },
    /// [`Made::View`] as 2026-07-28 answers it.
    StatelessView,
}

/// The results that never change, serialized, so a request for them costs a copy rather than building
/// and serializing 20 KB (the tool list) or 170 KB (the page) again. Only the bytes are kept (a batch,
/// which needs a value, parses them); each is made when first asked for, so an idle server holds none
/// and has run none of the code that makes them.
#[derive(Debug)]
pub(crate) struct MadeOnce {
    // What the answers are made from: the exposure (by identity; held, so its address is never
    // another's), the version, the page size.
    made_from: (Arc<Exposed>, &'static str, usize),
    instructions: std::sync::OnceLock<String>,
    /// The first page of `tools/list`, without and with the tools only views call.
    tools_list: [std::sync::OnceLock<Vec<u8>>; 2],
    stateless_tools_list: [std::sync::OnceLock<Vec<u8>>; 2],
    stateless_view: std::sync::OnceLock<Vec<u8>>,
}

/// The page is the same for every server in the process, so it is made once per process, not per
/// server (a test or fuzz run that makes thousands of servers serializes its 160 KB once).
static VIEW: std::sync::LazyLock<Vec<u8>> =
    std::sync::LazyLock::new(|| serde_json::to_vec(&view_resource()).unwrap_or_default());

impl MadeOnce {
    /// Answers for this exposure, bb version and `tools/list` page size, none made yet.
    pub(crate) fn new(exposed: Arc<Exposed>, version: &'static str, page_size: usize) -> MadeOnce {
        MadeOnce {
            made_from: (exposed, version, page_size),
            instructions: std::sync::OnceLock::new(),
            tools_list: Default::default(),
            stateless_tools_list: Default::default(),
            stateless_view: std::sync::OnceLock::new(),
        }
    }

    /// Whether these are the answers for this exposure (the same one, not an equal one), version and page size.
    pub(crate) fn made_for(&self, exposed: &Arc<Exposed>, version: &str, page_size: usize) -> bool {
        let (mine, my_version, my_page) = &self.made_from;
        Arc::ptr_eq(mine, exposed) && *my_version == version && *my_page == page_size
    }

    /// Whether these answers were made for this version and page size (whatever the exposure).
    pub(crate) fn made_with(&self, version: &str, page_size: usize) -> bool {
        self.made_from.1 == version && self.made_from.2 == page_size
    }

    /// The exposure these answers were made from.
    pub(crate) fn exposed(&self) -> &Arc<Exposed> {
        &self.made_from.0
    }

    /// The instructions given at initialize and by `server/discover`, from the exposure.
    pub(crate) fn instructions(&self) -> &str {
        self.instructions.get_or_init(|| crate::instructions::for_exposed(&self.made_from.0))
    }

    fn made(&self, which: Made) -> &[u8] {
        let (exposed, version, page_size) = &self.made_from;
        let first_page = |apps| tools_page(exposed, *page_size, 0, apps);
        match which {
            Made::ToolsList { apps } => self.tools_list[usize::from(apps)]
                .get_or_init(|| serde_json::to_vec(&first_page(apps)).unwrap_or_default()),
            Made::View => &VIEW,
            Made::StatelessToolsList { apps } => self.stateless_tools_list[usize::from(apps)].get_or_init(|| {
                let v = stateless::cacheable(stateless::complete(first_page(apps), version), stateless::LIST_TTL_MS);
                serde_json::to_vec(&v).unwrap_or_default()
            }),
            Made::StatelessView => self.stateless_view.get_or_init(|| {
                let v = stateless::cacheable(stateless::complete(view_resource(), version), stateless::VIEW_TTL_MS);
                serde_json::to_vec(&v).unwrap_or_default()
            }),
        }
    }

    /// The whole JSON-RPC answer to request `id`: `{"id":…,"jsonrpc":"2.0","result":…}`, its keys in
    /// the order serde_json's sorted maps write every other answer.
    pub(crate) fn message(&self, id: &Id, which: Made) -> Vec<u8> {
        let result = self.made(which);
        let id = serde_json::to_vec(&id.to_value()).unwrap_or_default();
        let mut out = Vec::with_capacity(result.len() + id.len() + 40);
        out.extend_from_slice(b"{\"id\":");
        out.extend_from_slice(&id);
        out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"result\":");
        out.extend_from_slice(result);
        out.push(b'}');
        out
    }
}

/// The result of `resources/read` for the view page. No `csp` key: the page fetches nothing and
/// declares no domains (ADR-101).
pub(crate) fn view_resource() -> Value {
    json!({"contents": [{
        "uri": VIEW_URI,
        "mimeType": VIEW_MIME_TYPE,
        "text": bb_assets::VIEW_HTML,
        "_meta": {"ui": {"prefersBorder": true}},
    }]})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::ServerConfig;
    use crate::{Caches, Catalogue, ExposureOptions};

    #[test]
    fn servers_given_one_caches_share_the_answers_made_once_unless_what_they_depend_on_differs() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let config = ServerConfig::new(exposed, "0.0.0-test");
        let caches = Caches::new();
        let first = caches.made_once(&config);
        let mut clone = config.clone();
        clone.avatar_cache_bytes /= 8;
        let shard = caches.clone();
        assert!(Arc::ptr_eq(&first, &shard.made_once(&clone)), "the HTTP shell's shards share them");
        clone.tools_page_size = 3;
        let paged = shard.made_once(&clone);
        assert!(!Arc::ptr_eq(&first, &paged));
        assert_eq!(
            serde_json::from_slice::<Value>(paged.made(Made::ToolsList { apps: true })).unwrap()["tools"]
                .as_array()
                .map(Vec::len),
            Some(3)
        );
        let other = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let mut another = config.clone();
        another.exposed = other;
        assert!(!Arc::ptr_eq(&first, &caches.made_once(&another)), "another exposure makes its own");
    }

    #[test]
    fn the_answers_made_once_are_made_when_first_asked_for_and_then_kept() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let made = Caches::new().made_once(&ServerConfig::new(exposed, "0.0.0-test"));
        // An idle server holds none of them (bench/compare's idle RSS counts on it).
        assert!(made.tools_list.iter().chain(&made.stateless_tools_list).all(|m| m.get().is_none()));
        assert!(made.instructions.get().is_none() && made.stateless_view.get().is_none());
        let first = made.made(Made::ToolsList { apps: false }).as_ptr();
        let asked = |m: &[std::sync::OnceLock<Vec<u8>>; 2]| m.iter().map(|m| m.get().is_some()).collect::<Vec<_>>();
        assert_eq!(
            (asked(&made.tools_list), asked(&made.stateless_tools_list)),
            (vec![true, false], vec![false, false])
        );
        assert_eq!(made.made(Made::ToolsList { apps: false }).as_ptr(), first, "made once, then the same bytes");
        assert!(made.instructions().starts_with("bb reads and acts on Bitbucket"));
        assert!(made.instructions.get().is_some());
    }
}
