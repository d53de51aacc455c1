//! Which MCP protocol revision a session or a request speaks, and what the client said it can do.
//!
//! Two eras. The handshake revisions (2025-03-26, 2025-06-18, 2025-11-25) are chosen once per
//! session by `initialize`: when the client asks for one bb speaks, bb answers with the same;
//! otherwise bb answers with its latest handshake revision and the client decides whether to go on.
//! The stateless revision (2026-07-28) has no handshake: each request names it in `_meta`, with the
//! client's capabilities, and is answered on its own (see [`crate::stateless`]).

use serde_json::Value;

/// The MCP Apps extension's capability key (`io.modelcontextprotocol/ui`, stable spec 2026-01-26).
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP Apps view: exactly this, no space (`reference/mcp.md` §3).
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// A protocol revision bb speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 2025-03-26: the only revision that accepts JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18.
    V2025_06_18,
    /// 2025-11-25: bb's default for `initialize`.
    V2025_11_25,
    /// 2026-07-28: no handshake; every request carries its version and the client's capabilities.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision bb speaks, newest first.
    pub const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
    ];

    /// The revisions `initialize` negotiates, newest first.
    pub const HANDSHAKE: [ProtocolVersion; 3] =
        [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_03_26];

    /// The revision `initialize` answers with when the client asks for one it does not speak
    /// (2026-07-28 has no `initialize`, so asking for it there is asking for an unknown one).
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The one revision whose requests are served without a session.
    pub const STATELESS: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The revision's date string as it travels on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision with this date string, if bb speaks it.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// What bb answers to an `initialize` that asked for `requested`.
    pub fn negotiate(requested: Option<&str>) -> ProtocolVersion {
        requested.and_then(ProtocolVersion::parse).filter(|v| !v.is_stateless()).unwrap_or(ProtocolVersion::LATEST)
    }

    /// Whether requests of this revision are served on their own, with no session (2026-07-28).
    pub fn is_stateless(self) -> bool {
        self == ProtocolVersion::V2026_07_28
    }

    /// Whether JSON-RPC batches (arrays) are accepted: only under 2025-03-26, which had them
    /// and was the last to.
    pub fn accepts_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }
}

/// What bb learned about the client from `initialize`, kept for the whole session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientProfile {
    /// The client's name, from `clientInfo.name`, for logs.
    pub name: String,
    /// The client's version, from `clientInfo.version`.
    pub version: String,
    /// Whether the client declared that it renders MCP Apps views (`text/html;profile=mcp-app`).
    pub renders_views: bool,
    /// Whether the client declared form elicitation (`elicitation: {}` or `{form: {}}`): bb may ask
    /// the person through it.
    pub asks_forms: bool,
}

impl ClientProfile {
    /// Reads the profile from `initialize` params, leniently: unknown or malformed keys are ignored.
    pub fn from_initialize(params: &Value) -> ClientProfile {
        ClientProfile::from_parts(params.get("clientInfo"), params.get("capabilities"))
    }

    /// Reads the profile of one 2026-07-28 request from its `_meta`
    /// (`io.modelcontextprotocol/clientInfo` and `io.modelcontextprotocol/clientCapabilities`),
    /// leniently. Nothing is carried over from an earlier request: the spec forbids inferring
    /// capabilities from one, and MCP Apps reads the UI extension from each request's capabilities.
    pub fn from_request_meta(meta: Option<&Value>) -> ClientProfile {
        let get = |key: &str| meta.and_then(|m| m.get(key));
        ClientProfile::from_parts(get(CLIENT_INFO_KEY), get(CLIENT_CAPABILITIES_KEY))
    }

    fn from_parts(info: Option<&Value>, capabilities: Option<&Value>) -> ClientProfile {
        let text = |key: &str| info.and_then(|i| i.get(key)).and_then(Value::as_str).unwrap_or_default().to_owned();
        ClientProfile {
            name: text("name"),
            version: text("version"),
            renders_views: declares_views(capabilities),
            asks_forms: declares_forms(capabilities),
        }
    }
}

