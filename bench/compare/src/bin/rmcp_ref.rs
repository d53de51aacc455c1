//! The reference MCP server for the comparison: the official Rust SDK (`rmcp`) behind axum and
//! tokio, on its Streamable HTTP server transport, serving *bb's own* tool list.
//!
//! `rmcp-ref --catalogue FILE [--listen 127.0.0.1:0] [--stateless] [--sse]`
//!
//! FILE is what `mcp-load dump` wrote from a running bb: `{"initialize": <bb's initialize result>,
//! "tools": <bb's tools/list array>, "show": <bb's result for tools/call show {}>}`. `tools/list`
//! answers those tools (deserialized into rmcp's `Tool`, names and descriptions made `'static` as
//! the `#[tool]` macros make them), `tools/call` of `show` answers bb's own `show` result (bb
//! answers `show {}` without Bitbucket: an `isError` text saying `kind` is required), any other
//! tool an error. `initialize` answers bb's instructions and server name.
//!
//! Sessions (the default): rmcp's `LocalSessionManager`, `legacy_session_mode` on; a 2025-11-25
//! client initializes and gets an `Mcp-Session-Id`; its answers come as `text/event-stream` (rmcp's
//! session mode always streams). A 2026-07-28 request (its `_meta` and `MCP-Protocol-Version`) is
//! served without a session in this mode too (rmcp routes it statelessly by its version, SEP-2567),
//! so one process serves both kinds, as one bb does. `json_response` is on: such a stateless
//! answer comes as plain `application/json`, as bb's does (`--sse` streams it instead).
//! `--stateless`: `legacy_session_mode` off, rmcp's stateless mode: no sessions at all, a
//! 2025-11-25 request is served on its own too.
//!
//! The first line on stderr is `http://ADDR/mcp`, as bb's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

/// What every handler shares: built once at start-up.
struct Catalogue {
    info: ServerConfig,
    tools: Vec<Tool>,
    show: CallToolResult,
}

#[derive(Clone)]
struct Reference(Arc<Catalogue>);

impl ServerHandler for Reference {
    fn get_info(&self) -> ServerConfig {
        self.0.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.0.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name == "show" {
            Ok(self.0.show.clone().into())
        } else {
            Err(McpError::invalid_params(format!("unknown tool {}", request.name), None))
        }
    }
}

fn leak(s: Cow<'static, str>) -> Cow<'static, str> {
    match s {
        Cow::Owned(s) => Cow::Borrowed(Box::leak(s.into_boxed_str())),
        b => b,
    }
}

fn load(path: &str) -> Catalogue {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("the catalogue is JSON");
    let tools: Vec<Tool> = serde_json::from_value(v["tools"].take()).expect("`tools` is an array of MCP tools");
    let tools = tools
        .into_iter()
        .map(|mut t| {
            t.name = leak(t.name);
            t.description = t.description.map(leak);
            t
        })
        .collect();
    let show: CallToolResult = serde_json::from_value(v["show"].take()).expect("`show` is a tools/call result");
    let init = &v["initialize"];
    let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
        Implementation::new(
            format!("rmcp-ref ({})", init["serverInfo"]["name"].as_str().unwrap_or("bb")),
            env!("CARGO_PKG_VERSION"),
        ),
    );
    if let Some(i) = init["instructions"].as_str() {
        info = info.with_instructions(i);
    }
    Catalogue { info, tools, show }
}

fn main() {
    let mut catalogue = None;
    let mut listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut stateless = false;
    let mut json_response = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--catalogue" => catalogue = args.next(),
            "--listen" => listen = args.next().and_then(|s| s.parse().ok()).expect("--listen ADDR"),
            "--stateless" => stateless = true,
            "--sse" => json_response = false,
            _ => {
                eprintln!("usage: rmcp-ref --catalogue FILE [--listen 127.0.0.1:0] [--stateless] [--sse]");
                std::process::exit(2);
            }
        }
    }
    let catalogue = Arc::new(load(&catalogue.expect("--catalogue FILE")));
    // One worker per core, as bb serves with one thread per core.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!stateless)
            .with_json_response(json_response)
            .with_allowed_hosts(["127.0.0.1", "localhost"]);
        let service = StreamableHttpService::new(
            move || Ok(Reference(Arc::clone(&catalogue))),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind(listen).await.expect("bind");
        let addr = listener.local_addr().unwrap();
        eprintln!("http://{addr}/mcp");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await.unwrap();
    });
}
