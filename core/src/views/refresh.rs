//! `refresh_view`: a view keeps itself current while it is on screen (ADR-101). The page calls it with
//! the show call it answers and the fingerprint of what it draws; the answer carries the data only when
//! it has changed, and when to ask again.
//!
//! ```text
//!   show(kind, args)                        ──▶ view data + fingerprint "h.since" + next
//!   refresh_view({show, fingerprint})       ──▶ the same reads again
//!        same hash h  ──▶ {unchanged, fingerprint "h.since", next}      (under 300 bytes)
//!        other hash   ──▶ the whole view data, fingerprint "h'.now", next
//!   refresh_view({show: another call})      ──▶ that call's whole view data (navigation in place)
//! ```
//!
//! # The fingerprint
//!
//! A 64-bit FNV-1a hash of the view data in a canonical form, followed by the time (epoch ms) this
//! state was first seen: `"9f86d081884c7d65.1764672000000"`. The canonical form leaves out what differs
//! between two reads of the same state: `readAt`, avatar bytes, a line's runs (`r`: derived from its
//! text), and the order
//! Bitbucket returns equal things in (an array of objects is hashed as a sorted set of its elements;
//! arrays of strings and numbers keep their order). It covers the activity and comments themselves,
//! because Bitbucket leaves a pull request's `version` and `updatedDate` alone when a comment is added
//! or resolved ([assumed]: observed in the stand-in's model of Bitbucket and in issue #14; no public
//! document says which fields a comment moves). Whether a line is plain and why (`p`) is in it: a
//! diff answered plain at its deadline, or with a template lexer's lines still to come, changes when
//! the highlighting that came back later is read (it is kept, so the next read has it), and the page
//! draws the classes in place (the text being the same, it is not offered as a changed diff).
//!
//! The time after the dot is bb's own: the page hands it back and bb learns from it how long nothing
//! has changed, so the cadence is decided with no state kept between calls (a stateless HTTP request
//! can answer it). A page that forges it only changes its own cadence, never below the floor.
//!
//! # The cadence
//!
//! What a view shows decides how often it is read again (`next`, in ms):
//!
//! | state of what it draws                                        | interval |
//! |---------------------------------------------------------------|----------|
//! | in motion: a build in progress, a merge check not yet computed | 5 s      |
//! | updated, or commented on, in the last 5 minutes (a card, and a pull request's diff by its newest comment) | 15 s |
//! | quiet for under 1 minute                                      | 15 s     |
//! | quiet for 1 to 3 minutes                                      | 30 s     |
//! | quiet for 3 to 10 minutes                                     | 60 s     |
//! | quiet for 10 to 30 minutes                                    | 120 s    |
//! | quiet for 30 minutes or more                                  | 240 s    |
//! | two refs' diff (`compare`): moves only when a branch is pushed | as quiet, at least 60 s |
//! | merged or declined, and still (nothing in motion, unchanged for 2 minutes or closed 10 minutes ago) | never (`null`) |
//! | could not be read                                             | 60 s     |
//!
//! `next` lands on a grid: the first instant `k × interval + spread` (counted from the epoch) at least ¾
//! of an interval away. `spread` is the same for views whose reads can be shared — 0 for bb's own
//! credentials, a stable hash of the person for a person's own (`tool::spread_of`) — so every view of the
//! same state read with the same credentials asks at the same moments, and the reads those views need are
//! in flight together, where bb makes each once for all of them (identical reads in flight are shared);
//! views of different people, which share no read, are spread over the interval instead, so a thousand of
//! them never ask Bitbucket at one instant (issue 58). The floor between two asks is ¾ of the interval
//! (3.75 s while a build runs).
//!
//! Why these numbers: a card costs nine Bitbucket GETs a read (the pull request, its merge check,
//! activity, the build listing, the required-build conditions, the branching model, the person's drafts,
//! and the source commit's Code Insights reports and annotations, all in one round trip; avatars are
//! cached), eleven in two when the source branch was pushed to since the last read (the last commit's
//! Code Insights go out before the pull request names the new one). A build that finishes is seen
//! within 4–9 s, which is what a person watching it expects.
//! A card left open on a quiet pull request costs 39 requests in its first minute, 18 a minute until
//! minute 3, 9 a minute until minute 10 and 4.5 a minute after (`cargo run -p bb-core --example
//! refresh_load` prints the figures), against the tens of requests a minute one person's browser
//! makes on Bitbucket's own pull request page; a closed one costs nothing once still. Twenty cards of
//! the same pull request cost the same 4.5 a minute when their pages ask within Bitbucket's answer time
//! of each other (the grid puts them there), and at most 90 a minute when nothing is shared.

