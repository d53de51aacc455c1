//! `bb ai mcp serve --http ADDR`: adapts bb's Bitbucket client and log to bb-http and runs the
//! Streamable HTTP server.
//!
//! In per-user mode each person's token gets its own Bitbucket client (same server, TLS, proxy,
//! timeouts and retries as the operator's configuration, only the credentials differ), made on
//! first use and kept for reuse; the operator's credentials are then never used for a session.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bb_core::{FetchErrorKind, FetchOutcome, FetchRequest, Level, ServerConfig};
use bb_drive::{Bitbucket, Cancel, Lane, Logger, PersonalToken, Process, Requester};
use bb_http::{BearerToken, HttpOptions, HttpServer, Limits, MetricsServer};

use crate::cli::HttpServe;
use crate::config::{Auth, BitbucketConfig};
use bb_bitbucket::Client;

/// How many connections bb holds at once: `--max-connections`, else `BB_MAX_CONNECTIONS`, else as many
/// as the open-file limit holds (raised to its hard limit first, [`crate::files`]); and what bb says
/// of it at start.
fn max_connections(flags: &HttpServe) -> Result<(usize, Vec<(Level, String)>), String> {
    let limit = crate::files::raise();
    let files = limit.files.map_or_else(|| "unlimited".to_owned(), |n| n.to_string());
    let raised = limit.raised_from.map(|n| format!(", raised from {n}")).unwrap_or_default();
    let given = match flags.max_connections {
        Some(n) => Some((n, "--max-connections")),
        None => match std::env::var("BB_MAX_CONNECTIONS").ok().filter(|v| !v.trim().is_empty()) {
            Some(v) => Some((crate::files::parse_max_connections(&v, "BB_MAX_CONNECTIONS")?, "BB_MAX_CONNECTIONS")),
            None => None,
        },
    };
    let mut said = Vec::new();
    let n = match given {
        Some((n, from)) => {
            let need = crate::files::files_for(n);
            if limit.files.is_some_and(|files| files < need) {
                said.push((
                    Level::Warning,
                    format!(
                        "{from} {n} may run out of open files: {n} connections and as many waiting to be admitted need \
                         about {need}, and the limit is {files}; raise it (ulimit -n, LimitNOFILE=) or lower {from}"
                    ),
                ));
            }
            said.push((Level::Notice, format!("connections: up to {n} at once ({from}; open files: {files}{raised})")));
            n
        }
        None => {
            let n = crate::files::connections_for(limit.files);
            said.push((
                Level::Notice,
                format!(
                    "connections: up to {n} at once, as the open-file limit allows ({files}{raised}); \
                     --max-connections or BB_MAX_CONNECTIONS sets it"
                ),
            ));
            n
        }
    };
    Ok((n, said))
}

