//! Clients' metadata documents (`--oauth`): the Client ID Metadata Document a client names by its
//! `https` `client_id`, read so that a client id cannot make bb reach inside its own network.
//!
//! ```text
//!  client_id ─▶ ClientIdUrl::parse: https, a host name (never an address, never localhost),
//!     │         a path, no userinfo, no fragment, no `.` or `..` segment
//!     ├──▶ at most MAX_IN_FLIGHT documents read at once
//!     ▼
//!  ureq (no proxy, no redirect, one time bound for all of it) ─▶ CheckedResolver, on every connect:
//!     the name looked up once, within the bound; refused if any address is special-use
//!     ─▶ the connector dials exactly the addresses checked (no second lookup: no DNS rebinding)
//!     ─▶ TLS ─▶ 200 ─▶ at most 64 KiB
//! ```
//!
//! Where the rules come from (docs/reference/oauth.md, "Client ID Metadata Documents"): the CIMD
//! draft's client identifier URL (draft-ietf-oauth-client-id-metadata-document §3: `https`, a
//! path, no fragment, no username or password, no dot segments) and its SSRF considerations
//! (§6.5 in -01, §8.6 in -02: no special-use address, after resolution; redirects not followed;
//! a bounded size, §8.7), and the special-purpose address registries (RFC 6890, kept by IANA).
//! A refusal is decided before any packet is sent, so the time it takes tells nothing about
//! the inside (issue 55, item 11: a silent port took 5.1 s and an open one none).

use std::fmt;
use std::io::{self, Read};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use ureq::Agent;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{Connector, DefaultConnector, NextTimeout};

use self::client_id::{ClientIdUrl, check_host};
use self::special_use::special_use;

mod client_id;
mod special_use;

/// The largest document read.
const MAX_DOCUMENT: u64 = 64 * 1024;

/// The one bound on a document's read: lookup, connection, TLS, the answer's head and body.
const TIMEOUT: Duration = Duration::from_secs(3);

/// Documents read at once; more are refused until one is done.
const MAX_IN_FLIGHT: usize = 8;

/// Name lookups running at once. A lookup that outlives its fetch (the system's resolver cannot be
/// stopped) keeps its place until it ends, so slow names cannot pile up threads.
const MAX_LOOKUPS: usize = 8;

const BUSY: &str = "bb is reading too many client metadata documents at once; try again shortly";

/// How a name is looked up: the system's resolver, or a table in tests.
pub(crate) type Lookup = Arc<dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync>;

/// The system's resolver (`getaddrinfo`).
fn system_lookup() -> Lookup {
    Arc::new(|host, port| (host, port).to_socket_addrs().map(Iterator::collect))
}

/// Reads clients' metadata documents.
pub(crate) struct MetadataFetch {
    agent: Agent,
    in_flight: Arc<AtomicUsize>,
    timeout: Duration,
}

impl MetadataFetch {
    /// Over the system's resolver and ureq's TCP and TLS, with public roots.
    pub(crate) fn new() -> MetadataFetch {
        MetadataFetch::with_parts(system_lookup(), DefaultConnector::new(), TIMEOUT)
    }

    /// Over `lookup` and `connector`, every read within `timeout`.
    fn with_parts(lookup: Lookup, connector: impl Connector, timeout: Duration) -> MetadataFetch {
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .https_only(true)
            // Through a proxy the proxy would look the name up, unchecked.
            .proxy(None)
            .user_agent(format!("bb/{}", env!("CARGO_PKG_VERSION")))
            .timeout_global(Some(timeout))
            .build();
        let resolver = CheckedResolver { lookup, lookups: Arc::new(AtomicUsize::new(0)) };
        MetadataFetch { agent: Agent::with_parts(config, connector, resolver), in_flight: Arc::default(), timeout }
    }

    /// The document at `url`, or a sentence saying why not (naming no secret).
    pub(crate) fn fetch(&self, url: &str) -> Result<Vec<u8>, String> {
        ClientIdUrl::parse(url)?;
        let _slot = Slot::take(&self.in_flight, MAX_IN_FLIGHT).ok_or(BUSY)?;
        let mut answer = self.agent.get(url).header("Accept", "application/json").call().map_err(|e| self.said(&e))?;
        let status = answer.status().as_u16();
        if status != 200 {
            return Err(format!("it answered {status}"));
        }
        let too_large = || format!("the document is larger than {} KiB", MAX_DOCUMENT / 1024);
        if answer.body().content_length().is_some_and(|n| n > MAX_DOCUMENT) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        let reader = answer.body_mut().as_reader();
        reader.take(MAX_DOCUMENT + 1).read_to_end(&mut body).map_err(|e| self.said_io(&e))?;
        if body.len() as u64 > MAX_DOCUMENT {
            return Err(too_large());
        }
        Ok(body)
    }

