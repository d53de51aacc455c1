//! The HTTP side: accept connections, serve HTTP/1.1 with hyper on smol, and carry out what the control API
//! decided for each request (latency, a status, a rate limit's 429, a hang, a cut body) around the plain handlers,
//! logging when each Bitbucket request arrived and when its answer was made.
//!
//! Requests are served at once, as on a real Bitbucket: connections run on a few threads, and whatever waits for
//! the world or works on it (a handler, the caller's authentication, a `/_stack` request) on smol's blocking pool;
//! reads share the world (its read lock) and a write has it alone (its write lock). What a read changes (the counts, the rate limit's
//! buckets, the faults, the log) sits beside the world under a lock of its own, taken briefly before and after
//! the handler, never while the world is held; a `/_stack` request and [`Shared::whole`] take both, world first.

use crate::admission::{self, Admission, Control};
use crate::auth::{self, Caller};
use crate::control;
use crate::errors;
use crate::exchange::{Request, Response};
use crate::routes;
use crate::world::World;
use bb_hyper_smol::{SmolIo, SmolTimer};
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use smol::future::FutureExt;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Request bodies above this are refused with 413.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// The state every connection shares.
#[derive(Debug)]
pub struct Shared {
    /// The world: a read holds it shared while its handler runs, a write alone; latency and hangs are waited out
    /// without it. Its `control` is an empty stand-in except while [`Shared::whole`] holds it.
    world: RwLock<World>,
    /// What `/_stack` set and what is kept of each request ([`Control`]), taken briefly around each handler.
    control: Mutex<Control>,
    /// The context path every Bitbucket path sits under (fixed at the start).
    context_path: String,
    /// Requests that have arrived (their headers read), control requests too, counted before they wait for any
    /// lock: a test holding the world knows by it that a request is waiting.
    pub arrived: AtomicU64,
}

impl Shared {
    /// The state of a stack about to serve `world` (its control moves beside it).
    pub fn new(mut world: World) -> Shared {
        let control = std::mem::take(&mut world.control);
        let context_path = world.context_path.clone();
        Shared { world: RwLock::new(world), control: Mutex::new(control), context_path, arrived: AtomicU64::new(0) }
    }

    /// The world held to read, shared with other reads (even if a handler panicked while holding it).
    pub fn read(&self) -> RwLockReadGuard<'_, World> {
        self.world.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The world held to change, alone.
    fn write(&self) -> RwLockWriteGuard<'_, World> {
        self.world.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What `/_stack` set and the counts, alone. Never taken while the world is held, except by [`Shared::whole`].
    fn control(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The whole world, its control inside, held alone: for `/_stack` requests and tests that look inside.
    pub fn whole(&self) -> Whole<'_> {
        let mut world = self.write();
        let mut control = self.control();
        std::mem::swap(&mut world.control, &mut *control);
        Whole { world, control }
    }
}

/// The world and its control held together, alone ([`Shared::whole`]); the control goes back beside the world when
/// this is dropped.
pub struct Whole<'a> {
    world: RwLockWriteGuard<'a, World>,
    control: MutexGuard<'a, Control>,
}

impl Deref for Whole<'_> {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

impl DerefMut for Whole<'_> {
    fn deref_mut(&mut self) -> &mut World {
        &mut self.world
    }
}

impl Drop for Whole<'_> {
    fn drop(&mut self) {
        std::mem::swap(&mut self.world.control, &mut *self.control);
    }
}

/// Threads that serve connections (reading requests, writing answers), beside the one that accepts them: the cores,
/// at least four, at most sixteen. Handlers run on the blocking pool, not on these.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get()).clamp(4, 16)
}