use serde_json::{Map, Value, json};

use crate::fetch::{Batch, FetchErrorKind, FetchOutcome, Ticket};
use crate::highlight::Highlighted;
use crate::plan::{Desk, Step, ToolResult, Waiting};
use crate::tool::{Access, Annotations, Asks, Call, Pace, Role, Scoped, ToolSpec};

/// The tool: read-only, offered to views and not to the model.
pub const REFRESH_VIEW: ToolSpec = ToolSpec {
    name: "refresh_view",
    title: "Refresh a view",
    description: "Reads again what a view of show draws, and answers whether it changed. For views, not for the model.",
    input_schema: schema,
    annotations: Annotations::READ,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::View,
    role: Role::ViewCompanion { kind: None },
    start,
};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "show": {"type": "object", "description": "The show call the view answers: kind and its arguments"},
            "fingerprint": {"type": "string", "maxLength": 64, "description": "The fingerprint of what the view draws"}
        },
        "required": ["show"],
        "additionalProperties": false
    })
}

/// A view in motion is read again this often.
pub const MOTION_MS: u64 = 5_000;
/// A pull request updated or commented on within [`RECENT_MS`] is read again this often.
pub const RECENT_INTERVAL_MS: u64 = 15_000;
/// What counts as recent.
pub const RECENT_MS: u64 = 5 * 60_000;
/// After this long quiet, the longest interval applies.
const QUIET_STEPS: &[(u64, u64)] = &[
    // (quiet for less than, interval)
    (60_000, 15_000),
    (3 * 60_000, 30_000),
    (10 * 60_000, 60_000),
    (30 * 60_000, 120_000),
];
/// The longest interval: a view quiet for half an hour.
pub const LONGEST_MS: u64 = 240_000;
/// A view that could not be read asks again after this.
pub const ERROR_MS: u64 = 60_000;
/// A settled view (two refs' diff, which nobody reviews) is read again no more often than this: a compare view
/// costs as many reads as a pull request's diff (up to 21), and changes only when one of its refs moves.
pub const SETTLED_MS: u64 = 60_000;
/// A closed pull request unchanged this long is still: its view stops asking.
const STILL_MS: u64 = 2 * 60_000;
/// A pull request closed this long ago is still once nothing is in motion.
const CLOSED_LONG_AGO_MS: u64 = 10 * 60_000;

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    // As `show` answers such a client: nothing is read for a view nobody sees.
    if !call.client.renders_views {
        return Step::Done(ToolResult::text(super::NOT_SHOWN));
    }
    let Some(show) = args.get("show").and_then(Value::as_object) else {
        return Step::Done(ToolResult::error("refresh_view needs `show`: the show call the view answers."));
    };
    let asked = match args.get("fingerprint").and_then(Value::as_str).and_then(Fingerprint::parse) {
        Some(drawn) => Asked::Refresh(drawn),
        None => Asked::Open,
    };
    finishing(super::show_kind(show, call), asked, call.now_ms, call.spread)
}

/// Who asks for a view's data, which decides what the answer says besides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// `show`: the data with its fingerprint and `next`.
    Show,
    /// `refresh_view` with no fingerprint (the view opens another in place): the data, "Opened.".
    Open,
    /// `refresh_view` with the fingerprint of what the view draws: "Unchanged." with only the new
    /// fingerprint and `next` while it still holds, else the data, "Changed.".
    Refresh(Fingerprint),
}

/// A fingerprint as bb gives it out: the hash of what a view draws and since when it has drawn it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    /// The hash of the canonical view data.
    pub hash: u64,
    /// When this state was first seen, epoch ms.
    pub since: u64,
}

impl Fingerprint {
    /// Reads `"hhhhhhhhhhhhhhhh.since"`; anything else is no fingerprint (the view is answered whole).
    pub fn parse(s: &str) -> Option<Fingerprint> {
        let (hash, since) = s.split_once('.')?;
        if hash.len() != 16 {
            return None;
        }
        Some(Fingerprint { hash: u64::from_str_radix(hash, 16).ok()?, since: since.parse().ok()? })
    }

    /// As it goes out.
    pub fn encode(self) -> String {
        format!("{:016x}.{}", self.hash, self.since)
    }
}

