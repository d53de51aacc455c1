//! Sockets and threads: bind, accept (turning away a peer's connections beyond its share with 503;
//! see `connections` for which connections are held; from a trusted proxy, its PROXY header read
//! first), serve HTTP/1.1 with hyper on a smol executor run by one thread per core, and end idle
//! sessions. Repeated warnings are written at most once a second, with a count.

use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener};
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use bb_core::{Level, ServerConfig};
use bb_drive::{Bitbucket, Logger, PersonalToken, Process, now_ms};
use bb_hyper_smol::{HeadClock, Heard, SmolIo, Watched, WriteClock};
use hyper::body::{Body, Bytes, Frame, SizeHint};
use hyper::header::HeaderName;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Response, StatusCode};
use smol::Executor;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::{TcpListener, TcpStream};

use crate::census::Census;
use crate::connections::{Arrival, Connections, Held, InFlight};
use crate::drain::{Drain, NoNewWrites, Stopped};
use crate::exchange::{Endpoint, Proven, respond};
use crate::gate::Gate;
use crate::health::{Readiness, probe};
use crate::oauth;
use crate::options::{HttpOptions, strong_enough};
use crate::peer::Peer;
use crate::persons::Persons;
use crate::proxy_header::{self, Prefixed};
use crate::reply::{Reply, closing, refusal};
use crate::sessions::Sessions;
use crate::throttle::{Throttle, and_more};

/// A bound, not yet running, Streamable HTTP server.
pub struct HttpServer {
    listener: TcpListener,
    addr: SocketAddr,
    endpoint: Arc<Endpoint>,
    executor: Arc<Executor<'static>>,
    /// The Bitbucket `/readyz`'s probe asks.
    probe: Arc<dyn Bitbucket>,
}

/// What the accept loop and the connections share.
struct Door {
    endpoint: Arc<Endpoint>,
    connections: Arc<Connections>,
    turned_away: Throttle,
}

