//! `--oauth`: what the application gives bb-http's login (`bb_http::OAuthOptions`): the incoming
//! link's credentials from the environment, Bitbucket's token endpoint over ureq, clients' metadata
//! documents (read by `metadata_fetch`, which keeps a client id from reaching inside), and where
//! logins live: in the process, or with `--rate-store` in Valkey or Redis, encrypted at rest.
//!
//! | variable | what |
//! |---|---|
//! | `BB_OAUTH_CLIENT_ID` | the incoming application link's client id |
//! | `BB_OAUTH_CLIENT_SECRET` | its client secret; never logged, shown or sent anywhere but Bitbucket's token endpoint |
//! | `BB_OAUTH_STORE_KEY` | 64 hex digits (32 bytes): the key logins are encrypted with in the shared store (and remembered consents sealed with); the same on every replica |
//! | `BB_OAUTH_ACCESS_TTL` | how long bb's access tokens live, 10 s to 24 h (default 1 h); clients refresh them with their refresh token |
//!
//! Bitbucket's token endpoint (docs/reference/oauth.md "Bitbucket Data Center's OAuth 2.0 provider"):
//! `POST {BITBUCKET_URL}/rest/oauth2/latest/token`, a form with `grant_type`, `code`, `redirect_uri`,
//! `code_verifier` or `refresh_token`, and the client's id and secret; it answers RFC 6749 §5.1's JSON.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_http::{Kind, MemoryStore, OAuthOptions, Provider, ProviderError, Store, StoreError, Tokens};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use ureq::Agent;

use crate::config::{BitbucketConfig, Secret};
use crate::metadata_fetch::MetadataFetch;

/// The largest answer read from Bitbucket's token endpoint.
const MAX_ANSWER: u64 = 64 * 1024;

/// The login's options for the Bitbucket `config` names, the public URL, the scopes and `env`.
pub fn options(
    config: &BitbucketConfig,
    public_url: &str,
    scope: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthOptions, String> {
    let public_url = OAuthOptions::check_public_url(public_url)?;
    let var = |name: &str| env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let what = "create an incoming application link for bb in Bitbucket (Administration › Application links) and set";
    let client_id = var("BB_OAUTH_CLIENT_ID")
        .ok_or_else(|| format!("--oauth needs BB_OAUTH_CLIENT_ID: {what} it to the link's client ID"))?;
    let secret = var("BB_OAUTH_CLIENT_SECRET")
        .map(Secret::new)
        .ok_or_else(|| format!("--oauth needs BB_OAUTH_CLIENT_SECRET: {what} it to the link's client secret"))?;
    // How long bb's access tokens live: an hour, or what the operator says (from 10 s to a day).
    let access_ttl_ms = match var("BB_OAUTH_ACCESS_TTL") {
        None => bb_http::ACCESS_TTL_MS,
        Some(text) => crate::config::parse_duration(&text)
            .filter(|d| (Duration::from_secs(10)..=Duration::from_secs(86_400)).contains(d))
            .map(|d| d.as_millis() as u64)
            .ok_or_else(|| format!("BB_OAUTH_ACCESS_TTL `{text}` must be a duration from 10s to 24h, such as 15m"))?,
    };
    let (store, consent_key): (Arc<dyn Store>, [u8; 32]) = match &config.rate_store {
        // Alone, bb keeps logins in the process and seals what it leaves in browsers with a key of
        // its own (a restart forgets both).
        None => {
            let mut key = [0u8; 32];
            SystemRandom::new().fill(&mut key).map_err(|_| "no secure random source for --oauth".to_owned())?;
            (Arc::new(MemoryStore::new()), key)
        }
        Some(rate_store) => {
            let key = var("BB_OAUTH_STORE_KEY").ok_or(
                "--oauth with --rate-store keeps logins in the shared store, encrypted: set BB_OAUTH_STORE_KEY to 64 hex \
                 digits (such as the output of `openssl rand -hex 32`), the same on every replica",
            )?;
            let client = bb_bitbucket::store_client(rate_store, config.ca_file.as_deref())?;
            let store = SharedStore::new(client, &key)?;
            // Replicas honour each other's remembered consents: the browsers' key comes from the store's.
            let consent_key = derive(&store.raw, b"bb consent cookies");
            (Arc::new(store), consent_key)
        }
    };
    let provider = BitbucketProvider {
        agent: agent(config),
        metadata: MetadataFetch::new(),
        token_url: format!("{}/rest/oauth2/latest/token", config.base_url),
        client_id: client_id.clone(),
        secret,
    };
    Ok(OAuthOptions {
        public_url,
        bitbucket_url: config.base_url.clone(),
        client_id,
        scope: scope.to_owned(),
        provider: Arc::new(provider),
        store,
        consent_key,
        access_ttl_ms,
    })
}

/// An agent for Bitbucket: its CA bundle and timeout, no redirects, statuses as answers.
fn agent(config: &BitbucketConfig) -> Agent {
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(format!("bb/{}", env!("CARGO_PKG_VERSION")))
        .timeout_global(Some(config.timeout))
        .tls_config(bb_bitbucket::tls_config(config))
        .build()
        .into()
}

/// Bitbucket's token endpoint, with the incoming link's credentials.
struct BitbucketProvider {
    agent: Agent,
    metadata: MetadataFetch,
    token_url: String,
    client_id: String,
    secret: Secret,
}

impl BitbucketProvider {
    fn post(&self, form: &[(&str, &str)]) -> Result<Tokens, ProviderError> {
        let mut all: Vec<(&str, &str)> = form.to_vec();
        all.push(("client_id", &self.client_id));
        all.push(("client_secret", self.secret.expose()));
        let scrub = |s: String| {
            let mut s = s.replace(self.secret.expose(), "<redacted>");
            for (_, v) in form {
                if v.len() >= 8 {
                    s = s.replace(v, "<redacted>");
                }
            }
            s
        };
        let mut answer = self
            .agent
            .post(&self.token_url)
            .header("Accept", "application/json")
            .send_form(all)
            .map_err(|e| ProviderError::Unavailable(scrub(format!("Bitbucket's token endpoint failed: {e}"))))?;
        let status = answer.status().as_u16();
        let mut body = Vec::new();
        let _ = answer.body_mut().as_reader().take(MAX_ANSWER).read_to_end(&mut body);
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
        if !(200..300).contains(&status) {
            let error =
                json.get("error").and_then(|e| e.as_str()).unwrap_or("no error code").chars().take(60).collect();
            let error: String = error;
            return Err(if (400..500).contains(&status) {
                ProviderError::Refused(format!("{status} {error}"))
            } else {
                ProviderError::Unavailable(format!("Bitbucket's token endpoint answered {status}"))
            });
        }
        let access = json.get("access_token").and_then(|v| v.as_str()).filter(|t| !t.is_empty());
        let Some(access) = access else {
            return Err(ProviderError::Unavailable("Bitbucket's token endpoint gave no access_token".into()));
        };
        Ok(Tokens {
            access: access.to_owned(),
            refresh: json.get("refresh_token").and_then(|v| v.as_str()).map(str::to_owned),
            expires_in_s: json.get("expires_in").and_then(serde_json::Value::as_u64).unwrap_or(3600).clamp(60, 86_400),
        })
    }
}

impl Provider for BitbucketProvider {
    fn exchange(&self, code: &str, verifier: &str, redirect_uri: &str) -> Result<Tokens, ProviderError> {
        self.post(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ])
    }

    fn refresh(&self, refresh_token: &str) -> Result<Tokens, ProviderError> {
        self.post(&[("grant_type", "refresh_token"), ("refresh_token", refresh_token)])
    }

    fn client_metadata(&self, url: &str) -> Result<Vec<u8>, String> {
        self.metadata.fetch(url)
    }
}