/// Binds, prints the URL as the first line on stderr (and a generated token, once), then serves
/// until SIGTERM or SIGINT, then stops gracefully (see [`bb_http::Running::stop`]) and returns.
/// Everything counts in, and takes room of, `process` (the application's).
#[allow(clippy::too_many_arguments)] // what main made at start, handed over once; no two of them travel together elsewhere
pub fn serve_http(
    flags: &HttpServe,
    metrics: Option<SocketAddr>,
    config: ServerConfig,
    process: &Process,
    bitbucket: Option<BitbucketConfig>,
    operator: Arc<dyn Bitbucket>,
    logger: Logger,
    after_listening: &[(Level, String)],
) -> Result<(), String> {
    let loopback = flags.addr.ip().is_loopback();
    let oauth = match (&flags.oauth, &bitbucket) {
        (None, _) => None,
        (Some(_), None) => return Err("--oauth needs Bitbucket: set BITBUCKET_URL (or --host)".into()),
        (Some(public_url), Some(bb)) => {
            if std::env::var("BB_HTTP_TOKEN").is_ok_and(|t| !t.trim().is_empty()) {
                return Err(
                    "--oauth and BB_HTTP_TOKEN do not go together: with --oauth every person logs in with Bitbucket"
                        .into(),
                );
            }
            // Writes need Bitbucket's write scope; a server that exposes none asks to read only. [doc: scopes]
            let writes = config.exposed.tools().iter().any(|t| !matches!(t.access, bb_core::Access::Read))
                || [bb_core::Toolsets::ALL].iter().any(|extra| {
                    config
                        .exposed
                        .session_sees(*extra)
                        .iter()
                        .any(|e| e.tools().iter().any(|t| !matches!(t.access, bb_core::Access::Read)))
                });
            let scope = if writes { "REPO_WRITE" } else { "REPO_READ" };
            Some(crate::oauth::options(bb, public_url, scope, &|n| std::env::var(n).ok())?)
        }
    };
    let token = if oauth.is_some() {
        BearerToken::None
    } else {
        BearerToken::resolve(std::env::var("BB_HTTP_TOKEN").ok(), loopback)
            .map_err(|e| format!("could not make a bearer token: {e}"))?
    };
    let mut limits = Limits::default();
    if let Some(n) = flags.max_sessions {
        limits.max_sessions = n;
    }
    if let Some(s) = flags.session_idle_s {
        limits.session_idle = Duration::from_secs(s);
    }
    if let Some(s) = flags.ready_interval_s {
        limits.ready_interval = Duration::from_secs(s);
    }
    if let Some(s) = flags.write_timeout_s {
        limits.write_timeout = Duration::from_secs(s);
    }
    if let Some(s) = flags.keepalive_idle_s {
        limits.keepalive_idle = Duration::from_secs(s);
    }
    let (max_connections, connections_said) = max_connections(flags)?;
    limits.max_connections = max_connections;
    let mut options = HttpOptions {
        allow_origins: flags.allow_origins.clone(),
        allow_hosts: flags.allow_hosts.clone(),
        token: token.token().map(str::to_owned),
        per_user_token_header: flags.per_user_token_header.clone(),
        limits,
        oauth,
        trusted_proxies: crate::cli::trusted_proxies_from_env(&flags.trusted_proxies, &|n| std::env::var(n).ok())?,
    };
    if let Some(o) = &options.oauth {
        // People's browsers and clients reach bb by its public URL's host.
        let authority = o.public_url.split_once("://").map_or("", |(_, r)| r).split('/').next().unwrap_or_default();
        options.allow_hosts.push(authority.to_owned());
    }
    let trusted = options.trusted_proxies.clone();
    let per_user = flags.per_user_token_header.is_some() || options.oauth.is_some();
    // In per-person mode the sessions' Bitbucket refuses a request without a person; `/readyz`'s
    // probe asks anonymously (application-properties answers anyone).
    let probe = match bitbucket.clone().filter(|_| per_user) {
        Some(mut base) => {
            base.auth = Auth::Anonymous;
            let mut client = Client::new(base)?;
            client.count_in(Arc::clone(process.metrics()));
            Some(Arc::new(client) as Arc<dyn Bitbucket>)
        }
        None => None,
    };
    let bitbucket = per_session(operator, bitbucket, per_user, &logger, process)?;
    let mut signals = Signals::listen()?;
    let mut server = HttpServer::bind(flags.addr, options, config, process, bitbucket, logger.clone())
        .map_err(|e| format!("cannot listen on {}: {e}", flags.addr))?;
    if let Some(probe) = probe {
        server = server.probe_anonymously(probe);
    }
    announce(&logger, &server, &token, !loopback && flags.allow_hosts.is_empty());
    if !trusted.is_empty() {
        logger.log(Level::Notice, &crate::cli::trusted_proxies_said(&trusted));
    }
    // What the configuration says at start (read-only, asking off), after the address: a client that
    // reads bb's first line for its URL still finds it there.
    for (level, said) in after_listening.iter().chain(&connections_said) {
        logger.log(*level, said);
    }
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let running = server.spawn(cores);
    if let Some(addr) = metrics {
        serve_metrics(addr, &flags.allow_hosts, process, running.gauges(), &logger)?;
    }
    let signal = signals.wait();
    // A second signal while stopping ends bb at once, as an operator pressing Ctrl-C again expects.
    let log = logger.clone();
    let _ = std::thread::Builder::new().name("bb-signals".into()).spawn(move || {
        let again = signals.wait();
        log.announce(Level::Warning, &format!("{again} again: stopping now, calls in flight unanswered"), &[]);
        std::process::exit(1);
    });
    let grace = Duration::from_secs(flags.grace_s);
    logger.log(
        Level::Notice,
        &format!(
            "{signal}: stopping; calls in flight have {} s to finish, no new Bitbucket write is sent",
            flags.grace_s
        ),
    );
    let stopped = running.stop(grace);
    if stopped.cut > 0 {
        logger.log(
            Level::Warning,
            &format!(
                "stopped: {} connection(s) still busy after {} s were told bb is restarting",
                stopped.cut, flags.grace_s
            ),
        );
    } else {
        logger.log(Level::Notice, "stopped: every call in flight was answered");
    }
    Ok(())
}

