//! The audit trail's side in the drive: the [`Audit`] sink the application gives (a writer on a
//! thread of its own behind a bounded queue), and the line the driver makes of each
//! [`bb_core::Output::Audit`]: the core's record, with the person, the transport, the replica and
//! the time added, and every credential bb holds scrubbed from the whole line.
//!
//! The driver never blocks on the sink: a record the queue has no room for is held with every
//! delivery that follows it (the call's answer among them) until the writer makes room and says so
//! ([`Audit::when_room`], a [`crate::Wake::AuditRoom`]). So a full queue makes calls wait, and no
//! record is dropped.

use std::sync::{Arc, RwLock};

use bb_core::{AuditEvent, SessionId};
use serde_json::{Map, Value};

use crate::log::Logger;

/// Where the driver hands the audit trail's lines: the application's writer.
pub trait Audit: Send + Sync {
    /// Queues one line (a JSON object, no newline) for writing; gives it back when the queue is full.
    fn offer(&self, line: Vec<u8>) -> Result<(), Vec<u8>>;
    /// Calls `room` once, on the writer's thread, when the queue next has room (at once if it has).
    fn when_room(&self, room: Box<dyn FnOnce() + Send>);
    /// Whether tool calls must be refused: a write failed and the policy is to refuse.
    fn refusing(&self) -> bool;
}

/// The audit trail as a driver writes it: the sink and what the drive adds to every record.
#[derive(Clone)]
pub struct AuditTrail {
    sink: Arc<dyn Audit>,
    transport: &'static str,
    replica: String,
    /// The user of bb's own credentials: the configured user, or the one Bitbucket named (at start,
    /// or in the first answer to a session that acts with them). Shared by every clone.
    own_user: Arc<RwLock<Option<String>>>,
}

impl std::fmt::Debug for AuditTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditTrail").field("transport", &self.transport).field("replica", &self.replica).finish()
    }
}

impl AuditTrail {
    /// A trail written to `sink` by a process serving over `transport` (`stdio`, `http`); the
    /// replica is this host's name and process id.
    pub fn new(sink: Arc<dyn Audit>, transport: &'static str) -> AuditTrail {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".into());
        let replica = format!("{host}:{}", std::process::id());
        AuditTrail { sink, transport, replica, own_user: Arc::default() }
    }

    /// Names the user of bb's own credentials (the configured user, or the one Bitbucket named), for
    /// the records of sessions without a person of their own; the first name given stays.
    pub fn learn_own_user(&self, user: &str) {
        let mut own = self.own_user.write().unwrap_or_else(|p| p.into_inner());
        if own.is_none() && !user.is_empty() {
            *own = Some(user.to_owned());
        }
    }

    pub(crate) fn sink(&self) -> &Arc<dyn Audit> {
        &self.sink
    }

    /// The line of `record`: `time`, `event`, …, the person (`person`: a login's user, else the
    /// user Bitbucket named, else the configured user, else `fallback`: a digest of a person's
    /// token), `session`, `transport`, `replica`, at `now_ms`; every credential `logger` hides scrubbed.
    pub(crate) fn line(
        &self,
        session: SessionId,
        record: &AuditEvent,
        person: Option<String>,
        fallback: Option<String>,
        logger: &Logger,
        now_ms: u64,
    ) -> Vec<u8> {
        if person.is_none()
            && fallback.is_none()
            && let Some(user) = &record.bitbucket_user
        {
            self.learn_own_user(user);
        }
        let own = self.own_user.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut m = Map::new();
        m.insert("time".into(), bb_core::rfc3339(now_ms).into());
        for (k, v) in record.fields() {
            m.insert(k.into(), v);
            if k == "status" {
                let who = person
                    .clone()
                    .or_else(|| record.bitbucket_user.clone())
                    .or_else(|| own.clone())
                    .or_else(|| fallback.clone())
                    .unwrap_or_else(|| "unknown".into());
                m.insert("person".into(), who.into());
            }
        }
        m.insert("session".into(), session.0.into());
        m.insert("transport".into(), self.transport.into());
        m.insert("replica".into(), self.replica.clone().into());
        let text = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
        logger.scrub(&text).into_bytes()
    }
}

