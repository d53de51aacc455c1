//! Which MCP protocol revision a session speaks, and what the client said it can do.
//!
//! Negotiation (MCP lifecycle, `reference/mcp.md` §1): when the client asks for a revision bb
//! speaks, bb answers with the same; otherwise bb answers with its latest and the client decides
//! whether to go on.

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
    /// 2025-11-25: bb's default.
    V2025_11_25,
}

impl ProtocolVersion {
    /// Every revision bb speaks, newest first.
    pub const ALL: [ProtocolVersion; 3] =
        [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_03_26];

    /// The revision bb answers with when the client asks for one it does not speak.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision's date string as it travels on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// The revision with this date string, if bb speaks it.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// What bb answers to a client that asked for `requested`.
    pub fn negotiate(requested: Option<&str>) -> ProtocolVersion {
        requested.and_then(ProtocolVersion::parse).unwrap_or(ProtocolVersion::LATEST)
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
}

impl ClientProfile {
    /// Reads the profile from `initialize` params, leniently: unknown or malformed keys are ignored.
    pub fn from_initialize(params: &Value) -> ClientProfile {
        let info = params.get("clientInfo");
        let text = |key: &str| info.and_then(|i| i.get(key)).and_then(Value::as_str).unwrap_or_default().to_owned();
        ClientProfile {
            name: text("name"),
            version: text("version"),
            renders_views: declares_views(params.get("capabilities")),
        }
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
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::negotiate(Some(v.as_str())), v);
        }
    }

    #[test]
    fn an_unknown_or_missing_version_is_answered_with_the_latest() {
        assert_eq!(ProtocolVersion::negotiate(Some("2024-11-05")), ProtocolVersion::V2025_11_25);
        assert_eq!(ProtocolVersion::negotiate(Some("2026-07-28")), ProtocolVersion::V2025_11_25);
        assert_eq!(ProtocolVersion::negotiate(None), ProtocolVersion::V2025_11_25);
    }

    #[test]
    fn only_2025_03_26_accepts_batches() {
        let accepting: Vec<_> = ProtocolVersion::ALL.into_iter().filter(|v| v.accepts_batches()).collect();
        assert_eq!(accepting, vec![ProtocolVersion::V2025_03_26]);
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
}
