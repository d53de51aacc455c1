//! Resource subscriptions: bb tells a subscriber `notifications/resources/updated` when a pull request
//! it watches changes. A watch reads what a live card of the pull request reads, at a card's cadence
//! and on the person's grid (it is read by `refresh_view`, the card's own refresh: `views/refresh.rs`), so no
//! subscription costs Bitbucket more than a live
//! card would, and a person's watch and live card of the same pull request share their reads. Its
//! pull request, diff and threads resources are one watch: a change to the pull request (its state,
//! reviewers, builds, comments, tasks or commits) is told for each of them that is subscribed.
//!
//! ```text
//!   resources/subscribe {uri}           (before 2026-07-28) ─┐
//!   subscriptions/listen {notifications: {resourceSubscriptions}} (2026-07-28: the request stays open,
//!        acknowledged first, each notification with its subscriptionId) ─┤
//!                                                                      ▼
//!   Watch ── now: the card's reads (Asked::Open) ──▶ fingerprint, next ──▶ Output::Timer{at: now + next}
//!     ▲                                                                           │
//!     └──────── Input::Timer: the card's reads again (Asked::Refresh(fingerprint)) ◀┘
//!               other hash ──▶ notifications/resources/updated {uri} to each listener
//!               next null (closed and still) ──▶ no more reads, the subscription stands
//! ```
//!
//! A watch's timer and reads are filed in the table of work under its own id (`bb/watch/N`), so
//! closing the session, unsubscribing or cancelling a listen withdraws them. [docs/reference/mcp.md
//! "Resource subscriptions"]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::read::Dress;
use super::{Answer, Session, truncate};
use crate::confirm::Confirming;
use crate::jsonrpc::{self, ErrorReply, INVALID_PARAMS, Id};
use crate::logging::Level;
use crate::plan::Step;
use crate::resources::uri::{self, What};
use crate::shared::Shared;
use crate::tool::{Call, VIEW_META_KEY, spread_of};

/// Pull requests one session (or one 2026-07-28 request's stream) watches at most: each costs what a
/// live card costs. [assumed: more than a person keeps open; a host that asks for more gets the first]
pub(crate) const MOST_WATCHED: usize = 100;
/// The tag a watch's reads are filed with: no input waits on them.
pub(super) const WATCH_TAG: u64 = u64::MAX;
/// The tool a watch reads with: a live card's own refresh, so a watch reads what the card reads, at its
/// cadence (`views/refresh.rs`).
const REFRESH: &str = "refresh_view";
/// A watch whose read failed and said nothing of when to ask again asks after this, as a card that could
/// not be read does (`views/refresh.rs` `ERROR_MS`).
const AFTER_FAILURE_MS: u64 = 60_000;
/// The `_meta` key a 2026-07-28 stream's messages name their subscription with.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Who hears of a watched resource's changes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Listener {
    /// The session (`resources/subscribe`): a notification tied to no input.
    Session,
    /// A `subscriptions/listen` stream (2026-07-28), by its request's id.
    Stream(Id),
}

/// A pull request: project, repository, id.
type Key = (String, String, u64);

#[derive(Debug)]
struct Watch {
    /// Each subscribed URI of the pull request, and who listens to it.
    heard: BTreeMap<String, BTreeSet<Listener>>,
    /// The fingerprint of the state last read, as `refresh_view` gives it (`hash.since`).
    drawn: Option<String>,
    /// Its own id: its timer and its reads are filed under it.
    id: Id,
    /// Its first read has answered: the state a change is told against is known (or could not be read).
    first_done: bool,
}

/// A request answered once the first read of each pull request it watches has answered, so that every
/// change after its answer is told (a change made while the first read is in flight would otherwise be
/// taken for the state subscribed to).
#[derive(Debug)]
struct Awaiting {
    /// The input it came with.
    tag: u64,
    /// `resources/subscribe` (answered `{}`), or a listen's acknowledgment to send.
    ack: Option<Value>,
    /// The pull requests whose first read it waits for.
    keys: BTreeSet<Key>,
}

