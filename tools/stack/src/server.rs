//! The HTTP side: accept connections, serve HTTP/1.1 with hyper on smol, and carry out what the control API
//! decided for each request (latency, a status, a rate limit's 429, a hang, a cut body) around the plain handlers,
//! logging when each Bitbucket request arrived and when its answer was made.

use crate::admission::{self, Admission};
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
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Request bodies above this are refused with 413.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// The state every connection shares.
#[derive(Debug)]
pub struct Shared {
    /// The world, behind one lock: a handler holds it for its whole request, so requests are served one at a
    /// time; latency and hangs are waited out without it.
    pub world: Mutex<World>,
    /// Requests that have arrived (their headers read), control requests too, counted before they wait for the
    /// world's lock: a test holding the lock knows by it that a request is waiting.
    pub arrived: AtomicU64,
}

impl Shared {
    /// The world, even if a handler panicked while holding the lock.
    pub fn lock(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Serves connections from `listener` until `stop` yields or closes; dropping the executor then ends every
/// connection still open (hanging ones included).
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
    smol::block_on(ex.run(accept.or(stopped)));
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
    let (delay, admission, logged) = {
        let mut world = shared.lock();
        let ctx = world.context_path.clone();
        let Some(path) = request.path.strip_prefix(&ctx).filter(|p| p.is_empty() || p.starts_with('/')) else {
            return to_hyper(errors::no_such_resource(&request.path), false);
        };
        request.path = if path.is_empty() { "/".into() } else { path.to_string() };
        if let Some(rest) = request.path.strip_prefix("/_stack") {
            request.body = match body {
                Ok(b) => b,
                Err(r) => return to_hyper(r, false),
            };
            let segs: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect();
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            return to_hyper(control::handle(&mut world, &request, &segs), false);
        }
        // Whom the credentials name: the rate limit's bucket and the log's user (none for none, or wrong ones).
        let user = match auth::caller(&world.model, &request) {
            Ok(Caller::User(slug)) => Some(slug),
            Ok(Caller::Anonymous) | Err(_) => None,
        };
        let logged = world.control.log.start(&request.method, &request.path, query, user.clone(), arrived);
        request.body = match body {
            Ok(b) => b,
            Err(r) => {
                world.control.log.end(logged, r.status, Instant::now());
                return to_hyper(r, false);
            }
        };
        let (delay, admission) =
            world.control.admit_as(&request.method, &request.path, user.as_deref(), Instant::now());
        world.control.enter();
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
        Admission::Serve => (routes::serve(&mut shared.lock(), &request), false),
        Admission::Truncate => (routes::serve(&mut shared.lock(), &request), true),
        Admission::Echo(status) => (admission::echo_response(status, request.header("authorization")), false),
    };
    // The answer is made and goes to the connection to write now.
    shared.lock().control.log.end(logged, response.status, Instant::now());
    drop(in_flight);
    to_hyper(response, truncate)
}

struct InFlight(Arc<Shared>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.lock().control.leave();
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