/// Logins in Valkey or Redis, each value sealed with ChaCha20-Poly1305 under the operator's key,
/// its key name as associated data (a value moved to another key does not open), under
/// `bb:oauth:<kind>:<key>` with the record's time to live.
struct SharedStore {
    /// The operator's key, kept to derive other keys from it.
    raw: [u8; 32],
    client: redis::Client,
    connection: Mutex<Option<redis::Connection>>,
    key: LessSafeKey,
    random: SystemRandom,
}

/// How long a call to the shared store may take.
const STORE_TIMEOUT: Duration = Duration::from_millis(500);

impl SharedStore {
    fn new(client: redis::Client, hex_key: &str) -> Result<SharedStore, String> {
        let bytes = decode_hex(hex_key).filter(|b| b.len() == 32).ok_or(
            "BB_OAUTH_STORE_KEY must be 64 hex digits (32 bytes), such as the output of `openssl rand -hex 32`",
        )?;
        let key =
            UnboundKey::new(&CHACHA20_POLY1305, &bytes).map_err(|_| "BB_OAUTH_STORE_KEY cannot be used".to_owned())?;
        let mut raw = [0u8; 32];
        raw.copy_from_slice(&bytes);
        Ok(SharedStore {
            raw,
            client,
            connection: Mutex::new(None),
            key: LessSafeKey::new(key),
            random: SystemRandom::new(),
        })
    }

    fn name(kind: Kind, key: &str) -> String {
        format!("bb:oauth:{}:{key}", kind.name())
    }

    fn seal(&self, name: &str, value: &[u8]) -> Result<Vec<u8>, String> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).map_err(|_| "no secure random source".to_owned())?;
        let mut sealed = value.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(name.as_bytes()), &mut sealed)
            .map_err(|_| "a login could not be encrypted".to_owned())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// The value `sealed` holds, or `None` when it does not open (another key, another name, damage).
    fn open(&self, name: &str, sealed: &[u8]) -> Option<Vec<u8>> {
        let (nonce, rest) = sealed.split_at_checked(NONCE_LEN)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buf = rest.to_vec();
        let opened = self.key.open_in_place(nonce, Aad::from(name.as_bytes()), &mut buf).ok()?;
        Some(opened.to_vec())
    }

    /// Runs `f` on the connection, made when first needed and again after a failure.
    fn with<T>(&self, f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>) -> Result<T, String> {
        let mut held = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        if held.is_none() {
            let c = self
                .client
                .get_connection_with_timeout(STORE_TIMEOUT)
                .map_err(|e| format!("no connection: {}", e.kind_name()))?;
            let _ = c.set_read_timeout(Some(STORE_TIMEOUT));
            let _ = c.set_write_timeout(Some(STORE_TIMEOUT));
            *held = Some(c);
        }
        let Some(c) = held.as_mut() else { return Err("no connection".into()) };
        f(c).map_err(|e| {
            *held = None;
            format!("the store failed: {}", e.kind_name())
        })
    }
}

