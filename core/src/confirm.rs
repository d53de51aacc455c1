//! The person confirms what cannot be undone: the question a tool that asks puts to them, how it is
//! asked in each era, and the sealed state a 2026-07-28 retry brings back.
//!
//! ```text
//!   tools/call ─▶ the tool asks (Step::Ask, or Fetches::ask after its reads: the pin, e.g. the version seen)
//!     handshake era: elicitation/create sent with the call's tag (stdio: a line; HTTP: the POST's stream)
//!       └─ the client's response ─▶ accept + box ticked ─▶ the tool starts again, Confirming::Confirmed(pin)
//!                                 └─ decline, cancel, box left, 10 minutes, the call cancelled ─▶ nothing written
//!     2026-07-28: the call answers input_required {inputRequests: {confirm: elicitation/create}, requestState}
//!       └─ the retry (new id, inputResponses, requestState) ─▶ the state opened and checked (tool, argument
//!          digest, person, expiry) ─▶ Output::Spend (single use, in the ledger replicas share) ─▶ Confirmed(pin)
//! ```
//!
//! The core holds no key and no random source: the application gives it a [`Seal`] (AEAD under
//! `BB_CONFIRM_KEY`, or the key kept in the rate store), whose every token is unique. Facts and
//! sources: `docs/reference/mcp.md`, "Elicitation (form mode)" and "Multi round-trip requests
//! (input_required)".

use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::text::visible;

/// How long the person has to answer, and how long a 2026-07-28 state stays good: 10 minutes.
pub const ANSWER_WITHIN_MS: u64 = 10 * 60 * 1000;

/// A wait in words, as the model reads it: "10 minutes", "1 minute", "2 seconds".
pub(crate) fn duration_words(ms: u64) -> String {
    let (n, unit) =
        if ms >= 60_000 && ms.is_multiple_of(60_000) { (ms / 60_000, "minute") } else { (ms.div_ceil(1000), "second") };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// The key of bb's one input request in an `input_required` result, and of the one box in the form.
pub const CONFIRM_KEY: &str = "confirm";

/// A question a tool puts to the person before it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// What will happen, in Bitbucket's words, naming the target; no links.
    pub message: String,
    /// The title of the one box the person ticks, naming the target ("Merge #12 into main").
    pub confirm: String,
    /// What the tool needs back to write what the person saw (the version they saw); small.
    pub pin: Value,
}

impl Question {
    /// The `elicitation/create` params: the message, and one required boolean with no default whose
    /// title names the target (a habit click on Accept still passes over it). `mode` only for a
    /// revision that knows it (2025-11-25 and later).
    pub fn params(&self, version: Option<ProtocolVersion>) -> Value {
        let mut params = json!({
            "message": self.message,
            "requestedSchema": {
                "type": "object",
                "properties": {CONFIRM_KEY: {
                    "type": "boolean",
                    "title": self.confirm,
                    "description": "Tick to confirm. Leave it, or decline, and nothing changes.",
                }},
                "required": [CONFIRM_KEY],
            },
        });
        if !matches!(version, Some(ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_03_26)) {
            params["mode"] = Value::from("form");
        }
        params
    }
}

/// Quotes text someone else wrote (a title, a comment) for a question: in quotation marks, with
/// control and bidi characters made visible and at most `max` characters.
pub fn quoted(s: &str, max: usize) -> String {
    let shown = visible(s);
    let mut t: String = shown.chars().take(max).collect();
    if shown.chars().count() > max {
        t.push('…');
    }
    format!("\u{201c}{t}\u{201d}")
}

/// Where a call stands with the person, as the tool sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Confirming<'a> {
    /// Nobody is asked: the tool does not ask for these arguments, or the admin turned asking off
    /// (`--confirm off`). The tool writes as it always did.
    Off,
    /// Ask before writing: read what the question names, then [`crate::plan::Step::Ask`] or
    /// [`crate::plan::Fetches::ask`].
    Ask,
    /// The person ticked the box: write what they saw (the question's pin).
    Confirmed(&'a Value),
}

/// What the person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// Accepted with the box ticked.
    Yes,
    /// Declined.
    Declined,
    /// Dismissed without a choice.
    Cancelled,
    /// Accepted with the box left unticked (or not sent).
    Unticked,
    /// The answer could not be read; the sentence says how.
    Unreadable(String),
}

