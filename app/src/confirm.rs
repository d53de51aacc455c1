//! What the application gives bb-core's confirmations (issue 51; `bb_core::confirm`): the [`Seal`]
//! that seals a 2026-07-28 retry's `requestState`, its key, and the ledger of used states replicas
//! share.
//!
//! | where the key comes from | when |
//! |---|---|
//! | `BB_CONFIRM_KEY` | 64 hex digits (32 bytes), the same on every replica |
//! | the rate store, `bb:confirm:key` | with `--rate-store` and no `BB_CONFIRM_KEY`: the first replica's random key (`SET … NX`), read by the others |
//! | a random key of the process | otherwise: a restart forgets it, and a state sealed before is refused |
//!
//! A token is URL-safe base64 (no padding) of nonce ‖ ciphertext ‖ tag, ChaCha20-Poly1305 with a
//! random 96-bit nonce per seal: no two seals give the same token, and the nonce (hex) is the state's
//! unique id. With `--rate-store`, a state once honoured is remembered there
//! (`SET bb:confirm:used:<id> 1 NX PX <until its expiry>`): a retry sent to another replica cannot
//! replay it. A store that does not answer honours nothing (`Spent::Unknown`).

use std::sync::Mutex;
use std::time::Duration;

use bb_core::{Seal, Spent};
use bb_drive::Ledger;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// How long a call to the store may take (connecting, and each answer).
const STORE_TIMEOUT: Duration = Duration::from_millis(500);

/// How long bb waits for the store's key at start.
const KEY_TIMEOUT: Duration = Duration::from_secs(5);

/// The store's name of the key replicas share.
const KEY_NAME: &str = "bb:confirm:key";

/// Seals with ChaCha20-Poly1305 under a 32-byte key; digests with HMAC-SHA-256 under a key derived
/// from the same secret.
pub struct RingSeal {
    key: LessSafeKey,
    digest: hmac::Key,
    random: SystemRandom,
}

impl std::fmt::Debug for RingSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RingSeal(<key hidden>)")
    }
}

/// The associated data every token is sealed with: a token of another purpose does not open.
const AAD: &[u8] = b"bb confirm state v1";

impl RingSeal {
    /// A seal under `secret`.
    pub fn new(secret: &[u8; 32]) -> RingSeal {
        let aead = derive(secret, b"bb confirm seal");
        let mac = derive(secret, b"bb confirm digest");
        // A 32-byte key is always a ChaCha20-Poly1305 key.
        let key = match UnboundKey::new(&CHACHA20_POLY1305, &aead) {
            Ok(k) => LessSafeKey::new(k),
            Err(_) => unreachable_key(),
        };
        RingSeal { key, digest: hmac::Key::new(hmac::HMAC_SHA256, &mac), random: SystemRandom::new() }
    }
}

#[allow(clippy::panic)]
fn unreachable_key() -> LessSafeKey {
    panic!("ChaCha20-Poly1305 refused a 32-byte key")
}

impl Seal for RingSeal {
    fn seal(&self, payload: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        if self.random.fill(&mut nonce).is_err() {
            // No secure random source: a token that opens nowhere (the retry is refused) rather
            // than a nonce used twice.
            return String::new();
        }
        let mut sealed = payload.to_vec();
        if self.key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(AAD), &mut sealed).is_err()
        {
            return String::new();
        }
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        base64url(&out)
    }

    fn open(&self, token: &str) -> Option<(Vec<u8>, String)> {
        let bytes = unbase64url(token)?;
        let (nonce, rest) = bytes.split_at_checked(NONCE_LEN)?;
        let id = hex(nonce);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buf = rest.to_vec();
        let opened = self.key.open_in_place(nonce, Aad::from(AAD), &mut buf).ok()?;
        Some((opened.to_vec(), id))
    }

    fn digest(&self, bytes: &[u8]) -> String {
        hex(hmac::sign(&self.digest, bytes).as_ref())
    }
}