/// Accepts connections from `listener` on this thread and serves them on [`threads`] more, until `stop` yields or
/// closes; dropping the executor then ends every connection still open (hanging ones included).
pub fn run(
    listener: smol::net::TcpListener,
    shared: Arc<Shared>,
    stop: smol::channel::Receiver<()>,
    tls: Option<futures_rustls::TlsAcceptor>,
) {
    let ex = Arc::new(smol::Executor::new());
    let accept = {
        let ex = ex.clone();
        async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        match &tls {
                            None => ex.spawn(connection(stream, shared.clone())).detach(),
                            Some(acceptor) => {
                                let (accept, shared) = (acceptor.accept(stream), shared.clone());
                                // A failed handshake (untrusted or missing client certificate) ends only
                                // that connection; rustls has already sent the client its alert.
                                ex.spawn(async move {
                                    if let Ok(stream) = accept.await {
                                        connection(stream, shared).await;
                                    }
                                })
                                .detach();
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
    };
    let stopped = async move {
        let _ = stop.recv().await;
    };
    // The serving threads run the connections until the channel closes (`done` dropped); this one only accepts, so
    // it takes new connections while every serving thread waits for the world. One that cannot be started leaves
    // fewer; none, and this thread serves too.
    let (done, closed) = smol::channel::bounded::<()>(1);
    let serving: Vec<_> = (0..threads())
        .filter_map(|i| {
            let (ex, closed) = (ex.clone(), closed.clone());
            std::thread::Builder::new()
                .name(format!("bb-stack-{i}"))
                .spawn(move || smol::block_on(ex.run(async move { while closed.recv().await.is_ok() {} })))
                .ok()
        })
        .collect();
    if serving.is_empty() {
        smol::block_on(ex.run(accept.or(stopped)));
    } else {
        smol::block_on(accept.or(stopped));
    }
    drop(done);
    for thread in serving {
        let _ = thread.join();
    }
}

async fn connection<S>(stream: S, shared: Arc<Shared>)
where
    S: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(respond(shared, req).await) }
    });
    let _ = http1::Builder::new().timer(SmolTimer).serve_connection(SmolIo(stream), service).await;
}

async fn read_body(mut body: Incoming) -> Result<Vec<u8>, Response> {
    let mut out = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| errors::bad_request(&format!("The request body could not be read: {e}")))?;
        if let Ok(data) = frame.into_data() {
            out.extend_from_slice(&data);
            if out.len() > MAX_BODY {
                return Err(errors::error(413, None, "The request body is too large."));
            }
        }
    }
    Ok(out)
}

async fn respond(shared: Arc<Shared>, req: hyper::Request<Incoming>) -> hyper::Response<StackBody> {
    // When the request arrived (for the request log): before its body is read, before any added latency and before
    // it waits for the world's lock, so requests sent together log starts close together.
    let arrived = Instant::now();
    shared.arrived.fetch_add(1, Ordering::SeqCst);
    let (parts, body) = req.into_parts();
    let target = parts.uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/");
    let query = parts.uri.query().unwrap_or("");
    let mut request = Request::new(parts.method.as_str(), target);
    for (name, value) in &parts.headers {
        if let Ok(v) = value.to_str() {
            request.headers.insert(name.as_str().to_string(), v.to_string());
        }
    }
    let body = read_body(body).await;
    let Some(path) = request.path.strip_prefix(&shared.context_path).filter(|p| p.is_empty() || p.starts_with('/'))
    else {
        return to_hyper(errors::no_such_resource(&request.path), false);
    };
    request.path = if path.is_empty() { "/".into() } else { path.to_string() };
    if let Some(rest) = request.path.strip_prefix("/_stack") {
        request.body = match body {
            Ok(b) => b,
            Err(r) => return to_hyper(r, false),
        };
        let segs: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect();
        let shared = shared.clone();
        let response = smol::unblock(move || {
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            control::handle(&mut shared.whole(), &request, &segs)
        })
        .await;
        return to_hyper(response, false);
    }
    // Whom the credentials name: the rate limit's bucket and the log's user (none for none, or wrong ones). Read on
    // the blocking pool, as every wait for the world is, so no thread that serves connections waits for it.
    let (mut request, user) = {
        let shared = shared.clone();
        smol::unblock(move || {
            let user = match auth::caller(&shared.read().model, &request) {
                Ok(Caller::User(slug)) => Some(slug),
                Ok(Caller::Anonymous) | Err(_) => None,
            };
            (request, user)
        })
        .await
    };
    let (delay, admission, logged) = {
        let mut control = shared.control();
        let logged = control.log.start(&request.method, &request.path, query, user.clone(), arrived);
        request.body = match body {
            Ok(b) => b,
            Err(r) => {
                control.log.end(logged, r.status, Instant::now());
                return to_hyper(r, false);
            }
        };
        let (delay, admission) = control.admit_as(&request.method, &request.path, user.as_deref(), Instant::now());
        control.enter();
        (delay, admission, logged)
    };
    // Counts the request as in flight until its answer is made, or until it is dropped (a hang, a closed
    // connection).
    let in_flight = InFlight(shared.clone());
    if let Some(d) = delay {
        smol::Timer::after(d).await;
    }
    let (response, truncate) = match admission {
        Admission::Respond(r) => (r, false),
        Admission::Hang => std::future::pending().await,
        Admission::Serve => (serve(&shared, request).await, false),
        Admission::Truncate => (serve(&shared, request).await, true),
        Admission::Echo(status) => (admission::echo_response(status, request.header("authorization")), false),
    };
    // The answer is made and goes to the connection to write now.
    shared.control().log.end(logged, response.status, Instant::now());
    drop(in_flight);
    to_hyper(response, truncate)
}