/// Says where bb listens, as the first line on stderr (and a generated token, once): as text, the
/// URL alone on its line; as JSON, an object whose `url` it is.
fn announce(logger: &Logger, server: &HttpServer, token: &BearerToken, name_hosts: bool) {
    use serde_json::json;
    use std::io::Write;
    if logger.is_json() {
        logger.announce(Level::Notice, "listening", &[("url", json!(server.url()))]);
        if let BearerToken::Generated(t) = token {
            let event = "not loopback: every request needs this bearer token (set BB_HTTP_TOKEN to choose it)";
            logger.announce(Level::Notice, event, &[("token", json!(t))]);
        }
        if name_hosts {
            let event =
                "clients must reach bb as localhost; name the hosts they use with --allow-host (others get 403)";
            logger.announce(Level::Warning, event, &[]);
        }
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", server.url());
    if let BearerToken::Generated(t) = token {
        let _ = writeln!(
            err,
            "bb: {} is not loopback: every request needs `Authorization: Bearer {t}` (set BB_HTTP_TOKEN to choose it)",
            server.local_addr()
        );
    }
    if name_hosts {
        let _ = writeln!(
            err,
            "bb: clients must reach bb as localhost; name the hosts they use with --allow-host (others get 403)"
        );
    }
}

/// Serves `--metrics` at `addr` (on a thread of its own, answering the `Host`s the MCP listener
/// answers: loopback names, the bound address, `allow_hosts`) and says where on stderr: `process`'s
/// metrics, with `gauges` read before each scrape.
pub fn serve_metrics(
    addr: SocketAddr,
    allow_hosts: &[String],
    process: &Process,
    gauges: Arc<dyn Fn() + Send + Sync>,
    logger: &Logger,
) -> Result<(), String> {
    let server = MetricsServer::serve(addr, allow_hosts, Arc::clone(process.metrics()), gauges)
        .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    let url = format!("http://{}/metrics", server.local_addr());
    if logger.is_json() {
        logger.announce(Level::Notice, "metrics", &[("url", serde_json::Value::String(url))]);
    } else {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "bb: metrics at {url}");
    }
    Ok(())
}

/// SIGTERM and SIGINT (Ctrl-C), caught from before the server starts.
struct Signals(async_signal::Signals);

impl Signals {
    fn listen() -> Result<Signals, String> {
        async_signal::Signals::new([async_signal::Signal::Term, async_signal::Signal::Int])
            .map(Signals)
            .map_err(|e| format!("cannot catch SIGTERM and SIGINT: {e}"))
    }

    /// Blocks until one arrives; its name.
    fn wait(&mut self) -> &'static str {
        use smol::stream::StreamExt;
        match smol::block_on(self.0.next()) {
            Some(Ok(async_signal::Signal::Int)) => "SIGINT",
            _ => "SIGTERM",
        }
    }
}

/// The Bitbucket the HTTP sessions use: the operator's, or in per-user mode one shared client (the
/// configured server, CA bundle, proxy and limits, but none of the operator's credentials) that
/// acts with each person's own token and refuses a session without one.
fn per_session(
    operator: Arc<dyn Bitbucket>,
    bitbucket: Option<BitbucketConfig>,
    per_user: bool,
    log: &Logger,
    process: &Process,
) -> Result<Arc<dyn Bitbucket>, String> {
    let Some(mut base) = bitbucket.filter(|_| per_user) else { return Ok(operator) };
    base.auth = Auth::Anonymous;
    let mut client = Client::new(base)?;
    client.set_log(log.clone());
    client.count_in(Arc::clone(process.metrics()));
    Ok(Arc::new(PerPerson(client)))
}

/// One client with none of the operator's credentials, acting with each person's own token; each
/// person's requests wait for a slot in that person's queue.
struct PerPerson(Client);