/// Adds the fingerprint and `next` to what the kind's plan answers, as `asked` wants them.
/// `spread`: where on its cadence's grid this view asks ([`on_grid_at`]; 0 for bb's own credentials).
pub(crate) fn finishing(step: Step, asked: Asked, now_ms: u64, spread: u64) -> Step {
    match step {
        Step::Done(result) => Step::Done(finish_at(result, asked, now_ms, spread)),
        Step::Wait(inner) => Step::Wait(Box::new(Finishing { inner, asked, spread })),
        // Views' kinds only read; a question passes through untouched.
        Step::Ask(question) => Step::Ask(question),
    }
}

#[derive(Debug)]
struct Finishing {
    inner: Box<dyn Waiting>,
    asked: Asked,
    spread: u64,
}

impl Finishing {
    /// A refresh's reads say so, one batch per step, so a shell that keeps to the rate limit may hold
    /// them back, all of them or none.
    fn mark(&self, desk: &mut Desk<'_>) {
        let unmarked = desk.issued.iter().filter(|(_, r)| r.refresh.is_none()).count();
        if matches!(self.asked, Asked::Refresh(_)) && unmarked > 0 {
            let batch = Batch { id: desk.next_batch(), reads: u32::try_from(unmarked).unwrap_or(u32::MAX) };
            for (_, request) in desk.issued.iter_mut().filter(|(_, r)| r.refresh.is_none()) {
                request.refresh = Some(batch);
            }
        }
    }
}

impl Waiting for Finishing {
    fn begin(&mut self, desk: &mut Desk<'_>) {
        self.inner.begin(desk);
        self.mark(desk);
    }

    fn resume(&mut self, ticket: Ticket, outcome: FetchOutcome, desk: &mut Desk<'_>) -> Option<ToolResult> {
        let now = desk.now_ms;
        // A read the shell held back for the rate limit: what the view draws stands, asked again later.
        if let (Asked::Refresh(drawn), FetchOutcome::Failed(e)) = (self.asked, &outcome)
            && let FetchErrorKind::Deferred { after_ms } = e.kind
        {
            return Some(deferred(drawn, after_ms));
        }
        let result = self.inner.resume(ticket, outcome, desk).map(|r| finish_at(r, self.asked, now, self.spread));
        self.mark(desk);
        result
    }

    fn work(&mut self, last: bool, desk: &mut Desk<'_>) -> Option<ToolResult> {
        let now = desk.now_ms;
        let result = self.inner.work(last, desk).map(|r| finish_at(r, self.asked, now, self.spread));
        self.mark(desk);
        result
    }

    fn computed(&mut self, ticket: Ticket, done: Highlighted, desk: &mut Desk<'_>) -> Option<ToolResult> {
        let now = desk.now_ms;
        let result = self.inner.computed(ticket, done, desk).map(|r| finish_at(r, self.asked, now, self.spread));
        self.mark(desk);
        result
    }

    fn wants_work(&mut self) -> bool {
        self.inner.wants_work()
    }

    fn room(&self) -> Option<u64> {
        self.inner.room()
    }

    fn waiting(&self) -> usize {
        self.inner.waiting()
    }
}

/// The result with its fingerprint and `next` (on the grid shifted by `spread`, [`on_grid_at`]); for a
/// refresh whose state has not changed, only those.
pub fn finish_at(mut result: ToolResult, asked: Asked, now_ms: u64, spread: u64) -> ToolResult {
    let Some(data) = result.meta.as_mut().and_then(|m| m.get_mut(super::META_KEY)).and_then(Value::as_object_mut)
    else {
        return result;
    };
    if result.is_error {
        data.insert("next".into(), json!(on_grid_at(ERROR_MS, now_ms, spread)));
        return result;
    }
    let hash = hash(data);
    let since = match asked {
        Asked::Refresh(drawn) if drawn.hash == hash => drawn.since.min(now_ms),
        _ => now_ms,
    };
    let fingerprint = Fingerprint { hash, since }.encode();
    let next = interval_ms(motion(data), now_ms - since, now_ms).map(|i| on_grid_at(i, now_ms, spread));
    match asked {
        Asked::Show => {
            data.insert("fingerprint".into(), json!(fingerprint));
            data.insert("next".into(), json!(next));
            result
        }
        Asked::Refresh(drawn) if drawn.hash == hash => {
            let mut meta = Map::new();
            meta.insert(
                super::META_KEY.into(),
                json!({"v": super::VIEW_DATA_VERSION, "unchanged": true, "fingerprint": fingerprint, "next": next, "readAt": now_ms}),
            );
            ToolResult {
                text: vec!["Unchanged.".into()],
                structured: None,
                is_error: false,
                meta: Some(meta),
                images: Vec::new(),
            }
        }
        Asked::Refresh(_) | Asked::Open => {
            data.insert("fingerprint".into(), json!(fingerprint));
            data.insert("next".into(), json!(next));
            let words = if matches!(asked, Asked::Refresh(_)) { "Changed." } else { "Opened." };
            ToolResult { text: vec![words.into()], ..result }
        }
    }
}

