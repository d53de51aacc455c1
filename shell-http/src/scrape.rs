//! The `--metrics ADDR` listener: `GET /metrics` answers the process's metrics in Prometheus' text
//! format, apart from `/mcp` (its own address, loopback unless told otherwise, no token: it holds no
//! person, project or pull request).
//!
//! Bounded whatever its clients do, as the MCP listener is:
//! - the `Host` is checked as the MCP listener checks it (`gate`: the loopback names with the bound
//!   port, the bound address, the `--allow-host` names); another gets 403, so a web page cannot read
//!   the metrics through DNS rebinding;
//! - at most [`Bounds::max_connections`] connections are open (64); one beyond is closed at once;
//! - a request head must arrive within [`Bounds::header_timeout`] (10 s), and an idle keep-alive
//!   connection is closed after as long (hyper's header-read timeout, `bb_hyper_smol::HeadClock`);
//!   a connection lives at most [`Bounds::lifetime`] (a minute), so a client that never reads its
//!   answer gives its place back too;
//! - an accept that fails (out of file descriptors, say) is waited out for [`ACCEPT_PAUSE`] and
//!   tried again: the listener never stops.

use std::cell::Cell;
use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bb_drive::metrics::{self, Metrics};
use bb_hyper_smol::{HeadClock, SmolIo};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Response, StatusCode};
use smol::LocalExecutor;
use smol::net::{TcpListener, TcpStream};

use crate::gate::{Gate, Refusal};
use crate::options::HttpOptions;
use crate::reply::{Reply, empty, from_elsewhere, json, refusal};

/// How long the accept loop waits after an accept failed.
pub(crate) const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// The `--metrics` listener, serving on its own thread until the process ends.
pub struct MetricsServer {
    addr: SocketAddr,
}

/// What one metrics client may hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Connections open at once; one beyond is closed at once.
    pub(crate) max_connections: usize,
    /// How long a request head may take, and an idle keep-alive connection may wait for the next.
    pub(crate) header_timeout: Duration,
    /// How long a connection may stay open at all.
    pub(crate) lifetime: Duration,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds { max_connections: 64, header_timeout: Duration::from_secs(10), lifetime: Duration::from_secs(60) }
    }
}