/// A session's watches and open streams.
#[derive(Debug, Default)]
pub(super) struct Watches {
    by_pr: BTreeMap<Key, Watch>,
    by_id: BTreeMap<Id, Key>,
    /// Open `subscriptions/listen` requests: their input's tag.
    streams: BTreeMap<Id, u64>,
    /// Subscribes and listens waiting for their pull requests' first reads.
    awaiting: BTreeMap<Id, Awaiting>,
    next: u64,
}

impl Watches {
    /// Whether the input tagged `tag` is a stream still open.
    pub(super) fn holds_open(&self, tag: u64) -> bool {
        self.streams.values().any(|t| *t == tag) || self.awaiting.values().any(|a| a.tag == tag)
    }

    /// Whether `id` is a watch's own (its reads are no client's to cancel).
    pub(super) fn owns(&self, id: &Id) -> bool {
        self.by_id.contains_key(id)
    }

    /// The open streams' tags, for a closing session.
    pub(super) fn take_streams(&mut self) -> Vec<u64> {
        self.by_pr.clear();
        self.by_id.clear();
        let waiting = std::mem::take(&mut self.awaiting).into_values().map(|a| a.tag);
        std::mem::take(&mut self.streams).into_values().chain(waiting).collect()
    }
}

impl Session {
    /// The pull request a subscribable URI names, or why it cannot be watched (-32602, or not found).
    fn watchable(&self, id: &Id, uri: &str, stateless: bool, sh: &Shared) -> Result<Key, ErrorReply> {
        let refuse = |why: String| {
            let mut reply = ErrorReply::new(Some(id.clone()), INVALID_PARAMS, why);
            reply.data = Some(json!({"uri": uri}));
            reply
        };
        let Some(named) = uri::parse(uri) else {
            return Err(super::read::not_found(
                id,
                uri,
                stateless,
                ": bb tells changes of the pull request resources resources/templates/list gives.",
            ));
        };
        let pr = match named.what {
            What::PullRequest(id) | What::Diff(id) | What::Threads(id) => id,
            What::File { .. } | What::Commit(_) => {
                return Err(refuse(format!(
                    "Invalid params: bb tells changes of pull requests, their diffs and threads; `{}` does not change \
                     on its own (read it again when you need it).",
                    truncate(uri, 200)
                )));
            }
        };
        let exposed = self.exposed(sh);
        if exposed.kind("pull_request").is_none() || exposed.get(REFRESH).is_none() {
            return Err(refuse("Invalid params: this bb does not offer pull requests, so it watches none.".into()));
        }
        if let Some(scope) = &sh.config.scope
            && !scope.holds(&named.project, &named.repo)
        {
            return Err(refuse(format!(
                "Invalid params: `{}` is outside the repositories this bb works in ({}).",
                truncate(uri, 200),
                scope.words()
            )));
        }
        Ok((named.project, named.repo, pr))
    }