impl HttpServer {
    /// Binds `addr` (use port 0 for any free port). Every session runs over `config` and counts in,
    /// and takes room of, `process` (the application's, made once); Bitbucket requests go through
    /// `bitbucket`, with the session's person in per-person mode. Off loopback, a bearer token shorter
    /// than [`crate::options::MIN_TOKEN_CHARS`] is refused.
    pub fn bind(
        addr: SocketAddr,
        options: HttpOptions,
        config: ServerConfig,
        process: &Process,
        bitbucket: Arc<dyn Bitbucket>,
        logger: Logger,
    ) -> io::Result<HttpServer> {
        let per_user_header = match &options.per_user_token_header {
            None => None,
            Some(name) => Some(HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("`{name}` is not a valid HTTP header name"))
            })?),
        };
        if let Some(t) = options.token.as_deref().filter(|_| !addr.ip().is_loopback()) {
            strong_enough(t)?;
        }
        let std_listener = StdListener::bind(addr)?;
        // The standard library listens with a queue of 128 connections not yet accepted: a burst of
        // hundreds of connects (a flood of slow login bodies) overflows it, and the kernel drops the
        // next person's connect, which their system retries only a second later. Listening again
        // sets a queue as deep as the connections bb may hold (the kernel caps it at somaxconn).
        let backlog = i32::try_from(options.limits.max_connections.saturating_mul(2)).unwrap_or(i32::MAX).max(128);
        rustix::net::listen(&std_listener, backlog)?;
        let addr = std_listener.local_addr()?;
        let listener = TcpListener::try_from(std_listener)?;
        let executor = Arc::new(Executor::new());
        let limits = &options.limits;
        let census = Census::new(limits.max_sessions, limits.sessions_per_peer(), limits.sessions_per_person());
        let drain = Drain::new();
        let readiness = Readiness::new(limits.ready_interval);
        let writes_held: Arc<dyn Bitbucket> =
            Arc::new(NoNewWrites { inner: Arc::clone(&bitbucket), drain: Arc::clone(&drain) });
        let probe = Arc::clone(&bitbucket);
        // Counted by name: the tools exposed, and those a session may come to see (enable_toolset's groups).
        let mut tools: Vec<&'static str> = config.exposed.tools().iter().map(|t| t.name).collect();
        for extra in [bb_core::Toolsets::NONE, bb_core::Toolsets::ALL] {
            tools.extend(config.exposed.session_sees(extra).iter().flat_map(|e| e.tools().iter().map(|t| t.name)));
        }
        tools.sort_unstable();
        tools.dedup();
        let oauth = options
            .oauth
            .clone()
            .map(|o| oauth::Authority::new(o, Arc::clone(&bitbucket), logger.clone(), process.audit().cloned()));
        let admission = oauth::Admission::new(limits, logger.clone());
        let endpoint = Arc::new(Endpoint {
            gate: Gate::new(&options, addr),
            sessions: Sessions::new(config, process, writes_held, logger.clone(), census),
            process: process.clone(),
            persons: Persons::new(limits.token_verdict_ttl),
            bitbucket,
            crowded: Throttle::new(WARNING_PERIOD_MS),
            refusals: Throttle::new(WARNING_PERIOD_MS),
            options,
            per_user_header,
            logger,
            drain,
            readiness,
            tools,
            oauth,
            admission,
        });
        Ok(HttpServer { listener, addr, endpoint, executor, probe })
    }

    /// Has `/readyz`'s probe ask `bitbucket`, which holds no credentials, rather than the sessions'
    /// Bitbucket (in per-person mode, that one refuses a request without a person): any answer
    /// below 500 then counts as Bitbucket answering.
    pub fn probe_anonymously(mut self, bitbucket: Arc<dyn Bitbucket>) -> HttpServer {
        self.probe = bitbucket;
        self.endpoint.readiness.set_anonymous();
        self
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL, such as `http://127.0.0.1:8080/mcp`.
    pub fn url(&self) -> String {
        let host = match self.addr {
            SocketAddr::V4(a) if a.ip().is_unspecified() => "127.0.0.1".to_owned(),
            SocketAddr::V4(a) => a.ip().to_string(),
            SocketAddr::V6(a) if a.ip().is_unspecified() => "[::1]".to_owned(),
            SocketAddr::V6(a) => format!("[{}]", a.ip()),
        };
        format!("http://{host}:{}/mcp", self.addr.port())
    }

    /// Starts serving on `threads` threads (at least one) and returns at once.
    pub fn spawn(self, threads: usize) -> Running {
        let HttpServer { listener, addr, endpoint, executor, probe: prober } = self;
        let limits = &endpoint.options.limits;
        let door = Arc::new(Door {
            connections: Connections::new(
                limits.max_connections,
                limits.connections_per_peer(),
                limits.anonymous_logins(),
            ),
            endpoint: Arc::clone(&endpoint),
            turned_away: Throttle::new(WARNING_PERIOD_MS),
        });
        executor.spawn(accept(listener, Arc::clone(&door), Arc::downgrade(&executor))).detach();
        let readiness = Arc::clone(&endpoint.readiness);
        executor.spawn(probe(readiness, prober, Arc::clone(&endpoint.drain))).detach();
        let drain = Arc::clone(&endpoint.drain);
        executor.spawn(expire(Arc::clone(&endpoint))).detach();
        executor.spawn(flush_warnings(door)).detach();
        let (stop, stopped) = smol::channel::bounded::<()>(1);
        let threads = (0..threads.max(1))
            .filter_map(|i| {
                let ex = Arc::clone(&executor);
                let stopped = stopped.clone();
                std::thread::Builder::new()
                    .name(format!("bb-http-{i}"))
                    .spawn(move || {
                        smol::block_on(smol::future::or(async move { stopped.recv().await.unwrap_or(()) }, work(&ex)))
                    })
                    .ok()
            })
            .collect();
        Running { addr, stop: Some(stop), threads, executor: Some(executor), drain, endpoint }
    }

    /// Serves until the process ends, on one thread per core.
    pub fn run(self) -> io::Result<()> {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let mut running = self.spawn(cores);
        for t in std::mem::take(&mut running.threads) {
            let _ = t.join();
        }
        Err(io::Error::other("the HTTP server's threads stopped"))
    }
}