/// The `_meta` key of a 2026-07-28 request that names its protocol revision.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a 2026-07-28 request that carries the client's capabilities for it.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of a 2026-07-28 request that names the client.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of a 2026-07-28 request that asks for log messages at this level or above.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key of a 2026-07-28 result that names the server.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Whether client capabilities declare form elicitation: `elicitation: {}` (forms, before modes
/// existed) or `elicitation: {form: {...}}` (2025-11-25 and later).
fn declares_forms(capabilities: Option<&Value>) -> bool {
    match capabilities.and_then(|c| c.get("elicitation")) {
        Some(Value::Object(e)) => e.is_empty() || e.get("form").is_some_and(Value::is_object),
        _ => false,
    }
}

/// Whether client capabilities declare MCP Apps views:
/// `capabilities.extensions["io.modelcontextprotocol/ui"].mimeTypes` holds the view MIME type.
fn declares_views(capabilities: Option<&Value>) -> bool {
    capabilities
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(UI_EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(VIEW_MIME_TYPE)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_known_version_is_answered_with_itself() {
        for v in ProtocolVersion::HANDSHAKE {
            assert_eq!(ProtocolVersion::negotiate(Some(v.as_str())), v);
        }
    }

    #[test]
    fn an_unknown_or_missing_version_is_answered_with_the_latest() {
        assert_eq!(ProtocolVersion::negotiate(Some("2024-11-05")), ProtocolVersion::V2025_11_25);
        assert_eq!(
            ProtocolVersion::negotiate(Some("2026-07-28")),
            ProtocolVersion::V2025_11_25,
            "no initialize in 2026-07-28"
        );
        assert_eq!(ProtocolVersion::negotiate(None), ProtocolVersion::V2025_11_25);
    }

    #[test]
    fn only_2025_03_26_accepts_batches() {
        let accepting: Vec<_> = ProtocolVersion::ALL.into_iter().filter(|v| v.accepts_batches()).collect();
        assert_eq!(accepting, vec![ProtocolVersion::V2025_03_26]);
    }

    #[test]
    fn only_2026_07_28_is_stateless() {
        let stateless: Vec<_> = ProtocolVersion::ALL.into_iter().filter(|v| v.is_stateless()).collect();
        assert_eq!(stateless, vec![ProtocolVersion::STATELESS]);
        assert_eq!(ProtocolVersion::parse("2026-07-28"), Some(ProtocolVersion::V2026_07_28));
    }

    #[test]
    fn a_request_meta_declaring_the_view_mime_type_renders_views() {
        let meta = json!({
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}},
            "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "2"},
        });
        let profile = ClientProfile::from_request_meta(Some(&meta));
        assert!(profile.renders_views);
        assert_eq!((profile.name.as_str(), profile.version.as_str()), ("host", "2"));
        assert!(!ClientProfile::from_request_meta(None).renders_views);
        assert!(
            !ClientProfile::from_request_meta(Some(&json!({"io.modelcontextprotocol/clientCapabilities": {}})))
                .renders_views
        );
    }

    #[test]
    fn a_client_declaring_the_view_mime_type_renders_views() {
        let params = json!({"capabilities": {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}, "clientInfo": {"name": "host", "version": "1"}});
        let profile = ClientProfile::from_initialize(&params);
        assert!(profile.renders_views);
        assert_eq!(profile.name, "host");
    }

    #[test]
    fn a_client_without_the_extension_or_with_another_mime_type_does_not() {
        for caps in [
            json!({}),
            json!({"extensions": {}}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html+mcp"]}}}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": "text/html;profile=mcp-app"}}}),
            json!("nonsense"),
        ] {
            assert!(!ClientProfile::from_initialize(&json!({"capabilities": caps})).renders_views, "{caps}");
        }
    }

    #[test]
    fn forms_are_declared_by_an_empty_elicitation_or_a_form_mode() {
        assert!(declares_forms(Some(&json!({"elicitation": {}}))));
        assert!(declares_forms(Some(&json!({"elicitation": {"form": {}}}))));
        assert!(declares_forms(Some(&json!({"elicitation": {"form": {}, "url": {}}}))));
        assert!(!declares_forms(Some(&json!({"elicitation": {"url": {}}}))));
        assert!(!declares_forms(Some(&json!({}))));
        assert!(!declares_forms(None));
    }
}
