//! The drive contract: everything a shell and the core say to each other. The shell feeds an
//! [`Input`] with the current time to [`crate::Server::handle`], then drains
//! [`crate::Server::poll_output`] until it returns `None`, carrying out each [`Output`] (str0m's
//! rule: drain after *every* call). The core holds no clock, socket or thread; all it knows of time
//! is the `now_ms` each input comes with. Every deadline is the core's: it says when it next wants
//! an input ([`Output::Work`]'s `deadline_ms`, as str0m's `Output::Timeout`), and the shell only keeps
//! the clock, feeding that input when the time comes.
//!
//! ```text
//!   shell ─ Input::Message{session, bytes, tag} ─▶ core ─▶ Output::Send{tag}…, Output::Done{tag}
//!                                                      └─▶ Output::Fetch{ticket}    ─┐ a read
//!         ─ Input::Fetched{ticket, outcome} ◀──────────────────────────────────────┘
//!                                                      └─▶ Output::Compute{ticket}  ─┐ a job for a CPU thread
//!         ─ Input::Computed{ticket, done}  ◀───────────────────────────────────────┘
//!                                                      └─▶ Output::Work{ticket, deadline_ms} ─┐ steps of CPU work;
//!         ─ Input::Work{ticket}            ◀────────────────────────────────────────────┘ one at deadline_ms,
//!                                                                                          the core's last
//!                                                      └─▶ Output::Admit{ticket}    ─┐ room in the process's
//!         ─ Input::Admitted{ticket, granted} ◀─────────────────────────────────────┘ memory for a large call
//!                                                      └─▶ Output::Timer{ticket, at_ms} ─┐ the core acts on its own
//!         ─ Input::Timer{ticket}           ◀───────────────────────────────────────┘ at at_ms (a subscription)
//!                                                      └─▶ Output::Cancel{ticket}      any of them, dropped
//! ```
//!
//! A **tag** is the shell's name for one input: every message that answers it carries the tag back,
//! and exactly one [`Output::Done`] closes it, after the last of them. A **ticket** is the core's
//! name for one piece of work a call waits on, of the kinds above ([`crate::work`] keeps the table;
//! an admission is held, not waited on, until its call ends);
//! its outcome comes back under the same ticket, and one [`Output::Cancel`] withdraws any of them. An
//! outcome for a ticket the core no longer waits on is dropped, so a shell may race a cancel freely.

use crate::fetch::{FetchOutcome, FetchRequest, Ticket};
use crate::highlight::{HighlightJob, Highlighted};
use crate::logging::Level;

/// A session of a server; the shell keeps it to feed the session's messages and route its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

/// Something for the server to take in.
#[derive(Debug)]
pub enum Input<'a> {
    /// One message (or batch) from a session's client. `tag` is the shell's: every answer to this
    /// input carries it back, and [`Output::Done`] closes it.
    Message {
        /// The session it came on.
        session: SessionId,
        /// The raw bytes of one line (stdio) or one POST body (HTTP).
        bytes: &'a [u8],
        /// The shell's tag for this input.
        tag: u64,
    },
    /// A message longer than the shell accepts was dropped unread.
    Oversized {
        /// The session it came on.
        session: SessionId,
        /// The limit it exceeded, in bytes.
        limit: usize,
        /// The shell's tag for this input.
        tag: u64,
    },
    /// A step of the CPU work asked for with [`Output::Work`]: at once, and once more when the time
    /// reaches its `deadline_ms`. The core decides from the input's `now_ms` whether the step is the
    /// last (the deadline has come: the call finishes with what is done).
    Work {
        /// The ticket of [`Output::Work`].
        ticket: Ticket,
    },
    /// The outcome of a job asked for with [`Output::Compute`]. It is kept in the highlight cache even
    /// when the call that asked for it has answered meanwhile (the next read of the file gets it).
    Computed {
        /// The ticket of [`Output::Compute`].
        ticket: Ticket,
        /// What the job made.
        done: Highlighted,
    },
    /// The shell's answer to [`Output::Admit`]: the call may go on (`granted`), or the process has no
    /// room for it and will have none soon (it answers that bb is busy).
    Admitted {
        /// The ticket of [`Output::Admit`].
        ticket: Ticket,
        /// Room was set aside for the call.
        granted: bool,
    },
    /// The outcome of a Bitbucket read the server asked for.
    Fetched {
        /// The ticket of [`Output::Fetch`].
        ticket: Ticket,
        /// What happened.
        outcome: FetchOutcome,
    },
    /// The time asked for with [`Output::Timer`] has come (fed with a `now_ms` at or past its `at_ms`).
    Timer {
        /// The ticket of [`Output::Timer`].
        ticket: Ticket,
    },
    /// What the ledger of used confirmations answered for an [`Output::Spend`].
    Spent {
        /// The ticket of [`Output::Spend`].
        ticket: Ticket,
        /// Fresh (now used), used before, or unknown (nothing runs).
        spent: crate::confirm::Spent,
    },
}

