//! `--audit-file`: the audit trail's writer. The drivers offer lines ([`bb_drive::Audit`]) to a bounded
//! queue; a thread of its own writes them, one JSON object a line, to the file (opened at start,
//! 0600, appended) or stderr. A full queue gives the line back: the driver holds it, and the call's
//! answer behind it, until the writer says it has room, so calls wait and no record is dropped.
//!
//! A write that fails is counted (`bb_audit_failures`) and, under `--audit-failure refuse` (the
//! default), tool calls are refused until a write succeeds again; under `warn` bb logs once and goes
//! on. SIGHUP reopens the file (after logrotate moved it).

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use bb_core::Level;
use bb_drive::Logger;
use bb_drive::metrics::Metrics;

/// Lines the writer's queue holds before a driver must wait for room.
pub const QUEUE: usize = 1024;

/// What a write that fails does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Tool calls are refused ("it could not be recorded") until a write succeeds again.
    Refuse,
    /// A warning is logged once, and calls go on.
    Warn,
}

/// Where the trail goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// stderr, beside the log.
    Stderr,
    /// A file, appended to.
    File(PathBuf),
}

impl Target {
    /// `--audit-file` (or `BB_AUDIT_FILE`): a path, or `stderr`; `stdout` is refused.
    pub fn parse(value: &str) -> Result<Target, String> {
        match value.trim() {
            "" => Err("--audit-file needs a path, or stderr".into()),
            "stdout" | "-" => {
                Err("--audit-file stdout is refused: stdout carries the protocol over stdio. Give a file, or stderr"
                    .into())
            }
            "stderr" => Ok(Target::Stderr),
            path => Ok(Target::File(PathBuf::from(path))),
        }
    }
}

/// The writer: its queue, its thread's file, and whether writing fails.
pub struct Writer {
    target: Target,
    failure: Failure,
    queue: Mutex<Queue>,
    ready: Condvar,
    failing: AtomicBool,
    warned: AtomicBool,
    reopen: AtomicBool,
    metrics: Arc<Metrics>,
    logger: Logger,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    /// Who waits for room: called once the writer takes a line.
    waiting: Vec<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").field("target", &self.target).field("failure", &self.failure).finish()
    }
}

fn open(path: &PathBuf) -> std::io::Result<File> {
    OpenOptions::new().append(true).create(true).mode(0o600).open(path)
}

impl Writer {
    /// Opens `target` (a file: created 0600 or appended to; a path bb cannot open stops it with a
    /// sentence) and starts the writer's thread.
    pub fn start(
        target: Target,
        failure: Failure,
        metrics: Arc<Metrics>,
        logger: Logger,
    ) -> Result<Arc<Writer>, String> {
        let file = match &target {
            Target::Stderr => None,
            Target::File(path) => Some(open(path).map_err(|e| {
                format!(
                    "cannot open the audit file {}: {e}. bb records every tool call there and does not start without it",
                    path.display()
                )
            })?),
        };
        let writer = Arc::new(Writer {
            target,
            failure,
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            failing: AtomicBool::new(false),
            warned: AtomicBool::new(false),
            reopen: AtomicBool::new(false),
            metrics,
            logger,
        });
        let me = Arc::clone(&writer);
        std::thread::Builder::new()
            .name("bb-audit".into())
            .spawn(move || me.run(file))
            .map_err(|e| format!("cannot start the audit trail's writer: {e}"))?;
        Ok(writer)
    }

    /// Reopens the file before the next line (SIGHUP, after logrotate moved it).
    pub fn reopen(&self) {
        self.reopen.store(true, Ordering::SeqCst);
        let _q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        self.ready.notify_all();
    }

    fn run(&self, mut file: Option<File>) {
        loop {
            let (line, waiting) = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if self.reopen.load(Ordering::SeqCst) || !q.lines.is_empty() || !q.waiting.is_empty() {
                        break;
                    }
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
                let line = q.lines.pop_front();
                (line, std::mem::take(&mut q.waiting))
            };
            for room in waiting {
                room();
            }
            if self.reopen.swap(false, Ordering::SeqCst)
                && let Target::File(path) = &self.target
            {
                match open(path) {
                    Ok(f) => {
                        file = Some(f);
                        self.logger.log(Level::Info, &format!("audit file {} reopened", path.display()));
                    }
                    Err(e) => {
                        self.logger.log(Level::Error, &format!("cannot reopen the audit file {}: {e}", path.display()))
                    }
                }
            }
            let Some(mut line) = line else { continue };
            line.push(b'\n');
            let written = match &mut file {
                Some(f) => f.write_all(&line),
                None => std::io::stderr().lock().write_all(&line),
            };
            self.outcome(written);
        }
    }

    fn outcome(&self, written: std::io::Result<()>) {
        match written {
            Ok(()) => {
                self.metrics.audit_record();
                if self.failing.swap(false, Ordering::SeqCst) && self.failure == Failure::Refuse {
                    self.logger.log(Level::Warning, "the audit trail is written again: tool calls are taken again");
                }
            }
            Err(e) => {
                self.metrics.audit_failure();
                let was = self.failing.swap(true, Ordering::SeqCst);
                match self.failure {
                    Failure::Refuse if !was => self.logger.log(
                        Level::Error,
                        &format!("a record of the audit trail could not be written ({e}): tool calls are refused until one is"),
                    ),
                    Failure::Warn if !self.warned.swap(true, Ordering::SeqCst) => self.logger.log(
                        Level::Warning,
                        &format!(
                            "a record of the audit trail could not be written ({e}); --audit-failure warn: calls go on, \
                             and records that cannot be written are lost (counted in bb_audit_failures)"
                        ),
                    ),
                    _ => {}
                }
            }
        }
    }
}

impl bb_drive::Audit for Writer {
    fn offer(&self, line: Vec<u8>) -> Result<(), Vec<u8>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if q.lines.len() >= QUEUE {
            return Err(line);
        }
        q.lines.push_back(line);
        self.ready.notify_one();
        Ok(())
    }

    /// `room` is called on the writer's thread, never the caller's: a driver asks while its shell
    /// holds it, and `room` wakes the driver through that shell.
    fn when_room(&self, room: Box<dyn FnOnce() + Send>) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.waiting.push(room);
        self.ready.notify_one();
    }

    fn refusing(&self) -> bool {
        self.failure == Failure::Refuse && self.failing.load(Ordering::SeqCst)
    }
}

/// Reopens `writer`'s file on every SIGHUP, on a thread of its own.
pub fn reopen_on_hangup(writer: &Arc<Writer>) -> Result<(), String> {
    use smol::stream::StreamExt;
    let mut signals = async_signal::Signals::new([async_signal::Signal::Hup])
        .map_err(|e| format!("cannot catch SIGHUP to reopen the audit file: {e}"))?;
    let writer = Arc::clone(writer);
    std::thread::Builder::new()
        .name("bb-audit-hup".into())
        .spawn(move || {
            while let Some(Ok(_)) = smol::block_on(signals.next()) {
                writer.reopen();
            }
        })
        .map_err(|e| format!("cannot start the audit trail's SIGHUP thread: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_is_refused_and_stderr_or_a_path_taken() {
        assert!(Target::parse("stdout").is_err_and(|e| e.contains("carries the protocol")));
        assert_eq!(Target::parse("stderr"), Ok(Target::Stderr));
        assert_eq!(Target::parse("/var/log/bb.jsonl"), Ok(Target::File("/var/log/bb.jsonl".into())));
    }
}