/// The answer to a refresh whose reads the shell held back to keep within the Bitbucket user's rate
/// limit: what the view draws stands (its fingerprint unchanged) and it asks again once the budget has
/// room, never sooner than a view in motion would.
pub fn deferred(drawn: Fingerprint, after_ms: u64) -> ToolResult {
    let next = after_ms.max(MOTION_MS).div_ceil(1000) * 1000;
    let mut meta = Map::new();
    meta.insert(
        super::META_KEY.into(),
        json!({"v": super::VIEW_DATA_VERSION, "unchanged": true, "fingerprint": drawn.encode(), "next": next, "deferred": true}),
    );
    ToolResult {
        text: vec![format!(
            "Unchanged: not read again yet (the model's calls come first for Bitbucket's rate limit and connections); asks again in {} s.",
            next / 1000
        )],
        structured: None,
        is_error: false,
        meta: Some(meta),
        images: Vec::new(),
    }
}

/// What moves a view's cadence, read from its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Motion {
    /// Something is being computed or run: a build in progress, a merge check not yet known.
    pub moving: bool,
    /// The last change Bitbucket recorded (updated, or the newest activity), epoch ms.
    pub last_change: Option<u64>,
    /// The pull request is merged or declined, and since when (0 when Bitbucket did not say).
    pub closed_at: Option<u64>,
    /// Nothing in it is under way or under review (two refs' diff): read again as a quiet view is, and
    /// no more often than [`SETTLED_MS`].
    pub settled: bool,
}

/// Reads [`Motion`] from view data of any kind: what its kind's row in [`super::KINDS`] says its cadence
/// follows (the data names its kind).
pub fn motion(data: &Map<String, Value>) -> Motion {
    let still = Motion { moving: false, last_change: None, closed_at: None, settled: false };
    let kind = data.get("kind").and_then(Value::as_str);
    let pace = super::KINDS.iter().find(|k| Some(k.name) == kind).map_or(Pace::Still, |k| k.pace);
    let part = |key: &str| data.get(key).and_then(Value::as_object);
    match pace {
        Pace::PullRequest => part("pullRequest").map_or(still, pull_request_motion),
        Pace::List => part("list").map_or(still, list_motion),
        Pace::Diff => part("diff").map_or(still, diff_motion),
        Pace::Threads => part("threads").map_or(still, threads_motion),
        Pace::Still => still,
    }
}

/// A pull request's: builds running or its merge check being computed; updated or active; closed.
fn pull_request_motion(pr: &Map<String, Value>) -> Motion {
    let builds = pr.get("builds");
    let running_items = builds
        .and_then(|b| b.get("items"))
        .and_then(Value::as_array)
        .is_some_and(|items| items.iter().any(|i| i.get("state").and_then(Value::as_str) == Some("INPROGRESS")));
    let running_count =
        builds.and_then(|b| b.pointer("/counts/inProgress")).and_then(Value::as_u64).is_some_and(|n| n > 0);
    let open = pr.get("state").and_then(Value::as_str).is_none_or(|s| s == "OPEN");
    // Bitbucket computes the merge outcome in the background; UNKNOWN means not yet
    // (reference/bitbucket-dc.md, the pull request's properties.mergeResult).
    let computing = open && pr.get("mergeOutcome").and_then(Value::as_str) == Some("UNKNOWN");
    let newest_activity = pr.get("activity").and_then(|a| a.pointer("/items/0/at")).and_then(Value::as_u64);
    Motion {
        moving: running_items || running_count || computing,
        last_change: pr.get("updated").and_then(Value::as_u64).max(newest_activity),
        closed_at: (!open).then(|| pr.get("closed").and_then(Value::as_u64).unwrap_or(0)),
        settled: false,
    }
}

/// A list's: any item with builds in progress; the newest update.
fn list_motion(list: &Map<String, Value>) -> Motion {
    let mut m = Motion { moving: false, last_change: None, closed_at: None, settled: false };
    for item in list.get("items").and_then(Value::as_array).into_iter().flatten() {
        if item.pointer("/builds/inProgress").and_then(Value::as_u64).is_some_and(|n| n > 0) {
            m.moving = true;
        }
        m.last_change = m.last_change.max(item.get("updated").and_then(Value::as_u64));
    }
    m
}