    /// `resources/subscribe` (before 2026-07-28): the session hears of `uri`'s changes from now on.
    pub(super) fn subscribe(&mut self, id: &Id, params: &Value, tag: u64, batch: bool, sh: &mut Shared) -> Answer {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return refused(id, "Invalid params: `resources/subscribe` needs a `uri`.".into());
        };
        let key = match self.watchable(id, uri, false, sh) {
            Ok(key) => key,
            Err(reply) => return Answer::Now(Err(reply)),
        };
        if !self.watch(key.clone(), uri, Listener::Session, sh) {
            return refused(id, format!("Invalid params: bb watches at most {MOST_WATCHED} pull requests a session."));
        }
        // Answered once the state subscribed to is known (a batch's answer cannot wait on it).
        if batch || self.watches.by_pr.get(&key).is_none_or(|w| w.first_done) {
            return Answer::Now(Ok(json!({})));
        }
        self.watches.awaiting.insert(id.clone(), Awaiting { tag, ack: None, keys: BTreeSet::from([key]) });
        Answer::Later
    }

    /// `resources/unsubscribe`: the session no longer hears of `uri` (nothing to undo is no error).
    pub(super) fn unsubscribe(&mut self, id: &Id, params: &Value, sh: &mut Shared) -> Answer {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return refused(id, "Invalid params: `resources/unsubscribe` needs a `uri`.".into());
        };
        self.unwatch(|u, l| u == uri && *l == Listener::Session, sh);
        Answer::Now(Ok(json!({})))
    }

    /// `subscriptions/listen` (2026-07-28): the request stays open as the stream its notifications go
    /// on, acknowledged first with what bb honours: the pull request resources it can watch (the lists
    /// never change while bb runs, so no list's change is ever sent).
    pub(super) fn listen(&mut self, id: &Id, params: &Value, tag: u64, sh: &mut Shared) -> Answer {
        let wanted = params.pointer("/notifications/resourceSubscriptions");
        let uris: Vec<&str> = match wanted {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(uris)) if uris.iter().all(Value::is_string) => {
                uris.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                return refused(
                    id,
                    "Invalid params: `notifications.resourceSubscriptions` must be an array of URIs.".into(),
                );
            }
        };
        self.watches.streams.insert(id.clone(), tag);
        let mut honoured: Vec<&str> = Vec::new();
        let mut keys = BTreeSet::new();
        let mut seen = BTreeSet::new();
        // Past the most a stream may watch, the rest are only counted: a request of thousands of URIs
        // costs no more than one of a hundred.
        let mut left_out = 0usize;
        for uri in uris {
            if !seen.insert(uri) {
                continue;
            }
            if self.watches.by_pr.len() >= MOST_WATCHED {
                left_out += 1;
                continue;
            }
            match self.watchable(id, uri, true, sh) {
                Ok(key) => {
                    if self.watch(key.clone(), uri, Listener::Stream(id.clone()), sh) {
                        honoured.push(uri);
                        keys.insert(key);
                    }
                }
                Err(why) => {
                    let shown = truncate(uri, 200);
                    self.log(Level::Debug, format!("listen: {shown} left out: {}", why.message), sh);
                }
            }
        }
        if left_out > 0 {
            self.log(Level::Info, format!("listen: {left_out} URI(s) left out past {MOST_WATCHED} pull requests"), sh);
        }
        let mut notifications = Map::new();
        if !honoured.is_empty() {
            notifications.insert("resourceSubscriptions".into(), json!(honoured));
        }
        let ack = jsonrpc::notification_value(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": {SUBSCRIPTION_ID: id.to_value()}, "notifications": notifications}),
        );
        // Acknowledged once the state listened to is known, so every change after the acknowledgment is told.
        keys.retain(|k| self.watches.by_pr.get(k).is_some_and(|w| !w.first_done));
        if keys.is_empty() {
            self.send(ack, Some(tag), sh);
        } else {
            self.watches.awaiting.insert(id.clone(), Awaiting { tag, ack: Some(ack), keys });
        }
        Answer::Later
    }

    /// Drops a subscribe still waiting for its first read (the client cancelled it): its subscription goes
    /// with it, unanswered.
    pub(super) fn cancel_awaiting(&mut self, id: &Id, sh: &mut Shared) -> bool {
        let Some(a) = self.watches.awaiting.remove(id) else { return false };
        if a.ack.is_none() {
            let keys = a.keys;
            let uris: BTreeSet<String> = self
                .watches
                .by_pr
                .iter()
                .filter(|(k, _)| keys.contains(*k))
                .flat_map(|(_, w)| w.heard.keys().cloned())
                .collect();
            self.unwatch(|u, l| uris.contains(u) && *l == Listener::Session, sh);
        }
        self.settle(a.tag, sh);
        true
    }

    /// The first read of `key` has answered (or its watch ended): the requests waiting only on it are
    /// answered now.
    fn first_read(&mut self, key: &Key, sh: &mut Shared) {
        let ready: Vec<Id> = self
            .watches
            .awaiting
            .iter_mut()
            .filter_map(|(id, a)| {
                a.keys.remove(key);
                a.keys.is_empty().then(|| id.clone())
            })
            .collect();
        for id in ready {
            let Some(a) = self.watches.awaiting.remove(&id) else { continue };
            match a.ack {
                Some(ack) => self.send(ack, Some(a.tag), sh),
                None => {
                    self.send(jsonrpc::result_value(&id, json!({})), Some(a.tag), sh);
                    self.settle(a.tag, sh);
                }
            }
        }
    }

    /// Ends the stream `id` (the client cancelled it): its watches go with it, unanswered.
    pub(super) fn end_stream(&mut self, id: &Id, sh: &mut Shared) -> bool {
        let Some(tag) = self.watches.streams.remove(id) else { return false };
        self.watches.awaiting.remove(id);
        let listener = Listener::Stream(id.clone());
        self.unwatch(|_, l| *l == listener, sh);
        self.settle(tag, sh);
        true
    }

    /// Adds `listener` to `uri` of the pull request `key`, reading it now when nobody watched it:
    /// `false` when the session already watches as many pull requests as it may.
    fn watch(&mut self, key: Key, uri: &str, listener: Listener, sh: &mut Shared) -> bool {
        if let Some(w) = self.watches.by_pr.get_mut(&key) {
            w.heard.entry(uri.to_owned()).or_default().insert(listener);
            return true;
        }
        if self.watches.by_pr.len() >= MOST_WATCHED {
            return false;
        }
        self.watches.next += 1;
        let Some(id) = Id::from_value(&json!(format!("bb/watch/{}", self.watches.next))) else { return false };
        let mut heard = BTreeMap::new();
        heard.insert(uri.to_owned(), BTreeSet::from([listener]));
        self.watches.by_id.insert(id.clone(), key.clone());
        self.watches.by_pr.insert(key, Watch { heard, drawn: None, id: id.clone(), first_done: false });
        self.read_watch(&id, sh);
        true
    }

    /// Takes away the listeners `gone` matches; a pull request nobody listens to any more is no longer
    /// read (its timer and reads are withdrawn).
    fn unwatch(&mut self, gone: impl Fn(&str, &Listener) -> bool, sh: &mut Shared) {
        let mut ended = Vec::new();
        for (key, w) in &mut self.watches.by_pr {
            for (uri, listeners) in &mut w.heard {
                listeners.retain(|l| !gone(uri, l));
            }
            w.heard.retain(|_, listeners| !listeners.is_empty());
            if w.heard.is_empty() {
                ended.push(key.clone());
            }
        }
        for key in ended {
            if let Some(w) = self.watches.by_pr.remove(&key) {
                self.watches.by_id.remove(&w.id);
                self.pending.remove(&w.id);
                sh.work.cancel_call(self.id, &w.id, &mut sh.out);
                self.first_read(&key, sh);
            }
        }
    }

    /// A watch's time has come: its pull request is read again.
    pub(crate) fn timer(&mut self, call: Id, sh: &mut Shared) {
        if self.watches.owns(&call) {
            self.read_watch(&call, sh);
        }
    }

    /// Reads the pull request watch `id` watches, as a card of it is read.
    fn read_watch(&mut self, id: &Id, sh: &mut Shared) {
        let Some(key) = self.watches.by_id.get(id).cloned() else { return };
        if self.pending.contains_key(id) {
            return;
        }
        let drawn = self.watches.by_pr.get(&key).and_then(|w| w.drawn.clone());
        let mut show = Map::new();
        show.insert("kind".into(), Value::from("pull_request"));
        show.insert("project".into(), Value::from(key.0.as_str()));
        show.insert("repo".into(), Value::from(key.1.as_str()));
        show.insert("pr_id".into(), Value::from(key.2));
        let mut args = Map::new();
        args.insert("show".into(), Value::Object(show));
        if let Some(drawn) = drawn {
            args.insert("fingerprint".into(), Value::from(drawn));
        }
        let exposed = self.exposed(sh);
        let Some(tool) = exposed.get(REFRESH).copied() else { return };
        // The card is read for nobody's screen: as a client that renders it would have it read.
        let mut client = self.client.clone();
        client.renders_views = true;
        let call = Call {
            client: &client,
            exposed: &exposed,
            now_ms: sh.now_ms,
            bitbucket_user: self.bitbucket_user.as_deref(),
            base_url: sh.config.base_url.as_deref(),
            highlight_templates: sh.config.highlight_templates,
            confirming: Confirming::Off,
            asks: sh.config.confirm,
            scope: sh.config.scope.as_deref(),
            spread: spread_of(self.principal.as_deref()),
        };
        match (tool.start)(&args, &call) {
            Step::Done(result) => self.watched(id, &result.into_value(), sh),
            // A card only reads; were it to ask, the watch would wait as an unreadable one does.
            Step::Ask(_) => self.watched(id, &json!({"isError": true}), sh),
            Step::Wait(plan) => self.read_later(id, plan, "a watch", WATCH_TAG, None, false, Dress::Watch, sh),
        }
    }

    /// What a watch's read answered (a card's result): a state other than the one last read is told
    /// to each listener, and the next read is timed as a live card's would be.
    pub(super) fn watched(&mut self, id: &Id, result: &Value, sh: &mut Shared) {
        let Some(key) = self.watches.by_id.get(id).cloned() else { return };
        let data = result.get("_meta").and_then(|m| m.get(VIEW_META_KEY));
        let read = data.and_then(|d| d.get("fingerprint")).and_then(Value::as_str).map(str::to_owned);
        // A read that failed, and said nothing of when to ask again: as a card that could not be read.
        let next = match data.map(|d| d.get("next")) {
            Some(Some(Value::Null)) => None,
            Some(Some(n)) => n.as_u64(),
            _ => Some(AFTER_FAILURE_MS),
        };
        let Some(w) = self.watches.by_pr.get_mut(&key) else { return };
        let was_first = !w.first_done;
        w.first_done = true;
        // The state is the fingerprint's hash; what follows its dot is since when it held.
        let hash = |f: &str| f.split('.').next().unwrap_or_default().to_owned();
        let changed = matches!((&w.drawn, &read), (Some(before), Some(now)) if hash(before) != hash(now));
        if let Some(now) = read {
            w.drawn = Some(now);
        }
        let heard: Vec<(String, Listener)> = if changed {
            w.heard.iter().flat_map(|(u, ls)| ls.iter().map(|l| (u.clone(), l.clone()))).collect()
        } else {
            Vec::new()
        };
        if let Some(next) = next {
            sh.work.ask_timer(self.id, id, sh.now_ms.saturating_add(next), &mut sh.out);
        }
        for (uri, listener) in heard {
            match listener {
                Listener::Session => {
                    let note = jsonrpc::notification_value("notifications/resources/updated", json!({"uri": uri}));
                    self.send(note, None, sh);
                }
                Listener::Stream(stream) => {
                    let Some(tag) = self.watches.streams.get(&stream).copied() else { continue };
                    let note = jsonrpc::notification_value(
                        "notifications/resources/updated",
                        json!({"_meta": {SUBSCRIPTION_ID: stream.to_value()}, "uri": uri}),
                    );
                    self.send(note, Some(tag), sh);
                }
            }
        }
        if changed {
            self.log(Level::Debug, format!("{}/{} #{} changed: told its subscribers", key.0, key.1, key.2), sh);
        }
        if was_first {
            self.first_read(&key, sh);
        }
    }
}

fn refused(id: &Id, why: String) -> Answer {
    Answer::Now(Err(ErrorReply::new(Some(id.clone()), INVALID_PARAMS, why)))
}
