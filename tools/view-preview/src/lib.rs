//! view-preview: a minimal MCP Apps host over bb, so a person can look at every view in a browser.
//!
//! [`start`] runs three things in this process, each on 127.0.0.1:
//!
//! ```text
//!   browser ──GET──▶ page server (the host page: picker, theme and display-mode switches, panels)
//!      │
//!      └──POST /mcp (CORS)──▶ bb's Streamable HTTP transport ──▶ Bitbucket: the stack, or BITBUCKET_URL
//! ```
//!
//! The host page talks MCP to bb with `fetch`, reads `ui://bb/view`, and mounts it in a sandboxed
//! iframe (`allow-scripts` only) through a hand-written host side of the MCP Apps bridge. bb admits the
//! page's origin with `--allow-origin`, exactly as it would admit any browser-resident host.
//!
//! Modules: [`args`] (the preview's command line) and [`page`] (the host page's server and its files in
//! `page/`). The repository's map is `docs/ARCHITECTURE.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod args;
pub mod page;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use bb::config::{Auth, BitbucketConfig, ConnectionFlags, Secret};
use bb_core::{Catalogue, ExposureOptions, Level, ServerConfig};
use bb_drive::Logger;
use bb_http::HttpOptions;
use bb_stack::{RunningStack, Stack, StackConfig};

pub use args::Options;

/// The version the preview's bb reports in `serverInfo`.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the preview's bb reads Bitbucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The stack started in this process, at this base URL.
    Stack(String),
    /// The server `BITBUCKET_URL` names.
    Configured(String),
}

/// A running preview; dropping it stops the page server, bb and the stack, in that order.
pub struct Preview {
    page: page::PageServer,
    bb: bb_http::Running,
    stack: Option<RunningStack>,
    mcp_url: String,
    source: Source,
}

impl Preview {
    /// The host page's URL, such as `http://127.0.0.1:8765/`.
    pub fn page_url(&self) -> String {
        format!("http://{}/", self.page.local_addr())
    }

    /// The address the host page is served on.
    pub fn page_addr(&self) -> SocketAddr {
        self.page.local_addr()
    }

    /// bb's MCP endpoint, such as `http://127.0.0.1:40123/mcp`.
    pub fn mcp_url(&self) -> &str {
        &self.mcp_url
    }

    /// The address bb's Streamable HTTP transport listens on.
    pub fn mcp_addr(&self) -> SocketAddr {
        self.bb.local_addr()
    }

    /// Where bb reads Bitbucket.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The stack's default user's token, when the preview runs its own stack.
    pub fn stack_token(&self) -> Option<&str> {
        self.stack.as_ref().map(|s| s.token.as_str())
    }

    /// Serves until the process ends.
    pub fn wait(self) {
        let Preview { page, bb, stack, .. } = self;
        page.wait();
        drop(bb);
        drop(stack);
    }
}

/// Starts the preview: the stack (unless `env` names a `BITBUCKET_URL`), bb on a free loopback port
/// admitting the page's origin, and the page server on 127.0.0.1:`options.port` (0: any free port).
///
/// `env` looks up environment variables (`|k| std::env::var(k).ok()`); bb reads `BITBUCKET_URL`,
/// `BITBUCKET_TOKEN` and the rest of its connection settings through it.
pub fn start(options: &Options, env: &dyn Fn(&str) -> Option<String>) -> Result<Preview, String> {
    // The page's port comes first: bb must know the page's origin to admit it.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e} (choose another with --port)", options.port))?;
    let page_addr = listener.local_addr().map_err(|e| format!("cannot read the page's address: {e}"))?;

    let (stack, config, source) = match bb::config::load(&ConnectionFlags::default(), env)? {
        Some(config) => {
            let source = Source::Configured(config.base_url.clone());
            (None, config, source)
        }
        None => {
            let stack = Stack::start(StackConfig::default()).map_err(|e| format!("the stack did not start: {e}"))?;
            let config = BitbucketConfig::new(&stack.base_url, Auth::Token(Secret::new(stack.token.clone())))?;
            let source = Source::Stack(stack.base_url.clone());
            (Some(stack), config, source)
        }
    };

    let exposed = Catalogue::standard().expose(&ExposureOptions::default())?;
    let mut server_config = ServerConfig::new(exposed, VERSION);
    server_config.base_url = Some(config.base_url.clone());
    let process = bb_drive::Process::default();
    let bitbucket = bb_bitbucket::for_config(Some(config), &bb_drive::Logger::new(None), process.metrics())?;
    let port = page_addr.port();
    let http_options = HttpOptions {
        allow_origins: vec![format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")],
        ..HttpOptions::default()
    };
    let server = bb_http::HttpServer::bind(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        http_options,
        server_config,
        &process,
        bitbucket,
        Logger::new(Some(Level::Warning)),
    )
    .map_err(|e| format!("bb could not listen on 127.0.0.1: {e}"))?;
    let mcp_url = server.url();
    let bb = server.spawn(2);

    let about = match &source {
        Source::Stack(url) => format!("the stack at {url}"),
        Source::Configured(url) => url.clone(),
    };
    let control = stack.as_ref().map(|s| s.base_url.clone()).filter(|u| u.starts_with("http://"));
    let page = page::PageServer::spawn(
        listener,
        page::Settings { mcp_url: mcp_url.clone(), bitbucket: about, stack: control },
    )
    .map_err(|e| format!("the page server did not start: {e}"))?;
    Ok(Preview { page, bb, stack, mcp_url, source })
}