/// One thread's share of the server's work: the tasks (connections) in the order they became ready,
/// one at a time from the queue all threads share.
///
/// Not `Executor::run`: its runner takes half the shared queue into a queue of its own whenever it
/// finds one there, and those tasks wait whenever the OS takes its thread off the CPU (the other
/// thread takes them back only after its own). On a machine busier than its cores — two cores, two
/// threads and the load — that put a request behind another's for a whole time slice: at 64
/// connections p99 was 2.6–3.3× p50; taken one at a time, 1.3–1.8× at about the same requests per
/// second (bench/compare, load generator at a higher priority).
async fn work(executor: &Executor<'static>) {
    loop {
        for _ in 0..32 {
            executor.tick().await;
        }
        // A turn for the reactor (`block_on` reads the I/O that became ready while this thread ran tasks):
        // every 32 tasks rather than `Executor::run`'s 200, so a request that arrived meanwhile joins the
        // queue sooner. At 16 and 64 connections p99/p50 went 1.81× → 1.62× on average over 20 runs each, at
        // about the same requests per second.
        smol::future::yield_now().await;
    }
}

/// A server running on its threads; dropping it stops the server and ends every connection.
pub struct Running {
    addr: SocketAddr,
    stop: Option<smol::channel::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
    executor: Option<Arc<Executor<'static>>>,
    drain: Arc<Drain>,
    endpoint: Arc<Endpoint>,
}

impl Running {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// What the metrics read before each scrape: the sessions and connections open now.
    pub fn gauges(&self) -> Arc<dyn Fn() + Send + Sync> {
        let endpoint = Arc::clone(&self.endpoint);
        Arc::new(move || {
            endpoint.process.metrics().set_open(endpoint.sessions.count(), endpoint.drain.open_now());
        })
    }

    /// Serves until the threads stop (they do not, unless the process is ending).
    pub fn join(mut self) {
        for t in std::mem::take(&mut self.threads) {
            let _ = t.join();
        }
    }

    /// Stops gracefully: closes the listener, answers `/readyz` with 503, lets each connection
    /// finish what it serves for up to `grace`, then answers the calls still running with an error
    /// that says bb is restarting (and gives those answers up to [`FLUSH`] to be written), sends no
    /// Bitbucket write that was not already on its way, and stops. Returns what was left.
    pub fn stop(self, grace: Duration) -> Stopped {
        self.drain.begin();
        let cut = self.drain.wait_closed(grace);
        let left = if cut > 0 {
            self.drain.cut();
            self.drain.wait_closed(FLUSH)
        } else {
            0
        };
        Stopped { cut, left }
    }
}

/// How long, after the grace period, the answers to the calls cut may take to be written.
pub const FLUSH: Duration = Duration::from_secs(2);

impl Drop for Running {
    fn drop(&mut self) {
        // Closing the channel wakes every thread out of its executor loop.
        drop(self.stop.take());
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // The last strong reference: its tasks (the listener, connections) drop with it, and with
        // them the sessions, whose Bitbucket requests are cancelled.
        drop(self.executor.take());
    }
}

/// At most one line of each repeated warning per this many milliseconds.
const WARNING_PERIOD_MS: u64 = 1000;

