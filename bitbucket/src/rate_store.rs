//! Where replicas keep one rate budget per Bitbucket user (`--rate-store`): each identity's bucket in
//! Valkey or Redis, changed by one Lua script (`rate_store.lua`, run with EVALSHA, loaded when the
//! server lacks it) so every take is one atomic step on the server, whichever replica asks.
//!
//! | step | what the script does | [`super::rate::Bucket`]'s twin |
//! |---|---|---|
//! | `take` | a token for one of the model's requests, or the ms until one | `try_take` |
//! | `batch` | a refresh's batch whole from the upper half, or the ms until it fits | `take_batch` |
//! | `give` | a token back (a request cancelled before it left) | `give_back` |
//! | `pause` | a 429: the bucket spent, the identity paused for the `Retry-After` on every replica | `limited` |
//!
//! The key is `bb:rate:` and 32 hex digits of SHA-256 over the Bitbucket URL and the `Authorization`
//! header bb sends ([`identity_key`]): replicas with the same credentials meet at the same key, and the
//! store never sees a token. Each key expires once its bucket would be full and unpaused again. Time is
//! the store's clock (`TIME`), so replicas whose clocks differ still agree.
//!
//! The store failing never fails a call. Connecting and each answer are bounded by [`STORE_TIMEOUT`];
//! when the store does not answer (down, slow, refusing the password), [`Store::run`] says so and the
//! caller decides from its own bucket at 1/N of the rate (`--replicas N`), the log says it once, the
//! metrics count it, and the store is asked again after [`PROBE_EVERY`]; its first answer ends the
//! fallback (said once too). A store that comes back may have lost its keys (a restart without
//! persistence): for the time a bucket takes to fill after that, a bucket it does not hold starts
//! empty rather than full, since Bitbucket's own bucket was being spent meanwhile.

use std::path::Path;
use std::time::{Duration, Instant};

use bb_core::Level;
use bb_drive::Logger;
use redis::ConnectionAddr;

use crate::options::{RateLimit, RateStore, redact_userinfo};

/// How long connecting to the store, and each of its answers, may take before bb decides alone.
pub const STORE_TIMEOUT: Duration = Duration::from_millis(200);

/// After the store did not answer, how long bb decides alone before asking it again.
pub const PROBE_EVERY: Duration = Duration::from_secs(2);

const SCRIPT: &str = include_str!("rate_store.lua");

/// One step of the script on an identity's bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// A token for one of the model's requests.
    Take,
    /// A refresh's batch of this many reads.
    Batch(u32),
    /// A token given back.
    Give,
    /// A 429 asked for this pause.
    Pause(Duration),
}

/// What a bucket the store does not hold counts as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Absent {
    /// Full: nobody spent it lately (it expired full, or the store is new).
    Full,
    /// Empty: the store came back from an outage and may have lost what was spent.
    Empty,
}

/// The key of an identity's bucket: no token in it, the same on every replica.
pub fn identity_key(base_url: &str, authorization: &str) -> String {
    let mut input = Vec::with_capacity(base_url.len() + authorization.len() + 16);
    input.extend_from_slice(b"bb rate identity\0");
    input.extend_from_slice(base_url.as_bytes());
    input.push(0);
    input.extend_from_slice(authorization.as_bytes());
    let digest = ring::digest::digest(&ring::digest::SHA256, &input);
    let hex: String = digest.as_ref()[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("bb:rate:{hex}")
}

/// The store's client for `store` (no connection made; the URL checked by
/// [`RateStore::connection_info`]). `ca_file` (`BB_CA_FILE`) is what a `rediss://` store's
/// certificate must chain to, when set; else the system's roots.
pub fn store_client(store: &RateStore, ca_file: Option<&Path>) -> Result<redis::Client, String> {
    let info = store.connection_info()?;
    let shown = redact_userinfo(store.url.expose());
    let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    let client = match ca_file.filter(|_| tls) {
        Some(file) => {
            let pem =
                std::fs::read(file).map_err(|e| format!("BB_CA_FILE `{}` cannot be read: {e}", file.display()))?;
            redis::Client::build_with_tls(info, redis::TlsCertificates { client_tls: None, root_cert: Some(pem) })
        }
        None => redis::Client::open(info),
    };
    client.map_err(|e| store.scrub(format!("--rate-store `{shown}` cannot be used ({e})")))
}

/// The shared store as one process sees it: a connection made when first needed and again after a
/// failure, and whether bb decides alone for now.
pub struct Store {
    client: redis::Client,
    script: redis::Script,
    connection: Option<redis::Connection>,
    /// Not answering: bb decides alone until then, then asks the store again.
    alone_until: Option<Instant>,
    /// When the store answered again after not answering.
    back_at: Option<Instant>,
    /// The URL without its password, for the log.
    shown: String,
    log: Option<Logger>,
    /// Where the store's coming and going and its decisions are counted (the application's, once
    /// [`Store::count_in`] is called; until then a set of its own that nobody serves).
    metrics: std::sync::Arc<bb_drive::metrics::Metrics>,
    /// How long connecting and each answer may take: [`STORE_TIMEOUT`] (tests of the script's arithmetic
    /// allow a loaded machine more).
    timeout: Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("at", &self.shown).field("alone_until", &self.alone_until).finish()
    }
}

impl Store {
    /// The store `store` names (see [`store_client`]).
    pub fn new(store: &RateStore, ca_file: Option<&Path>) -> Result<Store, String> {
        Ok(Store {
            client: store_client(store, ca_file)?,
            script: redis::Script::new(SCRIPT),
            connection: None,
            alone_until: None,
            back_at: None,
            shown: redact_userinfo(store.url.expose()),
            log: None,
            metrics: std::sync::Arc::new(bb_drive::metrics::Metrics::new()),
            timeout: STORE_TIMEOUT,
        })
    }