/// A Bitbucket request served under the world's read lock, or its write lock when it may change the world, on a
/// thread of smol's blocking pool (grown as needed): a large answer being made (a 10,000-line diff) or a request
/// waiting for the world holds no thread that serves connections, and the system shares the cores between the
/// answers being made, so a small one is not queued behind large ones.
async fn serve(shared: &Arc<Shared>, request: Request) -> Response {
    let shared = shared.clone();
    smol::unblock(move || {
        let read = routes::serve_read(&shared.read(), &request);
        match read {
            Some(response) => response,
            None => routes::serve_write(&mut shared.write(), &request),
        }
    })
    .await
}

struct InFlight(Arc<Shared>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.control().leave();
    }
}

fn to_hyper(r: Response, truncate: bool) -> hyper::Response<StackBody> {
    let mut builder = hyper::Response::builder().status(r.status);
    for (k, v) in &r.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let body = if truncate {
        // Declare the whole length, send half (at least the declared length minus one), then close.
        // An empty answer (a 204) is cut as a two-byte one would be: one byte is sent of the two declared.
        let mut body = r.body;
        if body.len() < 2 {
            body.resize(2, b' ');
        }
        let declared = body.len();
        builder = builder.header("Content-Length", declared.to_string());
        let sent = Bytes::from(body).slice(..declared / 2);
        StackBody::Truncated(TruncatedState::Data(sent))
    } else {
        StackBody::Full(Some(Bytes::from(r.body)))
    };
    builder.body(body).unwrap_or_else(|_| hyper::Response::new(StackBody::Full(None)))
}

/// A response body: whole, or cut short on purpose.
pub enum StackBody {
    /// The whole body, sent in one frame.
    Full(Option<Bytes>),
    /// Part of a body whose declared length is longer; after it, a pause (so the part is flushed) and an error
    /// that makes hyper close the connection.
    Truncated(TruncatedState),
}

/// Where a cut body is.
pub enum TruncatedState {
    /// The part still to send.
    Data(Bytes),
    /// Sent; waiting before failing.
    Pause(smol::Timer),
    /// Failed.
    Done,
}

impl Body for StackBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            StackBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            StackBody::Truncated(state) => match std::mem::replace(state, TruncatedState::Done) {
                TruncatedState::Data(b) => {
                    *state = TruncatedState::Pause(smol::Timer::after(Duration::from_millis(30)));
                    Poll::Ready(Some(Ok(Frame::data(b))))
                }
                TruncatedState::Pause(mut timer) => match Pin::new(&mut timer).poll(cx) {
                    Poll::Pending => {
                        *state = TruncatedState::Pause(timer);
                        Poll::Pending
                    }
                    Poll::Ready(_) => Poll::Ready(Some(Err(io::Error::other("body cut short by the stack")))),
                },
                TruncatedState::Done => Poll::Ready(None),
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, StackBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            StackBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            StackBody::Full(None) => SizeHint::with_exact(0),
            StackBody::Truncated(_) => SizeHint::default(),
        }
    }
}