async fn accept(listener: TcpListener, door: Arc<Door>, executor: Weak<Executor<'static>>) {
    let drain = Arc::clone(&door.endpoint.drain);
    // Once the stop began: connections that completed before it, still in the listen queue, are
    // taken (each is answered once, as a stopping bb answers) rather than reset with the listener.
    let mut late = false;
    loop {
        let accepted = if late {
            match smol::future::poll_once(listener.accept()).await {
                Some(Ok(a)) => Ok(a),
                // Nothing more waits: the listener closes with this task, so new connections are refused.
                _ => return,
            }
        } else {
            let next = smol::future::or(async { Some(listener.accept().await) }, async {
                drain.on_begin().await;
                None
            });
            match next.await {
                Some(a) => a,
                None => {
                    late = true;
                    continue;
                }
            }
        };
        match accepted {
            Ok((stream, from)) => {
                let _ = stream.set_nodelay(true);
                if door.endpoint.options.trusted_proxies.trusts(from.ip()) {
                    spawn_on(&executor, through_proxy(stream, from.ip(), Arc::clone(&door), late));
                    continue;
                }
                let peer = Peer::of(from);
                match door.connections.arrive(peer) {
                    Ok(arrival) => {
                        spawn_on(
                            &executor,
                            connection(Prefixed::plain(stream), Arc::clone(&door), from.ip(), arrival, late),
                        );
                    }
                    Err(_) => {
                        let limit = door.endpoint.options.limits.connections_per_peer();
                        turned_away(&door, &format!("the address {peer} holds its limit of {limit} connections"));
                        spawn_on(&executor, turn_away(stream));
                    }
                }
            }
            // Out of file descriptors and the like: wait a moment rather than spin.
            Err(_) => {
                smol::Timer::after(Duration::from_millis(10)).await;
            }
        }
    }
}

/// A connection from a trusted proxy: a PROXY protocol v2 header it begins with is read (within the
/// head's deadline; a broken or stalled one drops the connection) and names the connection's source,
/// which then holds the connection share; without one the source is the proxy, which holds none
/// (`docs/reference/proxies.md "A trusted proxy's own address"`).
async fn through_proxy(stream: TcpStream, proxy: IpAddr, door: Arc<Door>, late: bool) {
    let endpoint = &door.endpoint;
    let (stream, source) = match proxy_header::read(stream, endpoint.options.limits.header_timeout).await {
        Ok((stream, named)) => (stream, named.unwrap_or(proxy)),
        Err(e) => {
            endpoint.logger.log(Level::Debug, &format!("connection from the proxy {proxy} dropped: {e}"));
            return;
        }
    };
    let peer = Peer::of_ip(source);
    let arrival = if endpoint.options.trusted_proxies.trusts(source) {
        door.connections.arrive_from_proxy(peer)
    } else {
        door.connections.arrive(peer)
    };
    match arrival {
        Ok(arrival) => connection(stream, Arc::clone(&door), source, arrival, late).await,
        Err(_) => {
            let limit = endpoint.options.limits.connections_per_peer();
            turned_away(&door, &format!("the address {peer} holds its limit of {limit} connections"));
            turn_away(stream.into_tcp()).await;
        }
    }
}

/// Logs that a connection was turned away, at most once a second.
fn turned_away(door: &Door, why: &str) {
    if let Some(held) = door.turned_away.event(now_ms()) {
        door.endpoint.logger.log(Level::Warning, &format!("turned a connection away: {why}{}", and_more(held)));
    }
}

/// Writes, once a second, how many warnings of each kind were held back and not yet counted in a line.
async fn flush_warnings(door: Arc<Door>) {
    let endpoint = &door.endpoint;
    loop {
        smol::Timer::after(Duration::from_millis(WARNING_PERIOD_MS)).await;
        let now = now_ms();
        let kinds = [
            (&door.turned_away, Level::Warning, "connection(s) turned away"),
            (&endpoint.crowded, Level::Warning, "session(s) ended or refused to make room"),
            (&endpoint.refusals, Level::Notice, "request(s) refused at the gate"),
            (
                endpoint.admission.refusals(),
                Level::Notice,
                "login request(s) refused for their address's allowance or busy fetches",
            ),
        ];
        for (throttle, level, what) in kinds {
            if let Some(n) = throttle.flush(now) {
                endpoint.logger.log(level, &format!("{n} more {what} since the last such line"));
            }
        }
    }
}

/// Runs `task` on the server's executor, unless the server is stopping.
fn spawn_on(executor: &Weak<Executor<'static>>, task: impl Future<Output = ()> + Send + 'static) {
    if let Some(ex) = executor.upgrade() {
        ex.spawn(task).detach();
    }
}

