//! The operator's log: lines on stderr (or a sink a test gives), filtered by `--log-level`, with
//! every credential bb holds removed ([`Secrets`]). stdout carries protocol only.
//!
//! As text (`bb: LEVEL: event key=value ...`, the default) or, with `--log-format json`, one JSON
//! object per line: `time` (UTC, RFC 3339 with milliseconds), `level`, `event`, then the event's
//! fields (such as `call`, `tool`, `duration_ms`, `status`). Secrets are removed from the event and
//! every field before the line is made.

use std::io::Write;
use std::sync::{Arc, RwLock};

use bb_core::Level;
use serde_json::{Map, Value};

use crate::secrets::Secrets;

/// Where lines go instead of stderr.
type Sink = Arc<dyn Fn(Level, &str) + Send + Sync>;

/// Writes log lines at or above a level. Cheap to clone; clones write to the same place.
#[derive(Clone)]
pub struct Logger {
    min: Option<Level>,
    sink: Option<Sink>,
    // Shared by every clone: a person's token hidden by one driver is hidden in every line.
    secrets: Arc<RwLock<Secrets>>,
    json: bool,
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger").field("min", &self.min).field("to_stderr", &self.sink.is_none()).finish()
    }
}

impl Logger {
    /// A logger that writes lines at `min` and above to stderr; `None` writes nothing.
    pub fn new(min: Option<Level>) -> Logger {
        Logger { min, sink: None, secrets: Arc::default(), json: false }
    }

    /// This logger, writing one JSON object per line instead of text.
    pub fn json(mut self) -> Logger {
        self.json = true;
        self
    }

    /// Whether lines are JSON objects.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// A logger that hands lines at `min` and above to `sink` instead of stderr, newlines escaped.
    pub fn to(min: Option<Level>, sink: impl Fn(Level, &str) + Send + Sync + 'static) -> Logger {
        Logger { min, sink: Some(Arc::new(sink)), secrets: Arc::default(), json: false }
    }

    /// This logger, removing `secrets` (the operator's credentials) from every line, as do its clones.
    pub fn scrubbing(self, secrets: Secrets) -> Logger {
        *self.secrets.write().unwrap_or_else(|p| p.into_inner()) = secrets;
        self
    }

    /// Removes `token` (a person's own) from every line until [`Logger::unhide`] takes it back.
    pub fn hide(&self, token: &str) {
        self.secrets.write().unwrap_or_else(|p| p.into_inner()).add_token(token);
    }

    /// Takes back one [`Logger::hide`] of `token`.
    pub fn unhide(&self, token: &str) {
        self.secrets.write().unwrap_or_else(|p| p.into_inner()).remove_token(token);
    }

    /// `text` with every credential this logger hides removed ([`Secrets::scrub`]).
    pub fn scrub(&self, text: &str) -> String {
        self.secrets.read().unwrap_or_else(|p| p.into_inner()).scrub(text).into_owned()
    }

    /// Whether a line at `level` would be written.
    pub fn enabled(&self, level: Level) -> bool {
        self.min.is_some_and(|m| level >= m)
    }

    /// Writes one line. Newlines inside the message are escaped so a line stays a line.
    pub fn log(&self, level: Level, message: &str) {
        self.event(level, message, &[]);
    }

    /// Writes one event with its fields (as `key=value` after the event in text), if `level` is
    /// enabled.
    pub fn event(&self, level: Level, event: &str, fields: &[(&str, Value)]) {
        if self.enabled(level) {
            self.write(level, event, fields);
        }
    }

    /// Writes one event whatever the level (what the operator must see, such as the address bb
    /// listens on).
    pub fn announce(&self, level: Level, event: &str, fields: &[(&str, Value)]) {
        self.write(level, event, fields);
    }