    fn late(&self) -> String {
        format!("it did not answer within {} s", self.timeout.as_secs_f32())
    }

    /// What went wrong, as a sentence.
    fn said(&self, e: &ureq::Error) -> String {
        match e {
            ureq::Error::Timeout(_) => self.late(),
            ureq::Error::HostNotFound => "its host name was not found".into(),
            ureq::Error::Io(e) => self.said_io(e),
            ureq::Error::Tls(why) => format!("its TLS handshake failed ({why})"),
            ureq::Error::Rustls(why) => format!("its TLS handshake failed ({why})"),
            ureq::Error::Protocol(_) => "its answer was not HTTP/1.1".into(),
            other => format!("it could not be read ({other})"),
        }
    }

    fn said_io(&self, e: &io::Error) -> String {
        if let Some(inner) = e.get_ref() {
            if let Some(Refusal(why)) = inner.downcast_ref::<Refusal>() {
                return why.clone();
            }
            if let Some(e) = inner.downcast_ref::<ureq::Error>() {
                return self.said(e);
            }
        }
        match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => self.late(),
            io::ErrorKind::ConnectionRefused => "it refused the connection".into(),
            kind => format!("it could not be reached ({kind})"),
        }
    }
}

/// A refusal decided before connecting, carried through ureq as its sentence.
#[derive(Debug)]
struct Refusal(String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// ureq's resolver for documents: only addresses that passed [`special_use`], looked up once.
struct CheckedResolver {
    lookup: Lookup,
    lookups: Arc<AtomicUsize>,
}

impl fmt::Debug for CheckedResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedResolver").finish_non_exhaustive()
    }
}

impl CheckedResolver {
    /// The addresses bb may connect to for `host` (as a URI writes it) and `port`, looked up
    /// within `within`; refused when the host is an address or localhost, or any address found
    /// is special-use.
    fn addresses(&self, host: &str, port: u16, within: Duration) -> Result<Vec<SocketAddr>, String> {
        let name = check_host(host)?;
        let slot = Slot::take(&self.lookups, MAX_LOOKUPS).ok_or(BUSY)?;
        let (tx, rx) = mpsc::sync_channel(1);
        let (lookup, asked) = (self.lookup.clone(), name.clone());
        std::thread::Builder::new()
            .name("bb-cimd-lookup".into())
            .spawn(move || {
                let _slot = slot;
                let _ = tx.send(lookup(&asked, port));
            })
            .map_err(|_| BUSY.to_owned())?;
        let found = match rx.recv_timeout(within) {
            Ok(Ok(found)) => found,
            Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => Vec::new(),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!("its host name was not found within {} s", within.as_secs_f32()));
            }
        };
        if found.is_empty() {
            return Err("its host name was not found".into());
        }
        if let Some((ip, why)) = found.iter().find_map(|a| special_use(a.ip()).map(|why| (a.ip(), why))) {
            return Err(format!("the address {ip} (of {name}) is {why}"));
        }
        Ok(found.iter().map(|a| SocketAddr::new(a.ip(), port)).collect())
    }
}

impl Resolver for CheckedResolver {
    fn resolve(&self, uri: &Uri, _: &Config, timeout: NextTimeout) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let refuse = |why: String| ureq::Error::Io(io::Error::other(Refusal(why)));
        if uri.scheme_str() != Some("https") {
            return Err(refuse("a client id must be an https:// URL".into()));
        }
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(443);
        let found = self.addresses(host, port, (*timeout.after).min(TIMEOUT)).map_err(refuse)?;
        let mut addrs = self.empty();
        for a in found {
            if addrs.try_push(a).is_err() {
                break;
            }
        }
        Ok(addrs)
    }
}

/// A place among at most `max`, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < max).then_some(n + 1)).ok()?;
        Some(Slot(count.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests;