/// The key the seal uses: `BB_CONFIRM_KEY`, else the store's (`--rate-store`), else a random one.
/// An unreadable `BB_CONFIRM_KEY` stops bb; a store that does not answer at start leaves the process
/// its own key, said in the returned warning.
pub fn key(
    store: Option<&redis::Client>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<([u8; 32], Option<String>), String> {
    if let Some(text) = env("BB_CONFIRM_KEY").map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        return Ok((parse_key(&text)?, None));
    }
    let mut random = [0u8; 32];
    SystemRandom::new().fill(&mut random).map_err(|_| "no secure random source for confirmations".to_owned())?;
    let Some(client) = store else { return Ok((random, None)) };
    match store_key(client, &hex(&random)) {
        Ok(text) => Ok((
            parse_key(&text).map_err(|_| format!("the rate store's {KEY_NAME} is not 64 hex digits: delete it"))?,
            None,
        )),
        Err(why) => Ok((
            random,
            Some(format!(
                "the rate store did not give the confirmation key ({why}): this replica seals with a key of its own, \
                 and a 2026-07-28 retry sent to another replica is refused; set BB_CONFIRM_KEY to share one"
            )),
        )),
    }
}

/// 64 hex digits as 32 bytes, with `BB_OAUTH_STORE_KEY`'s wording.
fn parse_key(text: &str) -> Result<[u8; 32], String> {
    let bytes = decode_hex(text)
        .filter(|b| b.len() == 32)
        .ok_or("BB_CONFIRM_KEY must be 64 hex digits (32 bytes), such as the output of `openssl rand -hex 32`")?;
    let mut key = [0u8; 32];
    key.copy_from_slice(&bytes);
    Ok(key)
}

/// `SET bb:confirm:key <mine> NX`, then GET: every replica reads the first one's.
fn store_key(client: &redis::Client, mine: &str) -> Result<String, String> {
    let mut c = client.get_connection_with_timeout(KEY_TIMEOUT).map_err(|e| format!("{:?}", e.kind()))?;
    let _ = c.set_read_timeout(Some(KEY_TIMEOUT));
    let _ = c.set_write_timeout(Some(KEY_TIMEOUT));
    let _: Option<String> =
        redis::cmd("SET").arg(KEY_NAME).arg(mine).arg("NX").query(&mut c).map_err(|e| format!("{:?}", e.kind()))?;
    let got: Option<String> = redis::cmd("GET").arg(KEY_NAME).query(&mut c).map_err(|e| format!("{:?}", e.kind()))?;
    got.ok_or_else(|| format!("{KEY_NAME} vanished"))
}

/// The ledger of used states in the rate store, shared by replicas.
pub struct StoreLedger {
    client: redis::Client,
    connection: Mutex<Option<redis::Connection>>,
}

impl StoreLedger {
    /// The ledger in the store `client` reaches (no connection made yet).
    pub fn new(client: redis::Client) -> StoreLedger {
        StoreLedger { client, connection: Mutex::new(None) }
    }
}

impl Ledger for StoreLedger {
    fn spend(&self, id: &str, until_ms: u64, now_ms: u64) -> Spent {
        let ttl = until_ms.saturating_sub(now_ms).max(1);
        let mut held = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        if held.is_none() {
            match self.client.get_connection_with_timeout(STORE_TIMEOUT) {
                Ok(c) => {
                    let _ = c.set_read_timeout(Some(STORE_TIMEOUT));
                    let _ = c.set_write_timeout(Some(STORE_TIMEOUT));
                    *held = Some(c);
                }
                Err(e) => return Spent::Unknown(unanswered(&e)),
            }
        }
        let Some(c) = held.as_mut() else { return Spent::Unknown("the rate store is not connected".into()) };
        let set: redis::RedisResult<Option<String>> =
            redis::cmd("SET").arg(format!("bb:confirm:used:{id}")).arg(1).arg("NX").arg("PX").arg(ttl).query(c);
        match set {
            Ok(Some(_)) => Spent::Fresh,
            Ok(None) => Spent::Used,
            Err(e) => {
                *held = None;
                Spent::Unknown(unanswered(&e))
            }
        }
    }

