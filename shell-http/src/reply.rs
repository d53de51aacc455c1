//! What goes back on the wire: a whole JSON body, an SSE stream that ends after the answer, or
//! nothing; and the JSON-RPC error bodies of the transport's own refusals.
//!
//! A large message's bytes are held against the process's memory budget until the last of them is
//! written (`unsent`): hyper writes those very bytes, never a copy, nor an SSE event copied around them.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, SizeHint};
use hyper::header::{CONNECTION, CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::{Value, json};
use smol::stream::Stream;

use crate::gate::Refusal;
use crate::observe::Timing;
use crate::sessions::{Part, WaiterGuard};
use crate::unsent::CHARGED_FROM;

/// The JSON-RPC error code of a transport-level refusal (as the reference SDK uses it).
const TRANSPORT_ERROR: i64 = -32000;

/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;

/// A response body.
pub(crate) enum Reply {
    /// A whole body in one frame (`None` once sent, or for an empty body).
    Full(Option<Bytes>),
    /// An SSE stream of the messages for one request, ending after its answer.
    Sse(Box<SseStream>),
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Reply::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Reply::Sse(s) => s.poll_event(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Reply::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Reply::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Reply::Full(None) => SizeHint::with_exact(0),
            Reply::Sse(_) => SizeHint::default(),
        }
    }
}

/// The events of one request's SSE answer: what has arrived already, then what the session sends,
/// with a comment every `keepalive` while nothing does.
pub(crate) struct SseStream {
    queued: VecDeque<Bytes>,
    rx: Pin<Box<smol::channel::Receiver<Part>>>,
    keepalive: smol::Timer,
    interval: Duration,
    done: bool,
    /// Yields `None` when the stop's grace period is over; then the request's id, to answer it with an error.
    cut: (Pin<Box<smol::channel::Receiver<()>>>, Value),
    /// The request's timing, ended by its answer (for the metrics).
    timing: Option<Timing>,
    /// For a stream that answers no call (a session's GET stream, a `subscriptions/listen`): yields `None`
    /// once the stop begins, when the stream ends at once, with the answer given here (a listen's
    /// graceful closure) or none, rather than hold the stop for its grace period.
    stop: Option<AtStop>,
    // Unregisters the waiter when the stream ends or the client goes away.
    _guard: WaiterGuard,
}

/// What ends a stream at the stop: the signal that the stop began, and the answer sent last (if any).
type AtStop = (Pin<Box<smol::channel::Receiver<()>>>, Option<Bytes>);

impl SseStream {
    /// A stream that first sends `already` (messages received before the switch to SSE).
    pub(crate) fn new(
        already: Vec<Part>,
        rx: smol::channel::Receiver<Part>,
        interval: Duration,
        guard: WaiterGuard,
        cut: (smol::channel::Receiver<()>, Value),
        mut timing: Option<Timing>,
    ) -> SseStream {
        // A comment first, so the client sees the stream open at once.
        let mut queued = VecDeque::from([Bytes::from_static(b": bb\n\n")]);
        let mut done = false;
        for d in already {
            match d {
                Part::Interim(m) => queued.extend(event(m)),
                Part::Final(m, said) => {
                    if let Some(t) = timing.take() {
                        t.answered(said);
                    }
                    queued.extend(event(m));
                    done = true;
                }
                Part::Unanswered => done = true,
            }
        }
        let cut = (Box::pin(cut.0), cut.1);
        SseStream {
            queued,
            rx: Box::pin(rx),
            keepalive: smol::Timer::after(interval),
            interval,
            done,
            cut,
            timing,
            stop: None,
            _guard: guard,
        }
    }