impl MetricsServer {
    /// Binds `addr` and serves `GET /metrics` there to requests whose `Host` is a loopback name with
    /// the bound port, the bound address, or one of `allow_hosts` (as `--allow-host` names them);
    /// `before` runs before each scrape (to read the gauges that are counted elsewhere, such as open
    /// sessions); what it serves is `metrics`, the application's.
    pub fn serve(
        addr: SocketAddr,
        allow_hosts: &[String],
        metrics: Arc<Metrics>,
        before: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<MetricsServer> {
        let std_listener = StdListener::bind(addr)?;
        let addr = std_listener.local_addr()?;
        let listener = TcpListener::try_from(std_listener)?;
        spawn(listener, Scrape::new(addr, allow_hosts, metrics, before, Bounds::default()))?;
        Ok(MetricsServer { addr })
    }

    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

/// What every connection of the listener shares.
struct Scrape {
    gate: Gate,
    metrics: Arc<Metrics>,
    before: Arc<dyn Fn() + Send + Sync>,
    bounds: Bounds,
}

impl Scrape {
    fn new(
        addr: SocketAddr,
        allow_hosts: &[String],
        metrics: Arc<Metrics>,
        before: Arc<dyn Fn() + Send + Sync>,
        bounds: Bounds,
    ) -> Scrape {
        let options = HttpOptions { allow_hosts: allow_hosts.to_vec(), ..HttpOptions::default() };
        Scrape { gate: Gate::new(&options, addr), metrics, before, bounds }
    }
}

/// Where connections come from: a listener, or in tests one that fails when told to.
trait Accept {
    fn next_connection(&self) -> impl Future<Output = io::Result<(TcpStream, SocketAddr)>>;
}

impl Accept for TcpListener {
    fn next_connection(&self) -> impl Future<Output = io::Result<(TcpStream, SocketAddr)>> {
        self.accept()
    }
}

/// Serves `listener` on a thread of its own until the process ends.
fn spawn(listener: impl Accept + Send + 'static, scrape: Scrape) -> io::Result<()> {
    std::thread::Builder::new().name("bb-metrics".into()).spawn(move || {
        let ex = LocalExecutor::new();
        smol::block_on(ex.run(accept(&ex, listener, Rc::new(scrape))));
    })?;
    Ok(())
}

/// Accepts connections for ever: up to the cap each is served on `ex`, beyond it closed; a failed
/// accept is tried again after [`ACCEPT_PAUSE`].
async fn accept(ex: &LocalExecutor<'_>, listener: impl Accept, scrape: Rc<Scrape>) {
    let open = Rc::new(Cell::new(0usize));
    loop {
        match listener.next_connection().await {
            Ok((stream, _)) => {
                if open.get() >= scrape.bounds.max_connections {
                    drop(stream);
                    continue;
                }
                let slot = Slot::take(&open);
                ex.spawn(connection(stream, Rc::clone(&scrape), slot)).detach();
            }
            Err(_) => {
                smol::Timer::after(ACCEPT_PAUSE).await;
            }
        }
    }
}

/// An open connection's place under the cap, given back when dropped.
struct Slot(Rc<Cell<usize>>);

impl Slot {
    fn take(open: &Rc<Cell<usize>>) -> Slot {
        open.set(open.get() + 1);
        Slot(Rc::clone(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// Serves one connection until its client closes it, a head is late, or its lifetime is over.
async fn connection(stream: TcpStream, scrape: Rc<Scrape>, _slot: Slot) {
    let bounds = scrape.bounds;
    let clock = HeadClock::new();
    let mut builder = http1::Builder::new();
    builder.timer(clock.clone()).header_read_timeout(bounds.header_timeout).max_header_size(16 * 1024);
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let scrape = Rc::clone(&scrape);
        async move { Ok::<_, Infallible>(answer(&req, &scrape)) }
    });
    let serve = async {
        let _ = builder.serve_connection(SmolIo(stream), service).await;
    };
    let over = async {
        smol::future::or(clock.watch(bounds.header_timeout), async {
            smol::Timer::after(bounds.lifetime).await;
        })
        .await;
    };
    smol::future::or(serve, over).await;
}

fn answer(req: &hyper::Request<hyper::body::Incoming>, scrape: &Scrape) -> Response<Reply> {
    if let Err(why) = scrape.gate.admit_preflight(req.uri(), req.headers()) {
        return refused(why);
    }
    if req.method() != Method::GET || req.uri().path() != "/metrics" {
        return empty(StatusCode::NOT_FOUND);
    }
    (scrape.before)();
    let mut r = json(scrape.metrics.encode().into_bytes());
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(metrics::CONTENT_TYPE));
    r
}

/// The answer to a request the gate refused, as the MCP listener gives it.
fn refused(why: Refusal) -> Response<Reply> {
    from_elsewhere(&why).unwrap_or_else(|| refusal(StatusCode::BAD_REQUEST, None, "Bad request: send `GET /metrics`."))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use std::io::{Read, Write};
    use std::time::Instant;

    /// A listener whose first `fails` accepts fail, as they do when the process is out of file
    /// descriptors.
    struct Failing {
        listener: TcpListener,
        fails: Cell<usize>,
    }

    impl Accept for Failing {
        async fn next_connection(&self) -> io::Result<(TcpStream, SocketAddr)> {
            if self.fails.get() > 0 {
                self.fails.set(self.fails.get() - 1);
                return Err(io::Error::from_raw_os_error(24));
            }
            self.listener.accept().await
        }
    }

    fn bounds(max_connections: usize, header_timeout: Duration) -> Bounds {
        Bounds { max_connections, header_timeout, lifetime: Duration::from_secs(600) }
    }

    /// A listener on 127.0.0.1 with `bounds`, its first `fails` accepts failing.
    fn start(bounds: Bounds, fails: usize) -> SocketAddr {
        let std_listener = StdListener::bind("127.0.0.1:0").unwrap();
        let addr = std_listener.local_addr().unwrap();
        let listener = Failing { listener: TcpListener::try_from(std_listener).unwrap(), fails: Cell::new(fails) };
        let allowed = ["metrics.example".to_owned()];
        spawn(listener, Scrape::new(addr, &allowed, Arc::new(Metrics::new()), Arc::new(|| {}), bounds)).unwrap();
        addr
    }

    fn connect(addr: SocketAddr) -> std::net::TcpStream {
        let s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// Sends `GET path` with `host` and `Connection: close`; the status line's code.
    fn get(addr: SocketAddr, path: &str, host: &str) -> u16 {
        let mut s = connect(addr);
        // A connection beyond the cap may be closed before the request is written.
        let _ = write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
    }

    /// Whether the server closed `s` (end of stream or reset) before the read timeout.
    fn closed(s: &mut std::net::TcpStream) -> bool {
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) => return e.kind() == io::ErrorKind::ConnectionReset,
            }
        }
    }

    /// Retries `f` every 20 ms for up to 20 s.
    fn eventually(mut f: impl FnMut() -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if f() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn the_listener_goes_on_accepting_after_accepts_fail() {
        let addr = start(Bounds::default(), 3);
        assert_eq!(get(addr, "/metrics", &addr.to_string()), 200);
        assert_eq!(get(addr, "/metrics", &addr.to_string()), 200);
    }

    #[test]
    fn a_foreign_host_is_refused_as_the_mcp_listener_refuses_it() {
        let addr = start(Bounds::default(), 0);
        let port = addr.port();
        assert_eq!(get(addr, "/metrics", "evil.example"), 403);
        assert_eq!(get(addr, "/metrics", &format!("evil.example:{port}")), 403);
        assert_eq!(get(addr, "/metrics", &format!("127.0.0.1:{}", port + 1)), 403);
        for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), "metrics.example".into()] {
            assert_eq!(get(addr, "/metrics", &host), 200, "{host}");
        }
        assert_eq!(get(addr, "/other", &addr.to_string()), 404);
    }

    #[test]
    fn connections_that_send_no_whole_head_or_sit_idle_are_closed_after_the_header_timeout() {
        let addr = start(bounds(64, Duration::from_millis(300)), 0);
        let mut silent = connect(addr);
        let mut half = connect(addr);
        half.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
        let mut idle = connect(addr);
        write!(idle, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
        let started = Instant::now();
        assert!(closed(&mut silent), "a connection that sends nothing");
        assert!(closed(&mut half), "one that sends half a head");
        assert!(closed(&mut idle), "one kept alive after its answer");
        assert!(started.elapsed() < Duration::from_secs(15));
    }

    #[test]
    fn connections_beyond_the_cap_are_closed_and_a_place_comes_back_when_one_closes() {
        let addr = start(bounds(2, Duration::from_secs(120)), 0);
        let first = connect(addr);
        let mut second = connect(addr);
        // The server has taken both (they are answered), so the next is beyond the cap.
        write!(second, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut head = [0u8; 12];
        second.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");
        let mut third = connect(addr);
        assert!(closed(&mut third), "closed at once, long before the header timeout");
        drop(first);
        assert!(eventually(|| get(addr, "/metrics", &addr.to_string()) == 200));
    }
}