    fn write(&self, level: Level, event: &str, fields: &[(&str, Value)]) {
        let secrets = self.secrets.read().unwrap_or_else(|p| p.into_inner());
        let scrub = |text: &str| secrets.scrub(text).into_owned();
        let line = if self.json {
            let mut o = Map::new();
            o.insert("time".into(), Value::String(bb_core::rfc3339(now_ms())));
            o.insert("level".into(), Value::String(level.as_str().into()));
            o.insert("event".into(), Value::String(scrub(event)));
            for (k, v) in fields {
                let v = match v {
                    Value::String(s) => Value::String(scrub(s)),
                    other => serde_json::from_str(&scrub(&other.to_string())).unwrap_or(Value::Null),
                };
                o.insert((*k).to_owned(), v);
            }
            Value::Object(o).to_string()
        } else {
            let mut text = scrub(event);
            for (k, v) in fields {
                let v = match v {
                    Value::String(s) => scrub(s),
                    other => scrub(&other.to_string()),
                };
                text.push_str(&format!(" {k}={v}"));
            }
            text.replace('\n', "\\n").replace('\r', "\\r")
        };
        drop(secrets);
        match &self.sink {
            Some(sink) => sink(level, &line),
            // A closed stderr is no reason to stop serving.
            None if self.json => drop(writeln!(std::io::stderr().lock(), "{line}")),
            None => drop(writeln!(std::io::stderr().lock(), "bb: {}: {line}", level.as_str())),
        }
    }
}

/// The wall clock in epoch milliseconds, for a JSON line's `time`.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_json_line_is_one_object_with_its_fields_and_no_secret() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&lines);
        let mut secrets = Secrets::new();
        secrets.add_token("t0p-secret");
        let logger = Logger::to(Some(Level::Info), move |_, line| {
            seen.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_owned())
        })
        .json()
        .scrubbing(secrets);
        let fields =
            [("tool", Value::from("get_file")), ("duration_ms", Value::from(12)), ("x", Value::from("t0p-secret"))];
        logger.event(Level::Info, "call answered\nwith t0p-secret", &fields);
        let lines = lines.lock().unwrap_or_else(|p| p.into_inner());
        let v: Value = serde_json::from_str(&lines[0]).unwrap_or_default();
        assert_eq!(v["level"], "info");
        assert_eq!(v["tool"], "get_file");
        assert_eq!(v["duration_ms"], 12);
        assert!(v["time"].as_str().is_some_and(|t| t.ends_with('Z')));
        assert!(!lines[0].contains("t0p-secret"), "{}", lines[0]);
        assert!(!lines[0].contains('\n'));
    }

    #[test]
    fn lines_below_the_level_are_dropped_and_newlines_escaped() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&lines);
        let logger = Logger::to(Some(Level::Warning), move |_, line| {
            seen.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_owned())
        });
        logger.log(Level::Info, "quiet");
        logger.log(Level::Error, "two\nlines");
        assert_eq!(*lines.lock().unwrap_or_else(|p| p.into_inner()), ["two\\nlines"]);
        assert!(!Logger::new(None).enabled(Level::Emergency));
    }

    #[test]
    fn every_clone_removes_the_operators_secrets_and_a_hidden_persons_token() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&lines);
        let mut secrets = Secrets::new();
        secrets.add_basic("ops", "hunter22");
        let logger = Logger::to(Some(Level::Debug), move |_, line| {
            seen.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_owned())
        })
        .scrubbing(secrets);
        let clone = logger.clone();
        logger.hide("person-t0ken");
        clone.log(Level::Error, "proxy said: Basic b3BzOmh1bnRlcjIy; Bearer person-t0ken; pw hunter22");
        logger.unhide("person-t0ken");
        clone.log(Level::Error, "person-t0ken");
        let removed = crate::secrets::REMOVED;
        assert_eq!(
            *lines.lock().unwrap_or_else(|p| p.into_inner()),
            [format!("proxy said: Basic {removed}; Bearer {removed}; pw {removed}"), "person-t0ken".into()]
        );
    }
}