    /// Ends the stream as soon as the stop begins (`begun` yields `None`), sending `answer` last when
    /// given: for a stream that waits for no call, which would otherwise hold the stop.
    pub(crate) fn ending_at_stop(mut self, begun: smol::channel::Receiver<()>, answer: Option<Vec<u8>>) -> SseStream {
        self.stop = Some((Box::pin(begun), answer.map(Bytes::from)));
        self
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(b) = self.queued.pop_front() {
            return Poll::Ready(Some(b));
        }
        if self.done {
            return Poll::Ready(None);
        }
        match self.rx.as_mut().poll_next(cx) {
            Poll::Ready(Some(Part::Interim(m))) => {
                self.queued.extend(event(m));
                return Poll::Ready(self.queued.pop_front());
            }
            Poll::Ready(Some(Part::Final(m, said))) => {
                if let Some(t) = self.timing.take() {
                    t.answered(said);
                }
                self.done = true;
                self.queued.extend(event(m));
                return Poll::Ready(self.queued.pop_front());
            }
            Poll::Ready(Some(Part::Unanswered) | None) => {
                self.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if let Some((begun, answer)) = &mut self.stop
            && let Poll::Ready(None) = begun.as_mut().poll_next(cx)
        {
            self.done = true;
            if let Some(answer) = answer.take() {
                self.queued.extend(event(answer));
            }
            return Poll::Ready(self.queued.pop_front());
        }
        if let Poll::Ready(None) = self.cut.0.as_mut().poll_next(cx) {
            if let Some(t) = self.timing.take() {
                t.cut();
            }
            self.done = true;
            let body = json!({"jsonrpc": "2.0", "id": self.cut.1.clone(),
                              "error": {"code": TRANSPORT_ERROR, "message": crate::drain::CUT}});
            self.queued.extend(event(Bytes::from(body.to_string())));
            return Poll::Ready(self.queued.pop_front());
        }
        match Pin::new(&mut self.keepalive).poll(cx) {
            Poll::Ready(_) => {
                self.keepalive.set_after(self.interval);
                // Register the renewed timer's waker before handing out the comment.
                let _ = Pin::new(&mut self.keepalive).poll(cx);
                Poll::Ready(Some(Bytes::from_static(b": keepalive\n\n")))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// One SSE `message` event carrying one JSON-RPC message (which never holds a newline): one frame, or
/// for a message held against the budget three, so that its own bytes go out as they are, never copied.
fn event(message: Bytes) -> Vec<Bytes> {
    const HEAD: &[u8] = b"event: message\ndata: ";
    if message.len() >= CHARGED_FROM {
        return vec![Bytes::from_static(HEAD), message, Bytes::from_static(b"\n\n")];
    }
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(HEAD);
    out.extend_from_slice(&message);
    out.extend_from_slice(b"\n\n");
    vec![Bytes::from(out)]
}

/// A `200 application/json` answer.
pub(crate) fn json(message: impl Into<Bytes>) -> Response<Reply> {
    let mut r = Response::new(Reply::Full(Some(message.into())));
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// A `200 text/event-stream` answer.
pub(crate) fn sse(stream: SseStream) -> Response<Reply> {
    let mut r = Response::new(Reply::Sse(Box::new(stream)));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// A response with a status and no body.
pub(crate) fn empty(status: StatusCode) -> Response<Reply> {
    let mut r = Response::new(Reply::Full(None));
    *r.status_mut() = status;
    r
}

/// A refusal: `status` with a JSON-RPC error whose message says what to do.
pub(crate) fn refusal(status: StatusCode, id: Option<Value>, message: &str) -> Response<Reply> {
    let body = json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null),
                      "error": {"code": TRANSPORT_ERROR, "message": message}});
    let mut r = json(body.to_string().into_bytes());
    *r.status_mut() = status;
    r
}

/// The answer to a request the gate refused for where it came from (its Host, its Origin, or two of
/// either), the same on every listener; `None` for the refusals each listener words itself.
pub(crate) fn from_elsewhere(why: &Refusal) -> Option<Response<Reply>> {
    Some(match why {
        Refusal::Host => {
            refusal(StatusCode::FORBIDDEN, None, "Forbidden: this Host is not one bb answers to (see --allow-host).")
        }
        Refusal::Origin => {
            refusal(StatusCode::FORBIDDEN, None, "Forbidden: this Origin is not allowed (see --allow-origin).")
        }
        Refusal::Ambiguous(name) => {
            refusal(StatusCode::BAD_REQUEST, None, &format!("Bad request: send exactly one {name} header."))
        }
        Refusal::Target | Refusal::NoToken | Refusal::WrongToken => return None,
    })
}

/// A body that is no JSON-RPC message at all: 400 with the JSON-RPC parse error (-32700).
pub(crate) fn parse_error(message: &str) -> Response<Reply> {
    let body = json!({"jsonrpc": "2.0", "id": Value::Null, "error": {"code": PARSE_ERROR, "message": message}});
    let mut r = json(body.to_string().into_bytes());
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r
}

/// Marks a response as the last on its connection (the request was not, or not fully, read).
pub(crate) fn closing(mut r: Response<Reply>) -> Response<Reply> {
    r.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    r
}