/// A diff's: a closed pull request's no longer changes; two refs' changes only when a branch moves.
fn diff_motion(diff: &Map<String, Value>) -> Motion {
    Motion {
        moving: false,
        // A pull request's diff moves at the card's pace: updated, or commented on, in the last 5 minutes is
        // read every 15 s, as the card of the same pull request is (issue 40: a comment reached an open card
        // in 7 s and the diff in 17).
        last_change: diff.get("updated").and_then(Value::as_u64).max(newest_comment(diff)),
        closed_at: diff.get("state").and_then(Value::as_str).is_some_and(|s| s != "OPEN").then_some(0),
        settled: diff.get("compare").is_some_and(Value::is_object),
    }
}

/// A pull request's threads: at the card's pace, from its update and its newest thread activity; closed.
fn threads_motion(t: &Map<String, Value>) -> Motion {
    let newest = t.get("threads").and_then(|x| x.pointer("/0/at")).and_then(Value::as_u64);
    Motion {
        moving: false,
        last_change: t.get("updated").and_then(Value::as_u64).max(newest),
        closed_at: t.get("state").and_then(Value::as_str).is_some_and(|s| s != "OPEN").then_some(0),
        settled: false,
    }
}

/// The newest comment or reply a diff draws (`at`, epoch ms): on its files, its lines, and in replies.
fn newest_comment(diff: &Map<String, Value>) -> Option<u64> {
    let mut stack: Vec<&Value> = Vec::new();
    for d in diff.get("diffs").and_then(Value::as_array).into_iter().flatten() {
        stack.extend(d.get("fileComments").and_then(Value::as_array).into_iter().flatten());
        for hunk in d.get("hunks").and_then(Value::as_array).into_iter().flatten() {
            for line in hunk.get("lines").and_then(Value::as_array).into_iter().flatten() {
                stack.extend(line.get("c").and_then(Value::as_array).into_iter().flatten());
            }
        }
    }
    let mut newest = None;
    while let Some(c) = stack.pop() {
        newest = newest.max(c.get("at").and_then(Value::as_u64));
        stack.extend(c.get("replies").and_then(Value::as_array).into_iter().flatten());
    }
    newest
}

/// The interval for what a view draws, unchanged for `quiet_ms`; `None` = do not ask again.
pub fn interval_ms(motion: Motion, quiet_ms: u64, now_ms: u64) -> Option<u64> {
    if motion.moving {
        return Some(MOTION_MS);
    }
    if let Some(closed) = motion.closed_at
        && (quiet_ms >= STILL_MS || now_ms.saturating_sub(closed) >= CLOSED_LONG_AGO_MS)
    {
        return None;
    }
    if motion.last_change.is_some_and(|t| now_ms.saturating_sub(t) < RECENT_MS) {
        return Some(RECENT_INTERVAL_MS);
    }
    let quiet = QUIET_STEPS.iter().find(|(under, _)| quiet_ms < *under).map_or(LONGEST_MS, |(_, every)| *every);
    Some(if motion.settled { quiet.max(SETTLED_MS) } else { quiet })
}

/// When to ask again: the first multiple of `interval` (from the epoch) at least ¾ of it from now.
#[cfg(any(test, feature = "testing"))]
pub fn on_grid(interval: u64, now_ms: u64) -> u64 {
    on_grid_at(interval, now_ms, 0)
}

/// When to ask again on a grid shifted by `spread` (taken modulo the interval): the first instant
/// `k × interval + spread % interval` at least ¾ of the interval from now. Views whose reads can be
/// shared (the same credentials: one person's, or bb's own) get the same `spread` and so ask together,
/// where bb makes each read once for all of them; views of different people, which share nothing, get
/// different ones, so a thousand of them do not ask Bitbucket at the same instant (issue 58).
pub fn on_grid_at(interval: u64, now_ms: u64, spread: u64) -> u64 {
    let interval = interval.max(1);
    let offset = spread % interval;
    let earliest = now_ms + interval * 3 / 4;
    let at = if earliest <= offset { offset } else { (earliest - offset).div_ceil(interval) * interval + offset };
    at - now_ms
}

/// Keys whose values differ between two reads of the same state.
fn ignored(key: &str) -> bool {
    matches!(key, "readAt" | "fingerprint" | "next" | "avatar" | "r" | "unchanged")
}

