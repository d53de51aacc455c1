//! The `--metrics ADDR` listener: `GET /metrics` answers the process's metrics in Prometheus' text
//! format, apart from `/mcp` (its own address, loopback unless told otherwise, no token: it holds no
//! person, project or pull request).

use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;

use bb_drive::metrics::{self, Metrics};
use bb_hyper_smol::SmolIo;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Response, StatusCode};
use smol::net::TcpListener;

use crate::reply::{Reply, empty, json};

/// The `--metrics` listener, serving on its own thread until the process ends.
pub struct MetricsServer {
    addr: SocketAddr,
}

impl MetricsServer {
    /// Binds `addr` and serves `GET /metrics` there; `before` runs before each scrape (to read the
    /// gauges that are counted elsewhere, such as open sessions).
    pub fn serve(addr: SocketAddr, before: Arc<dyn Fn() + Send + Sync>) -> io::Result<MetricsServer> {
        let std_listener = StdListener::bind(addr)?;
        let addr = std_listener.local_addr()?;
        let listener = TcpListener::try_from(std_listener)?;
        std::thread::Builder::new().name("bb-metrics".into()).spawn(move || {
            let ex = smol::LocalExecutor::new();
            smol::block_on(ex.run(async {
                while let Ok((stream, _)) = listener.accept().await {
                    let before = Arc::clone(&before);
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let before = Arc::clone(&before);
                        async move { Ok::<_, std::convert::Infallible>(scrape(&req, &*before)) }
                    });
                    ex.spawn(async move {
                        let _ = http1::Builder::new().serve_connection(SmolIo(stream), service).await;
                    })
                    .detach();
                }
            }));
        })?;
        Ok(MetricsServer { addr })
    }

    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

fn scrape(req: &hyper::Request<hyper::body::Incoming>, before: &dyn Fn()) -> Response<Reply> {
    if req.method() != Method::GET || req.uri().path() != "/metrics" {
        return empty(StatusCode::NOT_FOUND);
    }
    before();
    let mut r = json(Metrics::global().encode().into_bytes());
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(metrics::CONTENT_TYPE));
    r
}
