//! bb-stack: a local stand-in for a Bitbucket Data Center server, for bb's tests, demo and preview.
//!
//! It serves every endpoint of `shared/reference/bitbucket-dc.md` from seeded, deterministic data
//! (`seed/seed.json`), with Bitbucket's paging, error JSON, authentication and state changes, plus a control API
//! under `/_stack/...` for faults, latency, Bitbucket Data Center's rate limit, request counts, a request log with
//! timing, reset, and changes made as other users (its endpoints are listed in [`control`]).
//!
//! ```no_run
//! let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).map_err(|e| e.to_string())?;
//! println!("{} {}", stack.base_url, stack.token);
//! # Ok::<(), String>(())
//! ```
//!
//! Handlers are plain functions over the world and a [`exchange::Request`]: [`routes::serve`] answers one
//! without sockets. The server (hyper 1 on smol, on a few threads) only adds the control API's faults around them,
//! and serves reads at once (the world's read lock) and each write alone (its write lock), as Bitbucket does.
//!
//! Module by what it decides, top to bottom: a file imports only files below it in this list, and
//! `tools/check-layering.sh` fails on any import circle between them.
//!
//! - [`server`]: which connections are served and how (HTTP/1.1 on smol, several threads), which lock a request
//!   holds (reads share the world, a write has it alone), and carrying out each request's admission.
//! - [`tls`]: which certificate the stack serves over HTTPS and which client certificates it requires.
//! - [`control`]: what each `/_stack` request sets or changes (faults, latency, rate limit, counters, log, reset,
//!   others' changes, the server's version).
//! - [`routes`]: which handler serves a path, after authentication, and which paths only read.
//! - [`auth`]: who is asking: a token, a user and password, or nobody.
//! - [`api::pull_requests`]: which pull requests a listing shows; creating, editing, merging, declining, reopening.
//! - [`api::auto_merge`]: whether a merge waits for its checks (8.15+), its request and cancelling, the setting.
//! - [`api::drafts`]: draft reviews (7.7+): the caller's pending comments, finishing the review (publishing them),
//!   discarding it.
//! - [`api::suggestions`]: applying a comment's suggestion: a commit on the source branch, the pull request
//!   rescoped.
//! - `api::lifecycle`: the checks every pull-request change passes, the activity it leaves, vetoes, the merge, a
//!   push to the source branch (a rescope).
//! - [`api::files`]: a repository's files at a ref or commit: browse (lines, children, blame), raw, the listing.
//! - [`api::search`]: code search over every repository's default branch, and the server without an index.
//! - [`api::diffs`]: a pull request's (over all or a range of its commits), a comparison's or a commit's changed
//!   files and diff, computed from the files, with comments on their lines.
//! - [`api::projects`]: projects, repositories, branches, commits, tags and the server's version.
//! - [`api::users`]: which users a search finds, one user, and avatars.
//! - [`api::review`]: who takes part in a pull request and the caller's review status.
//! - [`api::comments`]: comments, replies and tasks: adding (drafts too), editing, resolving, deleting; who sees a
//!   draft.
//! - [`api::anchors`]: what a new comment's anchor may hold (a multi-line marker, the diff's hashes) and the lines
//!   it covers.
//! - [`api::activities`]: a pull request's activity, newest first.
//! - [`api::builds`]: build statuses by commit and by pull request, and posting one.
//! - [`api::required_builds`]: what a repository requires and suggests: builds, branching model, default reviewers.
//! - [`api`] (its `mod.rs`): what every handler gets ([`api::Cx`]), and the 404 of a missing repository or PR.
//! - [`world`]: the whole state: the model, the admission state, the seed to reset to.
//! - [`seed`]: the seed file's schema and how it becomes the model.
//! - [`trees`]: files at each commit: a commit's tree, which paths differ, a file's diff computed from its two
//!   versions, patches applied, blame.
//! - [`sources`]: the files every repository starts with, and filler lines in a file's language.
//! - [`patches`]: diff content: seed patches read into hunks, big files generated, the line cap.
//! - [`admission`]: what a Bitbucket request meets before any handler: the rate limit, a queued fault, added
//!   latency; the counts and the log.
//! - [`rate_limit`]: Bitbucket Data Center's rate limit: a token bucket per user, the 429's `Retry-After`.
//! - [`request_log`]: every Bitbucket request since the reset, with when it arrived and when it was answered.
//! - [`render`]: the JSON shapes Bitbucket answers with.
//! - [`paging`]: which slice of a list a request gets, and the page object around it.
//! - [`ref_matchers`]: whether a ref matcher (required builds, default reviewers) selects a ref.
//! - [`avatar_png`]: the users' avatar images (PNG, written without an image crate).
//! - [`model`]: the in-memory Bitbucket, and the logical clock that stamps every write.
//! - [`errors`]: Bitbucket's error JSON and exception names.
//! - [`exchange`]: the plain request and response every handler works on.
//!
//! Two binaries use the library by name only: `bb-stack` (`main.rs`, serves until killed) and `stack-bench`
//! (`bin/stack-bench.rs`, start time and requests per second).
//!
//! The repository's map, with where the stand-in sits among bb's crates, is `docs/ARCHITECTURE.md`.