/// The hash of what view data draws (see the module's doc).
pub fn hash(data: &Map<String, Value>) -> u64 {
    let mut bytes = Vec::new();
    canonical_object(data, &mut bytes);
    fnv1a(&bytes)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut keys: Vec<&String> = map.keys().filter(|k| !ignored(k)).collect();
    keys.sort();
    out.push(b'{');
    for k in keys {
        canonical_str(k, out);
        if let Some(v) = map.get(k) {
            canonical(v, out);
        }
    }
    out.push(b'}');
}

fn canonical_str(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(b'n'),
        Value::Bool(b) => out.push(if *b { b't' } else { b'f' }),
        Value::Number(n) => {
            out.push(b'#');
            canonical_str(&n.to_string(), out);
        }
        Value::String(s) => canonical_str(s, out),
        Value::Object(m) => canonical_object(m, out),
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            // Records: the order Bitbucket returned them in is not what the view shows.
            let mut each: Vec<Vec<u8>> = items
                .iter()
                .map(|i| {
                    let mut b = Vec::new();
                    canonical(i, &mut b);
                    b
                })
                .collect();
            each.sort();
            out.push(b'{');
            out.extend_from_slice(&(each.len() as u64).to_le_bytes());
            for b in each {
                out.extend_from_slice(&b);
            }
        }
        Value::Array(items) => {
            out.push(b'[');
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for i in items {
                canonical(i, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn card(builds: &str, updated: u64) -> Map<String, Value> {
        json!({"v": 1, "kind": "pull_request", "readAt": 5, "pullRequest": {
            "state": "OPEN", "updated": updated, "closed": null, "mergeOutcome": "CLEAN",
            "reviewers": [{"user": "bob", "status": "APPROVED"}, {"user": "carol", "status": "UNAPPROVED"}],
            "builds": {"items": [{"key": "CI", "state": builds}], "counts": null},
            "activity": {"items": [{"id": 2, "at": updated}]}}})
        .as_object()
        .cloned()
        .unwrap()
    }

    #[test]
    fn a_fingerprint_reads_back_what_was_written() {
        let f = Fingerprint { hash: 0x9f86_d081_884c_7d65, since: 1_764_672_000_000 };
        assert_eq!(f.encode(), "9f86d081884c7d65.1764672000000");
        assert_eq!(Fingerprint::parse(&f.encode()), Some(f));
        for bad in ["", "x", "9f86.1", "zzzzzzzzzzzzzzzz.1", "9f86d081884c7d65.", "9f86d081884c7d65.-1"] {
            assert_eq!(Fingerprint::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn what_differs_between_two_reads_of_one_state_is_not_in_the_hash() {
        let a = card("SUCCESSFUL", 100);
        let mut b = a.clone();
        b.insert("readAt".into(), json!(999));
        b["pullRequest"]["reviewers"].as_array_mut().unwrap().reverse();
        b.insert("users".into(), json!({}));
        let mut c = a.clone();
        c.insert("users".into(), json!({}));
        assert_eq!(hash(&b), hash(&c), "read time and reviewer order are not drawn differently");
        let mut with_avatar = c.clone();
        with_avatar.insert("users".into(), json!({"bob": {"name": "Bob", "avatar": "data:…"}}));
        let mut without = c.clone();
        without.insert("users".into(), json!({"bob": {"name": "Bob", "avatar": null}}));
        assert_eq!(hash(&with_avatar), hash(&without));
    }

    #[test]
    fn a_line_highlighted_after_it_went_out_plain_changes_the_hash_its_runs_do_not() {
        let diff = |line: Value| json!({"v": 1, "kind": "diff", "diff": {"diffs": [{"hunks": [{"lines": [line]}]}]}});
        let h = |v: Value| hash(v.as_object().unwrap());
        let plain = h(diff(json!({"n": 1, "s": "let a = 1;", "p": "deadline"})));
        let done = h(diff(json!({"n": 1, "s": "let a = 1;", "r": "3k7_"})));
        assert_ne!(plain, done, "the classes that came later are drawn");
        assert_eq!(done, h(diff(json!({"n": 1, "s": "let a = 1;", "r": "10_"}))), "runs follow from the text");
    }

    #[test]
    fn what_a_view_draws_changes_the_hash() {
        let a = card("INPROGRESS", 100);
        assert_ne!(hash(&a), hash(&card("SUCCESSFUL", 100)), "a build finishing");
        let mut comment = a.clone();
        comment["pullRequest"]["activity"]["items"].as_array_mut().unwrap().push(json!({"id": 3, "at": 100}));
        assert_ne!(hash(&a), hash(&comment), "a comment, though `updated` did not move");
        let mut approve = a.clone();
        approve["pullRequest"]["reviewers"][1]["status"] = json!("APPROVED");
        assert_ne!(hash(&a), hash(&approve));
        // Strings in order: a description's words swapped is a change.
        let mut words = a.clone();
        words.insert("x".into(), json!(["a", "b"]));
        let mut swapped = a.clone();
        swapped.insert("x".into(), json!(["b", "a"]));
        assert_ne!(hash(&words), hash(&swapped));
    }

    #[test]
    fn the_cadence_is_quick_in_motion_slow_when_quiet_and_stops_when_closed_and_still() {
        let now = 10_000_000_000;
        let running = motion(&card("INPROGRESS", now - 60 * 60_000));
        assert!(running.moving);
        assert_eq!(interval_ms(running, 0, now), Some(MOTION_MS));
        let quiet = motion(&card("SUCCESSFUL", now - 60 * 60_000));
        assert_eq!(interval_ms(quiet, 0, now), Some(15_000));
        assert_eq!(interval_ms(quiet, 10 * 60_000, now), Some(120_000));
        assert_eq!(interval_ms(quiet, 2 * 60 * 60_000, now), Some(LONGEST_MS));
        let recent = motion(&card("SUCCESSFUL", now - 60_000));
        assert_eq!(interval_ms(recent, 10 * 60_000, now), Some(RECENT_INTERVAL_MS));
        let mut merged = card("SUCCESSFUL", now - 60_000);
        merged["pullRequest"]["state"] = json!("MERGED");
        merged["pullRequest"]["closed"] = json!(now - 60_000);
        let merged = motion(&merged);
        assert!(interval_ms(merged, 0, now).is_some(), "just merged: the activity may still move");
        assert_eq!(interval_ms(merged, STILL_MS, now), None);
        assert_eq!(interval_ms(merged, 0, now + CLOSED_LONG_AGO_MS), None);
    }

    #[test]
    fn threads_follow_their_newest_activity_and_stop_once_closed() {
        let now = 10_000_000_000;
        let data = json!({"v": 1, "kind": "threads", "threads": {"state": "OPEN", "updated": now - 3_600_000,
                          "threads": [{"at": now - 60_000}, {"at": now - 7_200_000}]}});
        let m = motion(data.as_object().unwrap());
        assert_eq!(m.last_change, Some(now - 60_000), "a reply a minute ago is the last change");
        assert!(!m.moving && m.closed_at.is_none());
        let mut merged = data.clone();
        merged["threads"]["state"] = json!("MERGED");
        assert!(motion(merged.as_object().unwrap()).closed_at.is_some());
    }

    #[test]
    fn two_refs_diff_is_read_as_a_quiet_view_no_more_often_than_a_minute() {
        let now = 10_000_000_000;
        let data = json!({"v": 1, "kind": "compare", "diff": {"compare": {"from": "a", "to": "b"}, "files": []}});
        let m = motion(data.as_object().unwrap());
        assert!(m.settled && !m.moving && m.closed_at.is_none());
        assert_eq!(interval_ms(m, 0, now), Some(SETTLED_MS));
        assert_eq!(interval_ms(m, 10 * 60_000, now), Some(120_000), "quiet longer: as any quiet view");
        let pr = json!({"v": 1, "kind": "diff", "diff": {"state": "OPEN", "files": []}});
        assert!(!motion(pr.as_object().unwrap()).settled, "a pull request's diff is under review");
    }

    #[test]
    fn a_pull_requests_diff_commented_on_lately_is_read_as_often_as_its_card() {
        let now = 10_000_000_000;
        let reply = json!({"id": 9, "at": now - 60_000, "replies": []});
        let data = json!({"v": 1, "kind": "diff", "diff": {"state": "OPEN", "updated": now - 3_600_000, "files": [],
            "diffs": [{"path": "a", "fileComments": [], "hunks": [{"lines": [
                {"n": 1, "s": "x"},
                {"n": 2, "s": "y", "c": [{"id": 7, "at": now - 600_000, "replies": [reply]}]}]}]}]}});
        let m = motion(data.as_object().unwrap());
        assert_eq!(m.last_change, Some(now - 60_000), "the newest reply, under a line");
        // Quiet for 4 minutes by its fingerprint, but the reply is a minute old: every 15 s, as the card.
        assert_eq!(interval_ms(m, 4 * 60_000, now), Some(RECENT_INTERVAL_MS));
        let card = json!({"v": 1, "kind": "pull_request", "pullRequest": {"state": "OPEN", "updated": now - 3_600_000,
            "activity": {"items": [{"id": 9, "at": now - 60_000}]}}});
        assert_eq!(interval_ms(m, 4 * 60_000, now), interval_ms(motion(card.as_object().unwrap()), 4 * 60_000, now));
        // An hour after the last comment: as quiet as its fingerprint says.
        assert_eq!(interval_ms(m, 4 * 60_000, now + 3_600_000), Some(60_000));
    }

    #[test]
    fn next_lands_on_the_grid_no_sooner_than_three_quarters_of_the_interval() {
        for now in [0, 1, 3_749, 3_750, 3_751, 1_764_672_000_123] {
            let next = on_grid(MOTION_MS, now);
            assert_eq!((now + next) % MOTION_MS, 0);
            assert!((MOTION_MS * 3 / 4..MOTION_MS * 7 / 4).contains(&next), "{now}: {next}");
        }
    }

    #[test]
    fn an_unchanged_refresh_is_small_and_keeps_the_time_the_state_was_first_seen() {
        let data = card("SUCCESSFUL", 100);
        let result = |data: &Map<String, Value>| {
            let mut meta = Map::new();
            meta.insert("bb/view".into(), Value::Object(data.clone()));
            ToolResult {
                text: vec!["t".into()],
                structured: None,
                is_error: false,
                meta: Some(meta),
                images: Vec::new(),
            }
        };
        let t = 10_000_000_000;
        let shown = finish_at(result(&data), Asked::Show, t, 0);
        let fp = shown.meta.as_ref().unwrap()["bb/view"]["fingerprint"].as_str().unwrap().to_owned();
        assert!(fp.ends_with(".10000000000"));
        let again = finish_at(result(&data), Asked::Refresh(Fingerprint::parse(&fp).unwrap()), t + 69_000, 0);
        let view = &again.meta.as_ref().unwrap()["bb/view"];
        assert_eq!(view["unchanged"], true);
        assert_eq!(view["fingerprint"], json!(fp), "still the state first seen at t");
        assert_eq!(view["next"], json!(on_grid(30_000, t + 69_000)), "quiet 69 s: every 30 s");
        assert!(serde_json::to_vec(&again.to_value()).unwrap().len() < 300);
        let mut changed = data.clone();
        changed["pullRequest"]["state"] = json!("DECLINED");
        let changed = finish_at(result(&changed), Asked::Refresh(Fingerprint::parse(&fp).unwrap()), t + 80_000, 0);
        let view = &changed.meta.as_ref().unwrap()["bb/view"];
        assert!(view.get("unchanged").is_none());
        assert!(view["fingerprint"].as_str().unwrap().ends_with(".10000080000"));
        assert_eq!(view["pullRequest"]["state"], "DECLINED");
    }

    #[test]
    fn a_spread_grid_keeps_the_floor_and_the_interval_and_is_the_same_for_the_same_spread() {
        for interval in [MOTION_MS, 15_000, 30_000, 60_000, 240_000] {
            for spread in [0, 1, 7_777, u64::MAX] {
                for now in [0, 1, 3_749, 1_764_672_000_123, 1_764_672_014_999] {
                    let next = on_grid_at(interval, now, spread);
                    assert!(
                        next >= interval * 3 / 4 && next < interval * 3 / 4 + interval,
                        "{interval} {spread} {now}: {next}"
                    );
                    assert_eq!((now + next) % interval, spread % interval, "on its own grid");
                }
            }
            assert_eq!(on_grid_at(interval, 1_000, 0), on_grid(interval, 1_000), "spread 0 is the shared grid");
        }
    }

    #[test]
    fn views_of_different_people_spread_and_one_persons_views_align() {
        let alice = crate::tool::spread_of(Some("user:alice"));
        assert_eq!(alice, crate::tool::spread_of(Some("user:alice")), "stable, the same on every replica");
        assert_eq!(crate::tool::spread_of(None), 0, "bb's own credentials: the shared grid");
        // A thousand people's views asked at the same instant land spread over the interval: in 1 s
        // buckets, the fullest holds under 3× the mean.
        let interval = 15_000;
        let mut buckets = [0u32; 15];
        for n in 0..1000 {
            let at = 1_764_672_000_000
                + on_grid_at(interval, 1_764_672_000_000, crate::tool::spread_of(Some(&format!("token:{n:032x}"))));
            buckets[((at % interval) / 1000) as usize] += 1;
        }
        let mean = 1000 / 15;
        assert!(buckets.iter().all(|b| *b < 3 * mean), "{buckets:?}");
    }
}