/// Serves one connection. It is admitted to the cap by its first request that passes the gate
/// (but for a login request, `--oauth`, which is served under the anonymous share and admits
/// nothing); until then it may be closed to make room (`closed` yields), and a request the gate
/// refuses closes it. Admitted, it may still be closed to make room while no request of it is in flight
/// (see `connections`: those that never did work for a verified session or person go first).
///
/// A `late` connection (taken from the listen queue after the stop began) is served one request
/// and closed. Each request is from `source` (the TCP peer, or the source a trusted proxy's PROXY
/// header named), or, when that is a trusted proxy, from whom its `X-Forwarded-For` names (`proxies`).
async fn connection(stream: Prefixed, door: Arc<Door>, source: IpAddr, (held, closed): Arrival, late: bool) {
    let endpoint = Arc::clone(&door.endpoint);
    let _open = endpoint.drain.open();
    let limits = &endpoint.options.limits;
    let mut builder = http1::Builder::new();
    let clock = HeadClock::with_idle(limits.header_timeout, limits.keepalive_idle);
    let writes = WriteClock::new();
    builder.timer(clock.clone()).header_read_timeout(limits.header_timeout).max_header_size(limits.max_header);
    if late {
        builder.keep_alive(false);
    }
    let held = Arc::new(held);
    let for_service = Arc::clone(&door);
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let door = Arc::clone(&for_service);
        let held = Arc::clone(&held);
        async move {
            // One request per turn: hyper serves up to 16 requests of a connection in a row when the
            // next has already arrived, so a quick client held the thread while others waited (at 64
            // connections, half the answers in 50 µs and the slowest 1% after 5 ms). Going to the
            // back of the queue before each answer serves the connections in turn.
            smol::future::yield_now().await;
            let endpoint = Arc::clone(&door.endpoint);
            let peer = endpoint.options.trusted_proxies.peer_of(source, req.headers());
            if held.is_admitted() {
                return Ok::<_, Infallible>(counted(&held, respond(endpoint, peer, req)).await);
            }
            let passes = endpoint.gate.admit(req.uri(), req.headers()).is_ok();
            let uncounted = |r: Response<Reply>| r.map(|body| Counted { body, _in_flight: None });
            // Anyone may log in: a login request is served under the anonymous share and leaves
            // its connection waiting, so slow ones never hold the places of people using /mcp.
            if passes && endpoint.oauth.is_some() && oauth::is_oauth_path(req.uri().path()) {
                let Some(in_flight) = held.begin_anonymous() else {
                    let share = endpoint.options.limits.anonymous_logins();
                    turned_away(&door, &format!("{share} login requests of connections not admitted are in flight"));
                    return Ok(uncounted(oauth::busy(req.uri().path())));
                };
                let mut r = respond(endpoint, peer, req).await;
                r.extensions_mut().remove::<Proven>();
                return Ok(r.map(|body| Counted { body, _in_flight: Some(in_flight) }));
            }
            if passes && (held.admit() || (known(&endpoint, req.headers()) && held.admit_as_known())) {
                return Ok(counted(&held, respond(endpoint, peer, req)).await);
            }
            if passes {
                let limit = endpoint.options.limits.max_connections;
                turned_away(&door, &format!("the limit of {limit} connections is reached"));
                let message = "Server busy: too many connections are open; try again shortly.";
                let mut r = closing(refusal(StatusCode::SERVICE_UNAVAILABLE, None, message));
                r.headers_mut().insert(hyper::header::RETRY_AFTER, hyper::header::HeaderValue::from_static("1"));
                return Ok(uncounted(r));
            }
            // A preflight carries no credentials, so it neither admits a connection nor closes it.
            let preflight = req.method() == Method::OPTIONS;
            let r = respond(endpoint, peer, req).await;
            Ok(uncounted(if preflight { r } else { closing(r) }))
        }
    });
    let serve = async {
        let io = Watched::new(SmolIo(Heard::new(stream, clock.clone())), writes.clone());
        let mut conn = std::pin::pin!(builder.serve_connection(io, service));
        let ended = smol::future::or(async { Some(conn.as_mut().await) }, async {
            if late {
                std::future::pending::<()>().await;
            }
            endpoint.drain.on_begin().await;
            None
        })
        .await;
        // The stop began: finish the request being served (an idle connection closes at once).
        let ended = match ended {
            Some(r) => r,
            None => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = ended {
            endpoint.logger.log(Level::Debug, &format!("connection ended: {e}"));
        }
    };
    let made_room = async {
        // Yields when the connection is closed to make room; fails only once its place is gone anyway.
        if closed.recv().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    // A head that does not arrive in time ends the connection, as does an idle time past
    // --keep-alive-idle before a head begins (see `HeadClock`).
    let too_slow = async {
        clock.watch(limits.header_timeout).await;
        endpoint.logger.log(Level::Debug, "connection ended: no request head within the header timeout");
    };
    // An answer the client reads none of for the write timeout ends the connection: its bytes (held
    // against the memory budget until written) go with it.
    let unread = async {
        writes.watch(limits.write_timeout).await;
        endpoint
            .logger
            .log(Level::Debug, "connection ended: the client read nothing of an answer within the write timeout");
    };
    smol::future::or(serve, smol::future::or(made_room, smol::future::or(too_slow, unread))).await;
}

/// Whether a request is someone's already in: it names a live session, or (per-person mode) carries
/// a token Bitbucket accepted lately. Such a request is not refused for a cap full of connections
/// that never proved themselves ([`crate::connections::Held::admit_as_known`]). Its session or token is
/// checked again as the request is served; this only decides its place.
fn known(endpoint: &Endpoint, h: &hyper::HeaderMap) -> bool {
    let value = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty());
    if value("mcp-session-id").is_some_and(|id| endpoint.sessions.find(id).is_some()) {
        return true;
    }
    let token = endpoint.per_user_header.as_ref().and_then(|name| value(name.as_str()));
    token.is_some_and(|t| endpoint.persons.accepted(&PersonalToken::new(t)))
}