    fn blocks(&self) -> bool {
        true
    }
}

fn unanswered(e: &redis::RedisError) -> String {
    format!("the rate store, which remembers used confirmations, did not answer ({:?})", e.kind())
}

/// A key for `purpose` from `key` (HMAC-SHA-256 of the purpose under it).
fn derive(key: &[u8; 32], purpose: &[u8]) -> [u8; 32] {
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), purpose);
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// URL-safe base64 without padding (RFC 4648 §5).
fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// The bytes of URL-safe base64 without padding; `None` for anything else.
fn unbase64url(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            let v = ALPHABET.iter().position(|a| a == c)? as u32;
            n |= v << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        let len = chunk.len() - 1;
        // Bits past the last byte must be zero: one token, one text.
        if bytes[1 + len..].iter().any(|b| *b != 0) {
            return None;
        }
        out.extend_from_slice(&bytes[1..=len]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn seal() -> RingSeal {
        RingSeal::new(&[7u8; 32])
    }

    #[test]
    fn a_sealed_payload_opens_with_its_nonce_as_id() {
        let s = seal();
        let token = s.seal(b"{\"v\":1}");
        assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{token}");
        let (payload, id) = s.open(&token).unwrap();
        assert_eq!(payload, b"{\"v\":1}");
        assert_eq!(id.len(), 24);
        assert_eq!(id, hex(&unbase64url(&token).unwrap()[..NONCE_LEN]));
    }

    #[test]
    fn an_altered_byte_is_refused() {
        let s = seal();
        let token = s.seal(b"payload");
        let mut bytes = unbase64url(&token).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 1;
            assert!(s.open(&base64url(&bytes)).is_none(), "byte {i}");
            bytes[i] ^= 1;
        }
        assert!(s.open(&token).is_some());
        assert!(s.open("").is_none());
        assert!(s.open("not base64!").is_none());
        assert!(s.open(&token[..token.len() - 1]).is_none());
    }

    #[test]
    fn another_keys_token_is_refused() {
        let token = seal().seal(b"payload");
        assert!(RingSeal::new(&[8u8; 32]).open(&token).is_none());
        assert_ne!(seal().digest(b"x"), RingSeal::new(&[8u8; 32]).digest(b"x"));
    }

    #[test]
    fn two_seals_of_one_payload_differ() {
        let s = seal();
        let (a, b) = (s.seal(b"same"), s.seal(b"same"));
        assert_ne!(a, b);
        assert_ne!(s.open(&a).unwrap().1, s.open(&b).unwrap().1);
    }

    #[test]
    fn the_digest_is_keyed_hex_and_stable() {
        let s = seal();
        assert_eq!(s.digest(b"args"), seal().digest(b"args"));
        assert_ne!(s.digest(b"args"), s.digest(b"argz"));
        assert_eq!(s.digest(b"args").len(), 64);
    }

    #[test]
    fn base64url_round_trips_every_length() {
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(unbase64url(&base64url(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
    }

    #[test]
    fn the_key_comes_from_bb_confirm_key_or_is_random() {
        let env = |k: &str| (k == "BB_CONFIRM_KEY").then(|| "ab".repeat(32));
        assert_eq!(key(None, &env).unwrap(), ([0xab; 32], None));
        let bad = |k: &str| (k == "BB_CONFIRM_KEY").then(|| "abc".to_owned());
        let e = key(None, &bad).unwrap_err();
        assert!(e.contains("BB_CONFIRM_KEY must be 64 hex digits"), "{e}");
        let none = |_: &str| None;
        assert_ne!(key(None, &none).unwrap().0, key(None, &none).unwrap().0);
    }

    #[test]
    fn a_store_that_does_not_answer_spends_nothing() {
        let ledger = StoreLedger::new(redis::Client::open("redis://127.0.0.1:9/").unwrap());
        assert!(ledger.blocks());
        assert!(matches!(ledger.spend("abc", 2_000, 1_000), Spent::Unknown(_)));
    }
}