    /// The same store, waiting up to `timeout` for each answer (tests on a loaded machine, where 200 ms
    /// is not a store that stopped answering).
    #[cfg(test)]
    pub(crate) fn patient(mut self, timeout: Duration) -> Store {
        self.timeout = timeout;
        self
    }

    /// Where the store's coming and going is said.
    pub fn set_log(&mut self, log: Logger) {
        self.log = Some(log);
    }

    /// Where the store's coming and going and its decisions are counted.
    pub fn count_in(&mut self, metrics: std::sync::Arc<bb_drive::metrics::Metrics>) {
        self.metrics = metrics;
    }

    /// What the store counts in.
    pub(crate) fn metrics(&self) -> &bb_drive::metrics::Metrics {
        &self.metrics
    }

    /// Whether the store answered last time (or has not been asked yet).
    pub fn answering(&self) -> bool {
        self.alone_until.is_none()
    }

    /// When a store that did not answer is asked again, if it did not.
    #[cfg(test)]
    pub(crate) fn asked_again_at(&self) -> Option<Instant> {
        self.alone_until
    }

    /// Runs `step` on `key`'s bucket of `limit`: `Some` with what the store decided (`Err`: the wait
    /// until there is room), or `None` when the store does not answer and bb must decide alone.
    pub fn run(&mut self, key: &str, limit: RateLimit, step: Step) -> Option<Result<(), Duration>> {
        let now = Instant::now();
        if self.alone_until.is_some_and(|t| now < t) {
            return None;
        }
        let fill = Duration::try_from_secs_f64((limit.capacity / limit.refill_per_s).clamp(0.0, 86_400.0))
            .unwrap_or(Duration::ZERO);
        let back_lately = self.back_at.is_some_and(|t| now.saturating_duration_since(t) < fill);
        let absent = if self.alone_until.is_some() || back_lately { Absent::Empty } else { Absent::Full };
        match self.eval(key, limit, step, None, absent) {
            Ok(wait) => {
                if self.alone_until.take().is_some() {
                    self.back_at = Some(now);
                    self.metrics.rate_store_answering(true);
                    self.say(
                        Level::Notice,
                        &format!(
                            "the rate store {} answers again: replicas share each Bitbucket user's budget through it",
                            self.shown
                        ),
                    );
                }
                Some(if wait == 0 { Ok(()) } else { Err(Duration::from_millis(wait.unsigned_abs())) })
            }
            Err(e) => {
                self.connection = None;
                if self.alone_until.is_none() {
                    self.metrics.rate_store_outage();
                    self.metrics.rate_store_answering(false);
                    self.say(
                        Level::Warning,
                        &format!(
                            "the rate store {} does not answer ({}): each replica keeps its own share of the rate budget (--replicas) until it does; asked again every {} s",
                            self.shown,
                            e.kind_words(),
                            PROBE_EVERY.as_secs()
                        ),
                    );
                }
                self.alone_until = Some(now + PROBE_EVERY);
                None
            }
        }
    }

    fn say(&self, level: Level, message: &str) {
        if let Some(log) = &self.log {
            log.log(level, message);
        }
    }

    /// One run of the script at `now_ms` (`None`: the store's clock), a bucket the store does not
    /// hold counted as `absent`; the wait in ms, 0 for go.
    pub(crate) fn eval(
        &mut self,
        key: &str,
        limit: RateLimit,
        step: Step,
        now_ms: Option<u64>,
        absent: Absent,
    ) -> Result<i64, StoreError> {
        if self.connection.is_none() {
            let c = self.client.get_connection_with_timeout(self.timeout).map_err(StoreError)?;
            c.set_read_timeout(Some(self.timeout)).map_err(StoreError)?;
            c.set_write_timeout(Some(self.timeout)).map_err(StoreError)?;
            self.connection = Some(c);
        }
        let Some(connection) = self.connection.as_mut() else { return Err(StoreError::lost()) };
        let (name, n) = match step {
            Step::Take => ("take", 1),
            Step::Batch(reads) => ("batch", u64::from(reads.max(1))),
            Step::Give => ("give", 1),
            Step::Pause(d) => ("pause", u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        };
        let now = now_ms.map_or(String::new(), |t| t.to_string());
        self.script
            .key(key)
            .arg(name)
            .arg(limit.capacity)
            .arg(limit.refill_per_s)
            .arg(n)
            .arg(now)
            .arg(match absent {
                Absent::Full => "",
                Absent::Empty => "0",
            })
            .invoke::<i64>(connection)
            .map_err(StoreError)
    }
}

/// Why the store did not answer; its words name no password.
#[derive(Debug)]
pub struct StoreError(redis::RedisError);

impl StoreError {
    fn lost() -> StoreError {
        StoreError(redis::RedisError::from(std::io::Error::other("no connection")))
    }

    /// What happened, in a few words, without the server's detail (which could echo what it was sent).
    pub fn kind_words(&self) -> &'static str {
        let e = &self.0;
        if e.is_timeout() {
            "timed out"
        } else if e.is_connection_refusal() {
            "connection refused"
        } else if matches!(e.kind(), redis::ErrorKind::AuthenticationFailed)
            || e.code().is_some_and(|c| c == "NOAUTH" || c == "WRONGPASS")
        {
            "the password was refused"
        } else if e.is_io_error() || e.is_connection_dropped() {
            "connection lost"
        } else {
            "an error answered"
        }
    }
}

#[cfg(test)]
#[path = "rate_store_tests.rs"]
mod tests;
