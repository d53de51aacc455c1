//! The stateless revision, 2026-07-28: what one request says about its client, and how its answer
//! is dressed. There is no handshake: each request names its revision and carries the client's
//! capabilities (and, optionally, its name and the log level it wants) in `params._meta`, and is
//! answered on its own, so any bb process can answer any request.
//!
//! ```text
//!   request ──era_of──▶ Handshake        no `_meta` revision: the session's own (after `initialize`)
//!                   ├─▶ Stateless(meta)  `_meta` names 2026-07-28: served now, from this request alone
//!                   └─▶ Unsupported      `_meta` names anything else: UnsupportedProtocolVersionError
//!
//!   result ──complete──▶ + resultType "complete", + _meta serverInfo
//!          ──cacheable─▶ + ttlMs, cacheScope      (server/discover, tools/list, resources/list|read)
//! ```
//!
//! What bb keeps fixed per process (the exposure, the view page) is cacheable; nothing it answers
//! varies per connection. bb's lists never change while it runs, so it has nothing to send on
//! `subscriptions/listen` and does not offer it.

use serde_json::{Map, Value, json};

use crate::jsonrpc::{ErrorReply, Id, UNSUPPORTED_PROTOCOL_VERSION};
use crate::logging::Level;
use crate::protocol::{
    ClientProfile, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, ProtocolVersion, SERVER_INFO_KEY, UI_EXTENSION,
};

/// How long a client may keep `tools/list`, `resources/list` and `server/discover`: the exposure
/// is fixed while a process runs, but an operator may restart bb with other `--tools`.
pub const LIST_TTL_MS: u64 = 10 * 60 * 1000;
/// How long a client may keep the view page (`ui://bb/view`): it changes only with bb's version.
pub const VIEW_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The era a request speaks in.
#[derive(Debug)]
pub(crate) enum Era {
    /// No revision in `_meta`: the session's handshake decides.
    Handshake,
    /// 2026-07-28: served from this request alone.
    Stateless(RequestMeta),
    /// `_meta` names a revision bb does not serve without a handshake (the string, for the error).
    Unsupported(String),
}

/// What a 2026-07-28 request says about its client.
#[derive(Debug)]
pub(crate) struct RequestMeta {
    /// The client as this request declares it (views rendered or not, name, version).
    pub(crate) client: ClientProfile,
    /// The least severe log message the request wants as `notifications/message`; none without it.
    pub(crate) log_level: Option<Level>,
}

/// The era of a request with these params.
pub(crate) fn era_of(params: &Value) -> Era {
    let meta = params.get("_meta");
    let Some(requested) = meta.and_then(|m| m.get(PROTOCOL_VERSION_KEY)) else { return Era::Handshake };
    match requested.as_str().and_then(ProtocolVersion::parse) {
        Some(v) if v.is_stateless() => Era::Stateless(RequestMeta {
            client: ClientProfile::from_request_meta(meta),
            log_level: meta.and_then(|m| m.get(LOG_LEVEL_KEY)).and_then(Value::as_str).and_then(Level::parse),
        }),
        _ => Era::Unsupported(requested.as_str().map_or_else(|| requested.to_string(), str::to_owned)),
    }
}

/// The revisions bb serves, newest first, as `server/discover` and the version error list them.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    ProtocolVersion::ALL.map(ProtocolVersion::as_str).to_vec()
}

/// `UnsupportedProtocolVersionError` for a request that named `requested`.
pub(crate) fn unsupported(id: &Id, requested: &str) -> ErrorReply {
    let shown: String = requested.chars().take(40).collect();
    let how = if ProtocolVersion::parse(requested).is_some() {
        format!("`{shown}` is spoken after `initialize`, not per request; per-request `_meta` is 2026-07-28's")
    } else {
        format!("bb does not speak `{shown}`")
    };
    let mut reply = ErrorReply::new(
        Some(id.clone()),
        UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {how}. Send 2026-07-28 in `_meta`, or `initialize` with 2025-11-25."),
    );
    reply.data = Some(json!({"supported": supported_versions(), "requested": shown}));
    reply
}

/// bb's identity as results carry it.
pub(crate) fn server_info(version: &str) -> Value {
    json!({"name": "bb", "title": "bb for Bitbucket Data Center", "version": version})
}

/// The capabilities bb declares: tools and resources (the view page and the `bitbucket://` templates; no
/// subscriptions yet), prompts when it offers any (`prompts`: their tools are exposed), completions,
/// per-request logging, and the MCP Apps extension
/// (bb has a view; whether a request's client renders it is that request's own capability). The tool
/// list changes only in a session that may turn toolsets on (`enable_toolset`), which is told so.
pub(crate) fn capabilities(tools_change: bool, prompts: bool, subscribe: bool) -> Value {
    // A session that may turn groups on (`tools_change`) may gain prompts, templates and pull requests to
    // watch: it is told each list's change, so each is declared as one that changes.
    let mut caps = json!({
        "tools": {"listChanged": tools_change},
        "resources": {"listChanged": tools_change, "subscribe": subscribe || tools_change},
        "completions": {},
        "logging": {},
        "extensions": {UI_EXTENSION: {}},
    });
    if prompts || tools_change {
        caps["prompts"] = json!({"listChanged": tools_change});
    }
    caps
}

