//! The operator's log: lines on stderr (or a sink a test gives), filtered by `--log-level`, with
//! every credential bb holds removed ([`Secrets`]). stdout carries protocol only.

use std::io::Write;
use std::sync::{Arc, RwLock};

use bb_core::Level;

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
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger").field("min", &self.min).field("to_stderr", &self.sink.is_none()).finish()
    }
}

impl Logger {
    /// A logger that writes lines at `min` and above to stderr; `None` writes nothing.
    pub fn new(min: Option<Level>) -> Logger {
        Logger { min, sink: None, secrets: Arc::default() }
    }

    /// A logger that hands lines at `min` and above to `sink` instead of stderr, newlines escaped.
    pub fn to(min: Option<Level>, sink: impl Fn(Level, &str) + Send + Sync + 'static) -> Logger {
        Logger { min, sink: Some(Arc::new(sink)), secrets: Arc::default() }
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

    /// Whether a line at `level` would be written.
    pub fn enabled(&self, level: Level) -> bool {
        self.min.is_some_and(|m| level >= m)
    }

    /// Writes one line. Newlines inside the message are escaped so a line stays a line.
    pub fn log(&self, level: Level, message: &str) {
        if !self.enabled(level) {
            return;
        }
        let message = self.secrets.read().unwrap_or_else(|p| p.into_inner()).scrub(message).into_owned();
        let message = message.replace('\n', "\\n").replace('\r', "\\r");
        match &self.sink {
            Some(sink) => sink(level, &message),
            // A closed stderr is no reason to stop serving.
            None => drop(writeln!(std::io::stderr().lock(), "bb: {}: {message}", level.as_str())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

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