pub mod admission;
pub mod api;
pub mod auth;
pub mod avatar_png;
pub mod control;
pub mod errors;
pub mod exchange;
pub mod grants;
pub mod model;
pub mod oauth;
pub mod paging;
pub mod patches;
pub mod rate_limit;
pub mod ref_matchers;
pub mod render;
pub mod request_log;
pub mod routes;
pub mod seed;
pub mod server;
pub mod sources;
pub mod tls;
pub mod trees;
pub mod world;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use world::World;

/// How to start a stack.
#[derive(Debug, Clone, Default)]
pub struct StackConfig {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Seed JSON text; the committed seed when absent.
    pub seed: Option<String>,
    /// The default user's personal access token, replacing the seed's.
    pub token: Option<String>,
    /// A context path such as `/bitbucket` that every Bitbucket path sits under (empty for none).
    pub context_path: String,
    /// Serve HTTPS (the base URL then starts with `https://`); plain HTTP when absent.
    pub tls: Option<tls::StackTls>,
    /// Answer code search as a server without a search index does (until `/_stack/search` switches it on).
    pub no_search: bool,
    /// Milliseconds added to every Bitbucket answer, kept as the baseline a reset goes back to (the binary reads it
    /// from `STACK_LATENCY_MS`); 0 for none.
    pub latency_ms: u64,
}

/// Starts stacks.
#[derive(Debug)]
pub struct Stack;

impl Stack {
    /// Binds 127.0.0.1:`port` and serves on a thread of its own until the handle is shut down or dropped.
    pub fn start(config: StackConfig) -> Result<RunningStack, String> {
        let mut world = match &config.seed {
            Some(text) => World::from_seed_text(text, config.token.as_deref())?,
            None => World::from_seed_text(seed::DEFAULT_SEED, config.token.as_deref())?,
        };
        let context_path = config.context_path.trim_end_matches('/').to_string();
        if !context_path.is_empty() && !context_path.starts_with('/') {
            return Err(format!("The context path must start with '/': {context_path}"));
        }
        let acceptor = config.tls.as_ref().map(tls::StackTls::acceptor).transpose()?;
        let std_listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, config.port))
            .map_err(|e| format!("Cannot listen on 127.0.0.1:{}: {e}", config.port))?;
        let addr = std_listener.local_addr().map_err(|e| format!("Cannot read the bound address: {e}"))?;
        let listener =
            smol::net::TcpListener::try_from(std_listener).map_err(|e| format!("Cannot use the socket: {e}"))?;
        let scheme = if acceptor.is_some() { "https" } else { "http" };
        let base_url = format!("{scheme}://{addr}{context_path}");
        world.base_url = base_url.clone();
        world.context_path = context_path;
        world.no_search = config.no_search;
        world.model.search_off = config.no_search;
        world.base_latency_ms = config.latency_ms;
        world.control = world.fresh_control();
        let token = world.default_token();
        let shared = Arc::new(server::Shared::new(world));
        let (stop_tx, stop_rx) = smol::channel::bounded(1);
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("bb-stack".into())
            .spawn(move || server::run(listener, thread_shared, stop_rx, acceptor))
            .map_err(|e| format!("Cannot start the server thread: {e}"))?;
        Ok(RunningStack { base_url, token, addr, stop: Some(stop_tx), thread: Some(thread), shared })
    }
}

/// A running stack; dropping it stops the server.
#[derive(Debug)]
pub struct RunningStack {
    /// `http://127.0.0.1:PORT` (`https://` when serving TLS) plus the context path.
    pub base_url: String,
    /// The default user's personal access token.
    pub token: String,
    /// 127.0.0.1 and the port it listens on (the one the OS chose when [`StackConfig::port`] was 0).
    pub addr: SocketAddr,
    stop: Option<smol::channel::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    shared: Arc<server::Shared>,
}

impl RunningStack {
    /// Runs `f` on the whole world, its control too, held alone (for tests that look inside or change it): every
    /// request waits meanwhile.
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World) -> R) -> R {
        f(&mut self.shared.whole())
    }

    /// Runs `f` on the world held to read, as a Bitbucket read holds it: other reads are served meanwhile, writes
    /// wait. Its `control` is not in it (requests are counted beside the world); [`RunningStack::with_world`] has it.
    pub fn with_world_read<R>(&self, f: impl FnOnce(&World) -> R) -> R {
        f(&self.shared.read())
    }

    /// How many requests have reached the server (their headers read), control requests too, whether or not they
    /// have had the world yet: a test holding it ([`RunningStack::with_world`]) knows by it that the requests it
    /// sent are waiting.
    pub fn arrived(&self) -> u64 {
        self.shared.arrived.load(Ordering::SeqCst)
    }

    /// Stops serving and waits for the server thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    /// Blocks until the server stops (it stops only when the process is killed).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn stop_and_join(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.try_send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunningStack {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}
