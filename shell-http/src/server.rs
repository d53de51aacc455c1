//! Sockets and threads: bind, accept (turning away connections beyond the cap with 503), serve
//! HTTP/1.1 with hyper on a smol executor run by one thread per core, and end idle sessions.

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use bb_core::{Level, ServerConfig};
use bb_drive::{Bitbucket, Logger};
use hyper::header::HeaderName;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use smol::Executor;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::{TcpListener, TcpStream};

use crate::exchange::{Endpoint, respond};
use crate::gate::Gate;
use crate::hyper_smol::{SmolIo, SmolTimer};
use crate::options::HttpOptions;
use crate::sessions::Sessions;

/// A bound, not yet running, Streamable HTTP server.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    endpoint: Arc<Endpoint>,
    executor: Arc<Executor<'static>>,
}

impl Server {
    /// Binds `addr` (use port 0 for any free port). Every session runs over `config`; Bitbucket
    /// requests go through `bitbucket`, with the session's person in per-person mode.
    pub fn bind(
        addr: SocketAddr,
        options: HttpOptions,
        config: ServerConfig,
        bitbucket: Arc<dyn Bitbucket>,
        logger: Logger,
    ) -> io::Result<Server> {
        let per_user_header = match &options.per_user_token_header {
            None => None,
            Some(name) => Some(HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("`{name}` is not a valid HTTP header name"))
            })?),
        };
        let std_listener = StdListener::bind(addr)?;
        let addr = std_listener.local_addr()?;
        let listener = TcpListener::try_from(std_listener)?;
        let executor = Arc::new(Executor::new());
        let endpoint = Arc::new(Endpoint {
            gate: Gate::new(&options, addr),
            sessions: Sessions::new(config, bitbucket, logger.clone()),
            options,
            per_user_header,
            logger,
        });
        Ok(Server { listener, addr, endpoint, executor })
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
        let Server { listener, addr, endpoint, executor } = self;
        executor.spawn(accept(listener, Arc::clone(&endpoint), Arc::downgrade(&executor))).detach();
        executor.spawn(expire(endpoint)).detach();
        let (stop, stopped) = smol::channel::bounded::<()>(1);
        let threads = (0..threads.max(1))
            .filter_map(|i| {
                let ex = Arc::clone(&executor);
                let stopped = stopped.clone();
                std::thread::Builder::new()
                    .name(format!("bb-http-{i}"))
                    .spawn(move || {
                        smol::block_on(ex.run(async move {
                            let _ = stopped.recv().await;
                        }))
                    })
                    .ok()
            })
            .collect();
        Running { addr, stop: Some(stop), threads, executor: Some(executor) }
    }

    /// Serves until the process ends, on one thread per core.
    pub fn run(self) -> io::Result<()> {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let mut running = self.spawn(cores);
        for t in running.threads.drain(..) {
            let _ = t.join();
        }
        Err(io::Error::other("the HTTP server's threads stopped"))
    }
}

/// A server running on its threads; dropping it stops the server and ends every connection.
pub struct Running {
    addr: SocketAddr,
    stop: Option<smol::channel::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
    executor: Option<Arc<Executor<'static>>>,
}

impl Running {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

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

/// Counts an open connection for as long as it lives.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn accept(listener: TcpListener, endpoint: Arc<Endpoint>, executor: Weak<Executor<'static>>) {
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                if open.load(Ordering::Relaxed) >= endpoint.options.limits.max_connections {
                    endpoint.logger.log(Level::Warning, "turned a connection away: the connection limit is reached");
                    spawn_on(&executor, turn_away(stream));
                    continue;
                }
                open.fetch_add(1, Ordering::Relaxed);
                let slot = Slot(Arc::clone(&open));
                spawn_on(&executor, connection(stream, Arc::clone(&endpoint), slot));
            }
            // Out of file descriptors and the like: wait a moment rather than spin.
            Err(_) => {
                smol::Timer::after(Duration::from_millis(10)).await;
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

async fn connection(stream: TcpStream, endpoint: Arc<Endpoint>, slot: Slot) {
    let limits = &endpoint.options.limits;
    let mut builder = http1::Builder::new();
    builder.timer(SmolTimer).header_read_timeout(limits.header_timeout).max_header_size(limits.max_header);
    let for_service = Arc::clone(&endpoint);
    let service = service_fn(move |req| {
        let endpoint = Arc::clone(&for_service);
        async move { Ok::<_, Infallible>(respond(endpoint, req).await) }
    });
    if let Err(e) = builder.serve_connection(SmolIo(stream), service).await {
        endpoint.logger.log(Level::Debug, &format!("connection ended: {e}"));
    }
    drop(slot);
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