impl Answered {
    /// Reads an `ElicitResult` ({action, content}).
    pub fn read(result: &Value) -> Answered {
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                match result.get("content").and_then(|c| c.get(CONFIRM_KEY)) {
                    Some(Value::Bool(true)) => Answered::Yes,
                    // Some clients send a checkbox as a string.
                    Some(Value::String(s)) if s == "true" => Answered::Yes,
                    _ => Answered::Unticked,
                }
            }
            Some("decline") => Answered::Declined,
            Some("cancel") => Answered::Cancelled,
            Some(other) => Answered::Unreadable(format!(
                "the client answered the confirmation with an unknown action `{}`",
                other.chars().take(40).collect::<String>()
            )),
            None => Answered::Unreadable("the client's answer to the confirmation had no `action`".into()),
        }
    }

    /// The sentence the model reads when nothing was written; `None` for [`Answered::Yes`].
    pub fn refusal(&self, tool: &str, untouched: &str) -> Option<String> {
        let again = format!("Do not call {tool} again unless they ask.");
        Some(match self {
            Answered::Yes => return None,
            Answered::Declined => format!("The person declined: {untouched}. {again}"),
            Answered::Cancelled => {
                format!("The person dismissed the confirmation without answering: {untouched}. {again}")
            }
            Answered::Unticked => {
                format!("The person accepted without ticking the confirmation box: {untouched}. {again}")
            }
            Answered::Unreadable(why) => format!("{}: {untouched}.", capitalized(why)),
        })
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Seals and opens the state a 2026-07-28 retry brings back. Given by the application (the core
/// holds no key): integrity and secrecy (AEAD), and a token never made twice.
pub trait Seal: Send + Sync + std::fmt::Debug {
    /// `payload` sealed as a URL-safe token; no two calls give the same token.
    fn seal(&self, payload: &[u8]) -> String;
    /// The payload of a token this key sealed, and the token's unique id (for single use); `None`
    /// for anything else (forged, altered, another key's).
    fn open(&self, token: &str) -> Option<(Vec<u8>, String)>;
    /// A keyed digest of `bytes` (the arguments a state is bound to), as text.
    fn digest(&self, bytes: &[u8]) -> String;
}

/// What a sealed state holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct State {
    /// The tool it was made for.
    pub(crate) tool: String,
    /// The keyed digest of the call's arguments (canonical JSON: serde_json sorts keys).
    pub(crate) args: String,
    /// Who asked: the Bitbucket identity behind the request ([`crate::Server::set_principal`]).
    pub(crate) principal: String,
    /// The question's pin.
    pub(crate) pin: Value,
    /// Until when (epoch milliseconds) an acceptance counts.
    pub(crate) expires_ms: u64,
}

impl State {
    pub(crate) fn seal(&self, seal: &dyn Seal) -> String {
        let payload = json!({"v": 1, "tool": self.tool, "args": self.args, "who": self.principal,
                             "pin": self.pin, "exp": self.expires_ms});
        seal.seal(payload.to_string().as_bytes())
    }

    /// The state in `token` and its unique id, when this server's key sealed it.
    pub(crate) fn open(token: &str, seal: &dyn Seal) -> Option<(State, String)> {
        let (payload, id) = seal.open(token)?;
        let v: Value = serde_json::from_slice(&payload).ok()?;
        if v.get("v").and_then(Value::as_u64) != Some(1) {
            return None;
        }
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let state = State {
            tool: text("tool")?,
            args: text("args")?,
            principal: text("who")?,
            pin: v.get("pin").cloned().unwrap_or(Value::Null),
            expires_ms: v.get("exp").and_then(Value::as_u64)?,
        };
        Some((state, id))
    }
}

/// The digest of a call's arguments a state is bound to.
pub(crate) fn args_digest(args: &Map<String, Value>, seal: &dyn Seal) -> String {
    // serde_json's maps keep keys sorted (no `preserve_order` in this workspace): the text is canonical.
    let text = serde_json::to_string(args).unwrap_or_default();
    seal.digest(text.as_bytes())
}

/// What the ledger of used states answered ([`crate::Input::Spent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spent {
    /// Not used before: it is now.
    Fresh,
    /// Used before (here or at another replica).
    Used,
    /// The ledger could not say (the store did not answer): nothing runs.
    Unknown(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_has_one_required_box_with_no_default_titled_with_the_target() {
        let q = Question { message: "Merge".into(), confirm: "Merge #12 into main".into(), pin: json!({"version": 3}) };
        let p = q.params(Some(ProtocolVersion::V2025_11_25));
        assert_eq!(p["mode"], "form");
        let schema = &p["requestedSchema"];
        assert_eq!(schema["required"], json!(["confirm"]));
        assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
        assert_eq!(schema["properties"]["confirm"]["title"], "Merge #12 into main");
        assert!(schema["properties"]["confirm"].get("default").is_none());
        assert!(q.params(Some(ProtocolVersion::V2025_06_18)).get("mode").is_none());
    }

    #[test]
    fn waits_are_said_in_minutes_or_seconds() {
        assert_eq!(duration_words(ANSWER_WITHIN_MS), "10 minutes");
        assert_eq!(duration_words(60_000), "1 minute");
        assert_eq!(duration_words(1_500), "2 seconds");
    }

    #[test]
    fn only_an_accept_with_the_box_ticked_is_yes() {
        assert_eq!(Answered::read(&json!({"action": "accept", "content": {"confirm": true}})), Answered::Yes);
        assert_eq!(Answered::read(&json!({"action": "accept", "content": {"confirm": false}})), Answered::Unticked);
        assert_eq!(Answered::read(&json!({"action": "accept"})), Answered::Unticked);
        assert_eq!(Answered::read(&json!({"action": "decline"})), Answered::Declined);
        assert_eq!(Answered::read(&json!({"action": "cancel"})), Answered::Cancelled);
        assert!(matches!(Answered::read(&json!({"action": "yes please"})), Answered::Unreadable(_)));
        assert!(matches!(Answered::read(&json!(7)), Answered::Unreadable(_)));
    }

    #[test]
    fn a_decline_says_nothing_was_written_and_not_to_call_again() {
        let s = Answered::Declined.refusal("merge_pull_request", "nothing was merged");
        assert_eq!(
            s.as_deref(),
            Some("The person declined: nothing was merged. Do not call merge_pull_request again unless they ask.")
        );
    }

    #[test]
    fn quoted_text_shows_its_hidden_characters_and_is_cut() {
        assert_eq!(quoted("a\u{202e}b", 10), "\u{201c}a⟨U+202E⟩b\u{201d}");
        assert_eq!(quoted("abcdef", 3), "\u{201c}abc…\u{201d}");
    }
}