impl AuditTrail {
    /// Records an event a shell sees rather than the core (`login`: a grant made at the OAuth
    /// callback; `logout`: a session ended by its client), for `person` (else bb's own user),
    /// with `fields`. Called on the shell's thread, never the driver's: while the writer's queue is
    /// full it waits there, so the record is not dropped.
    pub fn shell_event(
        &self,
        event: &'static str,
        person: Option<String>,
        session: Option<SessionId>,
        fields: Vec<(&'static str, Value)>,
        logger: &Logger,
        now_ms: u64,
    ) {
        let own = self.own_user.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut m = Map::new();
        m.insert("time".into(), bb_core::rfc3339(now_ms).into());
        m.insert("event".into(), event.into());
        m.insert("status".into(), "ok".into());
        m.insert("person".into(), person.or(own).unwrap_or_else(|| "unknown".into()).into());
        for (k, v) in fields {
            m.insert(k.into(), v);
        }
        if let Some(session) = session {
            m.insert("session".into(), session.0.into());
        }
        m.insert("transport".into(), self.transport.into());
        m.insert("replica".into(), self.replica.clone().into());
        let text = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
        let mut line = logger.scrub(&text).into_bytes();
        while let Err(back) = self.sink.offer(line) {
            line = back;
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::secrets::Secrets;
    use serde_json::json;

    struct Nowhere;
    impl Audit for Nowhere {
        fn offer(&self, _: Vec<u8>) -> Result<(), Vec<u8>> {
            Ok(())
        }
        fn when_room(&self, room: Box<dyn FnOnce() + Send>) {
            room()
        }
        fn refusing(&self) -> bool {
            false
        }
    }

    const TOKEN: &str = "BBDC-s3cr3t+t0ken/xyz";

    fn record(arguments: Value) -> AuditEvent {
        AuditEvent {
            event: "tool_call",
            tool: "get_pull_request".into(),
            status: "ok",
            reason: None,
            answer: None,
            error: Some(format!("Bitbucket said: bad token {TOKEN}")),
            call: json!(1),
            project: Some("BB".into()),
            repo: Some("api".into()),
            pr: Some(1),
            arguments: Value::Object(bb_core::audit::redact_map(arguments.as_object().unwrap())),
            duration_ms: 3,
            client: "test 1".into(),
            bitbucket_user: Some("alice".into()),
            trace: None,
        }
    }

    fn trail_line(arguments: Value) -> String {
        let mut secrets = Secrets::new();
        secrets.add_token(TOKEN);
        let logger = Logger::new(None).scrubbing(secrets);
        let trail = AuditTrail::new(Arc::new(Nowhere), "stdio");
        String::from_utf8(trail.line(SessionId(1), &record(arguments), None, None, &logger, 0)).unwrap()
    }

    #[test]
    fn a_line_names_the_person_and_the_replica_and_holds_no_credential() {
        let line = trail_line(json!({"token": "anything", "text": format!("x{TOKEN}y"), "deep": [{"a": TOKEN}]}));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["person"], "alice");
        assert_eq!(v["transport"], "stdio");
        assert_eq!(v["arguments"]["token"], "[removed]");
        assert!(v["replica"].as_str().unwrap().ends_with(&format!(":{}", std::process::id())));
        assert!(!line.contains(TOKEN) && !line.contains("anything"), "{line}");
    }

    /// Arguments of any shape (from a pinned seed), with the token put somewhere: as a value,
    /// inside a longer string, as a key, under a key named like a secret, nested.
    fn args_with_token(seed: &mut u64, depth: u32) -> Value {
        fn next(seed: &mut u64) -> u64 {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        }
        let pick = next(seed) % if depth == 0 { 4 } else { 6 };
        match pick {
            0 => json!(TOKEN),
            1 => json!(format!("said {TOKEN} twice: {TOKEN}.")),
            2 => json!(format!("x{}", next(seed) % 100)),
            3 => json!(next(seed) % 1000),
            4 => {
                let n = next(seed) % 4;
                Value::Array((0..n).map(|_| args_with_token(seed, depth - 1)).collect())
            }
            _ => {
                let n = next(seed) % 4;
                let mut m = Map::new();
                for i in 0..n {
                    let key = match next(seed) % 4 {
                        0 => "token".to_owned(),
                        1 => TOKEN.to_owned(),
                        2 => "X-Password".to_owned(),
                        _ => format!("k{i}"),
                    };
                    m.insert(key, args_with_token(seed, depth - 1));
                }
                Value::Object(m)
            }
        }
    }

    #[test]
    fn the_token_never_reaches_a_line_wherever_the_arguments_hold_it() {
        let mut seed: u64 = std::env::var("BB_PROPTEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xbb) | 1;
        for _ in 0..500 {
            let inner = args_with_token(&mut seed, 4);
            let line = trail_line(json!({"project": "BB", "body": inner}));
            assert!(!line.contains(TOKEN) && !line.contains("s3cr3t"), "{line}");
        }
    }
}