trait KindName {
    fn kind_name(&self) -> String;
}

impl KindName for redis::RedisError {
    /// What failed, without the text a server or URL may have put in it.
    fn kind_name(&self) -> String {
        format!("{:?}", self.kind())
    }
}

impl Store for SharedStore {
    fn put(&self, kind: Kind, key: &str, value: &[u8], ttl_ms: u64, _now_ms: u64) -> Result<(), StoreError> {
        let name = SharedStore::name(kind, key);
        let sealed = self.seal(&name, value)?;
        Ok(self.with(|c| redis::cmd("SET").arg(&name).arg(sealed).arg("PX").arg(ttl_ms.max(1)).query::<()>(c))?)
    }

    fn get(&self, kind: Kind, key: &str, _now_ms: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let name = SharedStore::name(kind, key);
        let got: Option<Vec<u8>> = self.with(|c| redis::cmd("GET").arg(&name).query(c))?;
        Ok(got.and_then(|s| self.open(&name, &s)))
    }

    fn take(&self, kind: Kind, key: &str, _now_ms: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let name = SharedStore::name(kind, key);
        // GETDEL (Redis 6.2, Valkey): of two replicas taking one code, one gets it.
        let got: Option<Vec<u8>> = self.with(|c| redis::cmd("GETDEL").arg(&name).query(c))?;
        Ok(got.and_then(|s| self.open(&name, &s)))
    }

    fn delete(&self, kind: Kind, key: &str) -> Result<(), StoreError> {
        let name = SharedStore::name(kind, key);
        Ok(self.with(|c| redis::cmd("DEL").arg(&name).query::<()>(c))?)
    }
}

/// A key for `purpose` from the operator's key (HMAC-SHA-256 of the purpose under it).
fn derive(key: &[u8; 32], purpose: &[u8]) -> [u8; 32] {
    let tag = ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key), purpose);
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn store() -> SharedStore {
        let client = redis::Client::open("redis://127.0.0.1:9/").unwrap();
        SharedStore::new(client, &"ab".repeat(32)).unwrap()
    }

    #[test]
    fn a_sealed_login_opens_only_under_its_own_name_and_key() {
        let s = store();
        let sealed = s.seal("bb:oauth:grant:a", b"{\"access\":\"bbat-secret\"}").unwrap();
        assert!(!sealed.windows(11).any(|w| w == b"bbat-secret"), "encrypted at rest");
        assert_eq!(s.open("bb:oauth:grant:a", &sealed).as_deref(), Some(&b"{\"access\":\"bbat-secret\"}"[..]));
        assert_eq!(s.open("bb:oauth:grant:b", &sealed), None, "moved to another key, it does not open");
        let other = SharedStore::new(redis::Client::open("redis://127.0.0.1:9/").unwrap(), &"cd".repeat(32)).unwrap();
        assert_eq!(other.open("bb:oauth:grant:a", &sealed), None, "another key does not open it");
        assert_eq!(s.open("bb:oauth:grant:a", &sealed[..5]), None);
    }

    #[test]
    fn the_store_key_must_be_32_bytes_of_hex() {
        let client = || redis::Client::open("redis://127.0.0.1:9/").unwrap();
        assert!(SharedStore::new(client(), "abc").is_err());
        assert!(SharedStore::new(client(), &"zz".repeat(32)).is_err());
        assert!(SharedStore::new(client(), &"00".repeat(31)).is_err());
    }

    #[test]
    fn the_client_secret_is_required_and_never_shown() {
        let config = BitbucketConfig::new("http://127.0.0.1:9", crate::config::Auth::Anonymous).unwrap();
        let env = |name: &str| match name {
            "BB_OAUTH_CLIENT_ID" => Some("id".to_owned()),
            _ => None,
        };
        let e = options(&config, "http://127.0.0.1:1", "REPO_READ", &env).err().unwrap();
        assert!(e.contains("BB_OAUTH_CLIENT_SECRET"), "{e}");
        let env = |name: &str| match name {
            "BB_OAUTH_CLIENT_ID" => Some("id".to_owned()),
            "BB_OAUTH_CLIENT_SECRET" => Some("s3cr3t-value".to_owned()),
            _ => None,
        };
        let o = options(&config, "http://127.0.0.1:1/", "REPO_READ", &env).unwrap();
        assert_eq!(o.public_url, "http://127.0.0.1:1");
        assert!(!format!("{o:?}").contains("s3cr3t-value"));
    }
}
