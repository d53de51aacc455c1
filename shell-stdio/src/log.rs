//! The operator's log: lines on stderr, filtered by `--log-level`. stdout carries protocol only.

use std::io::Write;

use bb_core::Level;

/// Writes log lines at or above a level to stderr.
#[derive(Debug, Clone, Copy)]
pub struct Logger {
    min: Option<Level>,
}

impl Logger {
    /// A logger that writes lines at `min` and above; `None` writes nothing.
    pub fn new(min: Option<Level>) -> Logger {
        Logger { min }
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
        let message = message.replace('\n', "\\n").replace('\r', "\\r");
        // A closed stderr is no reason to stop serving.
        let _ = writeln!(std::io::stderr().lock(), "bb: {}: {message}", level.as_str());
    }
}