impl Bitbucket for PerPerson {
    fn fetch(&self, request: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome {
        self.fetch_for(request, Requester { queue: 0, person, lane: Lane::Call }, cancel)
    }

    fn fetch_for(&self, request: FetchRequest, requester: Requester<'_>, cancel: &Cancel) -> FetchOutcome {
        match requester.person {
            Some(person) => {
                let outcome = self.0.fetch_as(request.clone(), person, (requester.queue, requester.lane), cancel);
                // A login's token Bitbucket refused: renewed (or found still good) and sent once more,
                // or the person is told their login ended.
                let refused = matches!(&outcome, FetchOutcome::Response(r) if r.status == 401);
                let (Some(grant), Some(user), true) = (person.grant(), person.user(), refused) else { return outcome };
                match grant.refused(person.secret()) {
                    Ok(token) if token != person.secret() && !cancel.is_cancelled() => {
                        let renewed = PersonalToken::of_login(token, user, Arc::clone(grant));
                        self.0.fetch_as(request, &renewed, (requester.queue, requester.lane), cancel)
                    }
                    Ok(_) => outcome,
                    Err(sentence) => FetchOutcome::failed(FetchErrorKind::NotConfigured, sentence),
                }
            }
            None => FetchOutcome::failed(
                FetchErrorKind::NotConfigured,
                "this server acts with each person's own Bitbucket token, and this session has none",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::config::Secret;

    fn operator() -> Arc<dyn Bitbucket> {
        Arc::new(|_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| FetchOutcome::response(200, "operator"))
    }

    fn call(b: &Arc<dyn Bitbucket>, request: FetchRequest, person: Option<&PersonalToken>) -> FetchOutcome {
        b.fetch(request, person, &Cancel::new())
    }

    fn get() -> FetchRequest {
        FetchRequest::get("/rest/api/latest/x", vec![])
    }

    #[test]
    fn without_per_user_mode_every_session_uses_the_operators_client() {
        let f = per_session(operator(), None, false, &Logger::new(None), &Process::default()).unwrap();
        assert_eq!(call(&f, get(), None), FetchOutcome::response(200, "operator"));
        assert_eq!(call(&f, get(), Some(&PersonalToken::new("t"))), FetchOutcome::response(200, "operator"));
    }

    #[test]
    fn in_per_user_mode_a_session_without_a_token_never_gets_the_operators_credentials() {
        let base = BitbucketConfig::new("http://127.0.0.1:9", Auth::Token(Secret::new("operator-secret"))).unwrap();
        let f = per_session(operator(), Some(base), true, &Logger::new(None), &Process::default()).unwrap();
        let FetchOutcome::Failed(e) = call(&f, get(), None) else { panic!("expected a failure") };
        assert_eq!(e.kind, FetchErrorKind::NotConfigured);
        assert!(!e.detail.contains("operator-secret"));
    }

    #[test]
    fn in_per_user_mode_each_request_carries_the_persons_token_and_never_the_operators() {
        let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
        // The operator's token is the stack's valid one: a person with a wrong token must not borrow it.
        let base = BitbucketConfig::new(&stack.base_url, Auth::Token(Secret::new(&stack.token))).unwrap();
        let f = per_session(operator(), Some(base), true, &Logger::new(None), &Process::default()).unwrap();
        let me = FetchRequest::get("/rest/api/latest/projects", vec![]);
        let FetchOutcome::Response(wrong) = call(&f, me.clone(), Some(&PersonalToken::new("not-a-token"))) else {
            panic!("expected Bitbucket's answer")
        };
        assert_eq!(wrong.status, 401);
        let FetchOutcome::Response(right) = call(&f, me, Some(&PersonalToken::new(&stack.token))) else {
            panic!("expected Bitbucket's answer")
        };
        assert_eq!(right.status, 200);
        assert_eq!(right.user.as_deref(), Some("alice"));
        stack.shutdown();
    }

    #[test]
    fn a_persons_token_is_scrubbed_from_failure_details() {
        let base = BitbucketConfig::new("http://127.0.0.1:9", Auth::Anonymous).unwrap();
        let f = per_session(operator(), Some(base), true, &Logger::new(None), &Process::default()).unwrap();
        let FetchOutcome::Failed(e) = call(&f, get(), Some(&PersonalToken::new("sekrit-person-token"))) else {
            panic!("port 9 answers nothing")
        };
        assert!(!e.detail.contains("sekrit-person-token"), "{}", e.detail);
    }
}