/// Serves an admitted connection's request, counting it in flight until its answer's last byte is
/// written (an SSE answer runs long after its head): the answer says whether the request was work
/// for a verified session or person ([`Proven`]), which proves the connection.
async fn counted(held: &Arc<Held>, answer: impl Future<Output = Response<Reply>>) -> Response<Counted> {
    let mut in_flight = held.begin();
    let mut r = answer.await;
    if r.extensions_mut().remove::<Proven>().is_some() {
        in_flight.proves();
    }
    r.map(|body| Counted { body, _in_flight: Some(in_flight) })
}

/// An answer's body, holding its request in flight (when its connection is admitted) until the
/// body is written or dropped.
struct Counted {
    body: Reply,
    _in_flight: Option<InFlight>,
}

impl Body for Counted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Answers a connection beyond the cap with 503 and closes it, without serving it. What the
/// client already sent is read and dropped for a moment, so the close does not reset the answer away.
async fn turn_away(mut stream: TcpStream) {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Server busy: too many connections are open; try again shortly."}}"#;
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let answer = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.flush().await?;
        stream.shutdown(std::net::Shutdown::Write)?;
        let mut sink = [0u8; 4096];
        let mut left: usize = 64 * 1024;
        while left > 0 {
            let n = stream.read(&mut sink).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        io::Result::Ok(())
    };
    let _ = smol::future::or(async { answer.await.ok() }, async {
        smol::Timer::after(Duration::from_secs(1)).await;
        None
    })
    .await;
}

async fn expire(endpoint: Arc<Endpoint>) {
    let idle = endpoint.options.limits.session_idle;
    let period = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
    loop {
        smol::Timer::after(period).await;
        let n = endpoint.sessions.expire(idle);
        if n > 0 {
            endpoint.logger.log(Level::Info, &format!("ended {n} idle session(s)"));
        }
    }
}