/// The `server/discover` result, already complete and cacheable.
pub(crate) fn discover(version: &str, instructions: &str, prompts: bool, subscribe: bool) -> Value {
    let result = json!({
        "supportedVersions": supported_versions(),
        "capabilities": capabilities(false, prompts, subscribe),
        "instructions": instructions,
    });
    cacheable(complete(result, version), LIST_TTL_MS)
}

/// A result as 2026-07-28 answers it: `resultType: "complete"` and bb's `serverInfo` in `_meta`
/// (beside whatever `_meta` the result had, such as a view's data).
pub(crate) fn complete(mut result: Value, version: &str) -> Value {
    if let Value::Object(map) = &mut result {
        map.insert("resultType".into(), Value::from("complete"));
        let meta = map.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(SERVER_INFO_KEY.into(), server_info(version));
        }
    }
    result
}

/// The answer that ends a `subscriptions/listen` stream on the server's own initiative (a stop): a
/// complete result that names the subscription, the listen request's `id` (MCP 2026-07-28 "Basic →
/// Patterns → Subscriptions", "Graceful Closure"; docs/reference/mcp.md "Resource subscriptions"). A
/// shell writes it when it ends the stream.
pub fn listen_ended(id: &Value, version: &str) -> Value {
    let mut result = complete(json!({}), version);
    result["_meta"]["io.modelcontextprotocol/subscriptionId"] = id.clone();
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A 2026-07-28 `InputRequiredResult` (`inputRequests`, `requestState`): `resultType:
/// "input_required"` and bb's `serverInfo` in `_meta`. Only `tools/call` answers one.
pub(crate) fn input_required(mut result: Value, version: &str) -> Value {
    result = complete(result, version);
    if let Value::Object(map) = &mut result {
        map.insert("resultType".into(), Value::from("input_required"));
    }
    result
}

/// A result a client (and, being the same for every person, any shared cache) may keep `ttl_ms`.
pub(crate) fn cacheable(result: Value, ttl_ms: u64) -> Value {
    cacheable_for(result, ttl_ms, "public")
}

/// A result a client may keep `ttl_ms` within `scope`: `"public"` (any cache, any person) or `"private"`
/// (only for the credentials that read it: what Bitbucket let this person see). Schema 2026-07-28
/// `CacheableResult`.
pub(crate) fn cacheable_for(mut result: Value, ttl_ms: u64, scope: &str) -> Value {
    if let Value::Object(map) = &mut result {
        map.insert("ttlMs".into(), Value::from(ttl_ms));
        map.insert("cacheScope".into(), Value::from(scope));
    }
    result
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_a_meta_revision_belongs_to_its_session() {
        assert!(matches!(era_of(&json!({})), Era::Handshake));
        assert!(matches!(era_of(&json!({"_meta": {"progressToken": 1}})), Era::Handshake));
    }

    #[test]
    fn a_request_naming_2026_07_28_is_stateless_with_its_own_capabilities_and_log_level() {
        let params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}},
            "io.modelcontextprotocol/logLevel": "info",
        }});
        let Era::Stateless(meta) = era_of(&params) else { panic!("not stateless") };
        assert!(meta.client.renders_views);
        assert_eq!(meta.log_level, Some(Level::Info));
    }

    #[test]
    fn a_request_naming_any_other_revision_is_unsupported() {
        for v in [json!("2025-11-25"), json!("1900-01-01"), json!(7)] {
            assert!(matches!(
                era_of(&json!({"_meta": {"io.modelcontextprotocol/protocolVersion": v}})),
                Era::Unsupported(_)
            ));
        }
    }

    #[test]
    fn the_version_error_lists_what_bb_speaks_and_echoes_the_request() {
        let v = unsupported(&Id::from_value(&json!(1)).unwrap_or_else(|| unreachable!()), "1900-01-01").to_value();
        assert_eq!(v["error"]["code"], -32022);
        assert_eq!(v["error"]["data"]["requested"], "1900-01-01");
        assert_eq!(v["error"]["data"]["supported"][0], "2026-07-28");
    }

    #[test]
    fn a_complete_result_keeps_its_own_meta_beside_server_info() {
        let r = complete(json!({"content": [], "_meta": {"view": 1}}), "9.9.9");
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["_meta"]["view"], 1);
        assert_eq!(r["_meta"][SERVER_INFO_KEY]["version"], "9.9.9");
    }
}