/// What a sent message says, for a shell's metrics and log: the core knows it when it writes the
/// message, so no shell parses a message back to learn it (the HTTP shell once parsed every answer,
/// which made a 25 KB `tools/list` cost three times the CPU it needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Said {
    /// A result, a notification, or a batch's answers.
    #[default]
    Result,
    /// A tool's result that is an error (`isError`).
    ToolError,
    /// A JSON-RPC error with this code.
    Error(i64),
    /// A `refresh_view` result that says the view is unchanged.
    Unchanged,
}

impl Said {
    /// What `message`, about to be written, says.
    pub(crate) fn of(message: &serde_json::Value) -> Said {
        if let Some(code) = message.pointer("/error/code") {
            return Said::Error(code.as_i64().unwrap_or(0));
        }
        let Some(result) = message.get("result") else { return Said::Result };
        if result.get("isError") == Some(&serde_json::Value::Bool(true)) {
            return Said::ToolError;
        }
        let unchanged = result
            .get("_meta")
            .and_then(serde_json::Value::as_object)
            .is_some_and(|meta| meta.values().any(|d| d.get("unchanged") == Some(&serde_json::Value::Bool(true))));
        if unchanged { Said::Unchanged } else { Said::Result }
    }
}

/// Something the shell must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send one JSON-RPC message (a single line, no newline) to a session's client.
    Send {
        /// The session whose client gets it.
        session: SessionId,
        /// The tag of the input this answers, or `None` for a message tied to no input (a log notification).
        tag: Option<u64>,
        /// The JSON-RPC message as UTF-8 JSON text, without a trailing newline.
        message: Vec<u8>,
        /// What the message says, as the core knew when it wrote it.
        said: Said,
    },
    /// The input tagged `tag` is complete: every message that answers it has been sent (possibly none:
    /// a notification, a cancelled call).
    Done {
        /// The session the input came on.
        session: SessionId,
        /// The input's tag.
        tag: u64,
    },
    /// Make a Bitbucket request for a session and hand its outcome back as [`Input::Fetched`].
    Fetch {
        /// The session whose call needs it (in per-person mode, whose credentials it carries).
        session: SessionId,
        /// Identifies the request.
        ticket: Ticket,
        /// What to ask Bitbucket; the shell adds the base URL, credentials and timeouts.
        request: FetchRequest,
    },
    /// A call has CPU work to do (highlighting): feed [`Input::Work`] with this ticket for a step, and
    /// once more when the time reaches `deadline_ms` even if no step is asked for meanwhile (the call's
    /// jobs run on the shell's threads); the core asks again with another `Work` after each step that
    /// leaves more to do, always with the same deadline. Each step is bounded. The deadline is the
    /// core's (the configuration's `highlight_deadline_ms` after the input that first asked), as
    /// str0m's `Output::Timeout`: the shell keeps the clock, never the policy.
    Work {
        /// The session whose call it is.
        session: SessionId,
        /// Identifies the call's work and its deadline.
        ticket: Ticket,
        /// When the call's last step is due, epoch milliseconds (the clock of `now_ms`).
        deadline_ms: u64,
    },
    /// A call's work stopped at its deadline: the [`Input::Work`] for `ticket` was fed at or past
    /// the `deadline_ms` of its [`Output::Work`], so that step was the last and what was not
    /// highlighted goes out plain. The core asks nothing more of the ticket; the shell forgets its
    /// timer and counts the stop (bb's `highlight_past_deadline` metric). The decision is the core's:
    /// the shell never compares its clock with the deadline itself.
    PastDeadline {
        /// The session whose call it is.
        session: SessionId,
        /// The call's work ticket, as in [`Output::Work`].
        ticket: Ticket,
    },
    /// A file to highlight, which the shell may run on a thread of its own (a lexer cannot be
    /// stopped inside a line, so the core never runs one where it would hold up an answer): feed
    /// its outcome back as [`Input::Computed`] with this ticket, whenever it is done. A
    /// shell with no thread for it runs it at once. The call's deadline is its `Work` ticket's.
    Compute {
        /// The session whose call asked for it.
        session: SessionId,
        /// Identifies the job.
        ticket: Ticket,
        /// What to run.
        job: Box<HighlightJob>,
    },
    /// A call that may hold many megabytes (a large diff) asks for room in the process's memory
    /// budget before any of its reads go out: answer with [`Input::Admitted`] when the room is set
    /// aside (at once, or once other calls have given theirs back), or refuse it. The room is the
    /// call's until this ticket's [`Output::Cancel`], when the call has ended.
    Admit {
        /// The session whose call it is.
        session: SessionId,
        /// Identifies the call's room.
        ticket: Ticket,
        /// How much room, in bytes.
        bytes: u64,
    },
    /// Feed [`Input::Timer`] with this ticket once the time reaches `at_ms` (epoch milliseconds, the
    /// clock of `now_ms`): the core acts then on its own, with no message to answer (a subscription's next
    /// read of the pull request it watches, at the live views' cadence). One input per ticket; its
    /// [`Output::Cancel`] forgets it. The shell keeps the clock, the core the policy (str0m's
    /// `Output::Timeout`).
    Timer {
        /// The session it is for.
        session: SessionId,
        /// Identifies it.
        ticket: Ticket,
        /// When, epoch milliseconds.
        at_ms: u64,
    },
    /// Mark the confirmation `id` (an accepted 2026-07-28 state) used until `until_ms` (epoch
    /// milliseconds) in the ledger every replica shares, and answer [`Input::Spent`]: a state is
    /// honoured once, whichever replica its retry reaches.
    Spend {
        /// The session whose call waits.
        session: SessionId,
        /// Its ticket, for [`Input::Spent`].
        ticket: Ticket,
        /// The state's unique id (its seal's).
        id: String,
        /// Until when the ledger must remember it: the state's expiry.
        until_ms: u64,
    },
    /// One record of the audit trail (a call's outcome, a refusal, a confirmation asked or answered),
    /// emitted before the call's answer: the shell writes it (adding the person, the transport, the
    /// replica and the time, and scrubbing every credential) and delivers the answers that follow it
    /// only once it is queued for writing. Emitted only when [`crate::ServerConfig::audit`] is set.
    Audit {
        /// The session whose call it is.
        session: SessionId,
        /// What the core knows of the event.
        record: Box<crate::audit::AuditEvent>,
    },
    /// Work asked for earlier (a read, a job, a call's steps or its room) is no longer needed: a read not sent
    /// yet is never sent and its retries stop, a job not started never starts, a deadline is
    /// forgotten, a call's room is given back; an outcome that still comes is dropped.
    Cancel(Ticket),
    /// A line for the operator's log (stderr).
    Log {
        /// Its severity.
        level: Level,
        /// The text; never holds a secret.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::Said;
    use serde_json::json;

    #[test]
    fn what_a_message_says_is_read_from_the_value_it_is_written_from() {
        assert_eq!(Said::of(&json!({"id": 1, "error": {"code": -32602, "message": "x"}})), Said::Error(-32602));
        assert_eq!(Said::of(&json!({"id": 1, "result": {"content": [], "isError": true}})), Said::ToolError);
        assert_eq!(Said::of(&json!({"id": 1, "result": {"content": [], "isError": false}})), Said::Result);
        assert_eq!(Said::of(&json!({"id": 1, "result": {"_meta": {"bb/view": {"unchanged": true}}}})), Said::Unchanged);
        assert_eq!(Said::of(&json!({"id": 1, "result": {"_meta": {"bb/view": {"fingerprint": "x"}}}})), Said::Result);
        assert_eq!(Said::of(&json!({"method": "notifications/message", "params": {}})), Said::Result);
    }
}
