//! A pull request's comment threads (`show` kind `threads`, list_pr_comments' answer): every thread in any state,
//! newest activity first, each drawn as Bitbucket's overview activity draws a comment — its replies, task,
//! resolved and pending marks, its author's avatar, and for a line comment the few diff lines leading to it,
//! from the activity's own `diff` — with Bitbucket's counts, and each thread opening the diff in place at its line.
//!
//! ADR-101 did not choose "a view of a pull request's comments of its own" (a person reads a comment where it was
//! written, and threads gathered apart from the diff and the activity read as a mess). This kind stays as near to
//! where they were written as a list of them can: it is the overview's activity with only its comments, each line
//! comment under the lines it was written on as the activity shows them, and one click from its place in the diff.
//!
//! Requests: the pull request (its title, state and Bitbucket's comment and task counts) and the newest page of
//! its activity, in parallel; older pages one at a time while there are more, up to [`MAX_PAGES`]; then the
//! avatars not cached yet. Bounded as the diff view is: at most [`limits::VIEW_THREADS`] threads and
//! [`limits::VIEW_THREADS_BYTES`] of them; the view says how many it left out, and why.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::Header;
use super::card::comment;
use crate::bitbucket::RawPage;
use crate::bitbucket::model::{Activity, Comment, Diff, PullRequest};
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::limits;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, AvatarStage, People};
use crate::reads::pull_request;
use crate::text::short;
use crate::tool::Call;

/// The kind's name.
pub const KIND: &str = "threads";
/// Activities read per page.
const PAGE_LIMIT: u64 = 100;
/// Pages of activity read at most (500 activities); past them the view says older threads are in Bitbucket.
pub const MAX_PAGES: usize = 5;
/// Characters of a diff line kept above a comment.
const LINE_CHARS: usize = 500;

/// The reads of a threads view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadsRead {
    /// The pull request: its header and Bitbucket's counts.
    PullRequest,
    /// A page of its activity, newest first (the n-th read).
    Activity(usize),
    /// An avatar of someone a thread names.
    Avatar(Avatar),
}

/// The view reads every thread up to its bound: list_pr_comments' paging and its drafts-only list are not its
/// arguments (a draft is drawn in its thread, marked pending, as Bitbucket draws it to its author).
pub fn args_schema(schema: &mut Value) {
    if let Some(p) = schema["properties"].as_object_mut() {
        for k in ["start", "limit", "drafts"] {
            p.remove(k);
        }
    }
}

/// Starts a threads view of `project`/`repo`/`pr_id`.
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let first = vec![
        (ThreadsRead::PullRequest, pull_request::request(&project, &repo, id)),
        (ThreadsRead::Activity(0), pull_request::activity_request(&project, &repo, id, 0, PAGE_LIMIT)),
    ];
    let view = Threads {
        header: Header::new(KIND, args, call),
        base_url: call.base_url.map(str::to_owned),
        project,
        repo,
        id,
        pr: None,
        you: call.bitbucket_user.map(str::to_owned),
        activities: Vec::new(),
        reading: true,
        more: false,
        avatars: AvatarStage::default(),
        people: People::default(),
        missing: Vec::new(),
        built: None,
    };
    Step::wait(view, first)
}

#[derive(Debug)]
struct Threads {
    header: Header,
    base_url: Option<String>,
    project: String,
    repo: String,
    id: u64,
    pr: Option<PullRequest>,
    /// Whom bb acts as (`X-AUSERNAME`), for the "Mine" filter.
    you: Option<String>,
    /// The activities read, newest first.
    activities: Vec<Activity>,
    /// Whether a page of activity is still to come.
    reading: bool,
    /// Whether Bitbucket has older activity than was read.
    more: bool,
    avatars: AvatarStage,
    people: People,
    missing: Vec<String>,
    /// The view's data and its text's counts, once everything but the avatars is read.
    built: Option<(Value, Said)>,
}

/// What the model is told of the threads drawn.
#[derive(Debug, Clone, Copy)]
struct Said {
    shown: usize,
    left_out: usize,
}

impl Plan for Threads {
    type Read = ThreadsRead;

    fn on(
        &mut self,
        read: ThreadsRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, ThreadsRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            ThreadsRead::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => {
                    if let FetchOutcome::Response(r) = &outcome
                        && let Some(user) = &r.user
                    {
                        self.you = Some(user.clone());
                    }
                    self.pr = Some(pr);
                }
                Err(e) => return Some(self.header.error(e, Some(self.page_url()).filter(|_| self.base_url.is_some()))),
            },
            ThreadsRead::Activity(n) => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => {
                    let page = p.decode::<Activity>();
                    self.activities.extend(page.values);
                    match page.next {
                        Some(start) if n + 1 < MAX_PAGES => {
                            let q =
                                pull_request::activity_request(&self.project, &self.repo, self.id, start, PAGE_LIMIT);
                            f.fetch(ThreadsRead::Activity(n + 1), q);
                        }
                        next => {
                            self.more = next.is_some();
                            self.reading = false;
                        }
                    }
                }
                // The newest page is the view; an older page that fails leaves the view with what was read.
                Err(e) if n == 0 => {
                    return Some(self.header.error(e, Some(self.page_url()).filter(|_| self.base_url.is_some())));
                }
                Err(e) => {
                    self.missing.push(format!("Older activity: not read — {e}"));
                    self.more = true;
                    self.reading = false;
                }
            },
            ThreadsRead::Avatar(a) => self.avatars.on(a, &outcome, f),
        }
        if f.waiting() > 0 || self.reading {
            return None;
        }
        let pr = self.pr.clone()?;
        if self.built.is_none() {
            self.built = Some(self.view(&pr));
        }
        if self.avatars.ask(&self.people, f, ThreadsRead::Avatar) {
            return None;
        }
        let (view, said) = self.built.take()?;
        let now = f.now_ms();
        let users = self.people.to_value(&f.avatars(), now, self.base_url.as_deref());
        Some(self.header.result(self.summary(&pr, said), users, self.missing.clone(), (KIND, view)))
    }
}

impl Threads {
    /// The pull request's page in Bitbucket.
    fn page_url(&self) -> String {
        pull_request::page_url(self.base_url.as_deref().unwrap_or(""), &self.project, &self.repo, self.id)
    }

    /// The short text for the model.
    fn summary(&self, pr: &PullRequest, said: Said) -> String {
        let counts = pr.counts().map_or(String::new(), |c| {
            format!(
                "; Bitbucket counts {} comment{}, {} open task{}",
                c.comments,
                if c.comments == 1 { "" } else { "s" },
                c.open_tasks,
                if c.open_tasks == 1 { "" } else { "s" }
            )
        });
        let left = match (said.left_out, self.more) {
            (0, false) => String::new(),
            (0, true) => "; older threads are in Bitbucket".into(),
            (n, _) => format!("; {n} more not drawn, in Bitbucket"),
        };
        format!(
            "Showing the comment threads of PR #{} \"{}\" in {}/{} to the person: {} thread{}, newest activity first{counts}{left}.",
            self.id,
            short(pr.title.as_deref().unwrap_or(""), 80),
            self.project,
            self.repo,
            said.shown,
            if said.shown == 1 { "" } else { "s" },
        )
    }

    /// The view's data (`threads` in VIEW_DATA.md), noting everyone it names.
    fn view(&mut self, pr: &PullRequest) -> (Value, Said) {
        let base = self.base_url.clone();
        let found = gather(&self.activities);
        let total = found.len();
        let (threads, cut) =
            bounded(found, base.as_deref(), &mut self.people, (limits::VIEW_THREADS, limits::VIEW_THREADS_BYTES));
        let base = base.as_deref();
        let you = self.you.as_deref().map(|name| {
            // X-AUSERNAME is a user name; the view names people by slug.
            let people = pr.author.iter().chain(&pr.reviewers).chain(&pr.participants);
            people
                .map(|p| &p.user)
                .find(|u| u.name.as_deref() == Some(name))
                .and_then(|u| u.slug.clone())
                .unwrap_or_else(|| name.to_owned())
        });
        if let Some(a) = &pr.author {
            self.people.note(&a.user);
        }
        let shown = threads.len();
        let view = json!({
            "id": pr.id.unwrap_or(self.id),
            "title": pr.title.as_deref().unwrap_or(""),
            "url": pr.links.as_ref().and_then(|l| l.href()),
            "project": self.project,
            "repo": self.repo,
            "state": pr.state.as_deref().unwrap_or("OPEN"),
            "updated": pr.updated_date,
            "you": you,
            "source": super::card::branch(pr.from_ref.as_ref(), base),
            "target": super::card::branch(pr.to_ref.as_ref(), base),
            "counts": super::counts(pr),
            "threads": threads,
            "found": total,
            "cut": {"count": cut.count, "bytes": cut.bytes},
            "more": self.more,
        });
        (view, Said { shown, left_out: cut.count + cut.bytes })
    }
}

/// Threads left out of a view: past its count, and past its bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Cut {
    count: usize,
    bytes: usize,
}

/// The threads `found` as the view draws them, in order, while they fit `most` (a count and bytes of view data), as
/// a diff view's lines are bounded; those past either are left out and counted, and name nobody in `people`.
fn bounded(found: Vec<Found<'_>>, base: Option<&str>, people: &mut People, most: (usize, usize)) -> (Vec<Value>, Cut) {
    let (mut threads, mut bytes, mut cut) = (Vec::new(), 0usize, Cut::default());
    for t in found {
        if threads.len() >= most.0 {
            cut.count += 1;
            continue;
        }
        // Drawn with a list of people of its own first: a thread past the byte budget names nobody in the view.
        let mut named = People::default();
        let mut value = comment(t.root, t.orphaned, &mut named, base, 0);
        value["threadResolved"] = json!(t.root.thread_resolved == Some(true));
        let resolver = t.root.resolver.as_ref().map(|u| named.note(u));
        let thread = json!({
            "at": t.at,
            "reply": t.reply,
            "comment": value,
            "resolver": resolver,
            "lines": t.diff.and_then(|d| lines_before(d, t.root)).map_or(Value::Null, Value::Array),
        });
        let size = serde_json::to_string(&thread).map_or(0, |s| s.len());
        if bytes + size > most.1 {
            cut.bytes += 1;
            continue;
        }
        bytes += size;
        people.merge(named);
        threads.push(thread);
    }
    (threads, cut)
}

/// A thread found in the activity: its root (as the newest activity naming it carries it), when its newest
/// activity was, whether its root is a reply whose thread began before the activity read, whether it is outdated,
/// and the diff its activity carries.
#[derive(Debug)]
struct Found<'a> {
    root: &'a Comment,
    at: Option<i64>,
    reply: bool,
    orphaned: bool,
    diff: Option<&'a Diff>,
}

/// The threads of `activities` (newest first), newest activity first, each once: a thread surfaces in several
/// activities (added, replied to, edited), and a reply's activity carries the reply, which is drawn inside its
/// thread. A deleted comment's thread is not drawn [reference "Activity": rec].
fn gather(activities: &[Activity]) -> Vec<Found<'_>> {
    let commented = || {
        activities
            .iter()
            .filter(|a| a.action.as_deref() == Some("COMMENTED") && a.comment_action.as_deref() != Some("DELETED"))
    };
    // Every comment inside another's replies; the rest are roots (or replies whose thread was not read).
    let mut inside = BTreeSet::new();
    for c in commented().filter_map(|a| a.comment.as_ref()) {
        let mut stack: Vec<&Comment> = c.comments.iter().collect();
        while let Some(r) = stack.pop() {
            inside.extend(r.id);
            stack.extend(r.comments.iter());
        }
    }
    // Each root's tree, from the newest activity carrying it, and which root each comment belongs to.
    let mut roots: BTreeMap<u64, &Activity> = BTreeMap::new();
    let mut root_of: BTreeMap<u64, u64> = BTreeMap::new();
    for a in commented() {
        let Some(c) = a.comment.as_ref() else { continue };
        let Some(id) = c.id.filter(|id| !inside.contains(id)) else { continue };
        if roots.contains_key(&id) {
            continue;
        }
        roots.insert(id, a);
        let mut stack = vec![c];
        while let Some(x) = stack.pop() {
            if let Some(i) = x.id {
                root_of.insert(i, id);
            }
            stack.extend(x.comments.iter());
        }
    }
    let mut out: Vec<Found<'_>> = Vec::new();
    let mut placed = BTreeSet::new();
    for a in commented() {
        let Some(root) = a.comment.as_ref().and_then(|c| c.id).and_then(|id| root_of.get(&id)).copied() else {
            continue;
        };
        if !placed.insert(root) {
            continue;
        }
        let Some(carrier) = roots.get(&root) else { continue };
        let Some(c) = carrier.comment.as_ref() else { continue };
        // The lines are the root's own activity's (added or edited); a reply's activity carries none.
        let diff =
            commented().filter(|x| x.comment.as_ref().and_then(|c| c.id) == Some(root)).find_map(|x| x.diff.as_ref());
        let orphaned = commented()
            .filter(|x| x.comment.as_ref().and_then(|c| c.id) == Some(root))
            .find_map(|x| x.comment_anchor.as_ref().and_then(|an| an.orphaned))
            .unwrap_or(false);
        // Only replies' activities name it: its own (ADDED) is older than what was read.
        let reply = commented()
            .filter(|x| x.comment.as_ref().and_then(|c| c.id) == Some(root))
            .all(|x| x.comment_action.as_deref() == Some("REPLIED"));
        let mut found = Found { root: c, at: a.created_date, reply, orphaned, diff };
        if found.root.anchor.is_none() {
            // A root's activity names its anchor beside it when the comment leaves it out.
            found.orphaned |= carrier.comment_anchor.as_ref().and_then(|an| an.orphaned).unwrap_or(false);
        }
        out.push(found);
    }
    out
}

/// The diff lines leading to `root`'s line, as its activity carries them: the line Bitbucket marks with the
/// comment's id (else the anchor's line, of its type), and up to [`limits::THREAD_DIFF_LINES`] − 1 before it in
/// its hunk. Each `{t, o, n, s}`: ADDED, REMOVED or CONTEXT, the old and new numbers (null on the side the line
/// is not on), the text (cut).
fn lines_before(diff: &Diff, root: &Comment) -> Option<Vec<Value>> {
    let anchor = root.anchor.as_ref()?;
    let line = anchor.line?;
    let kind = anchor.line_type.as_deref().unwrap_or("CONTEXT");
    let old_side = kind == "REMOVED" || anchor.file_type.as_deref() == Some("FROM");
    for hunk in &diff.hunks {
        let lines: Vec<(&str, &crate::bitbucket::model::Line)> = hunk
            .segments
            .iter()
            .flat_map(|s| s.lines.iter().map(move |l| (s.kind.as_deref().unwrap_or("CONTEXT"), l)))
            .collect();
        let marked = lines.iter().position(|(_, l)| root.id.is_some_and(|id| l.comment_ids.contains(&id)));
        let at = marked.or_else(|| {
            lines
                .iter()
                .position(|(k, l)| *k == kind && (if old_side { l.source } else { l.destination }) == Some(line))
        });
        if let Some(at) = at {
            let from = (at + 1).saturating_sub(limits::THREAD_DIFF_LINES);
            return Some(
                lines[from..=at]
                    .iter()
                    .map(|(k, l)| {
                        // A line has a number only on the side it is on, as the diff view draws it.
                        let o = if *k == "ADDED" { None } else { l.source };
                        let n = if *k == "REMOVED" { None } else { l.destination };
                        json!({"t": k, "o": o, "n": n,
                               "s": short(l.line.as_deref().unwrap_or(""), LINE_CHARS)})
                    })
                    .collect(),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{Cut, bounded, gather, lines_before};
    use crate::bitbucket::model::{Activity, Diff};
    use crate::reads::avatars::People;
    use serde_json::json;

    fn activities(v: serde_json::Value) -> Vec<Activity> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_thread_is_drawn_once_at_its_newest_activity_with_its_replies_inside() {
        let acts = activities(json!([
            {"id": 3, "action": "COMMENTED", "commentAction": "REPLIED", "createdDate": 30,
             "comment": {"id": 11, "text": "reply"}},
            {"id": 2, "action": "COMMENTED", "commentAction": "ADDED", "createdDate": 20,
             "comment": {"id": 20, "text": "general"}},
            {"id": 1, "action": "COMMENTED", "commentAction": "ADDED", "createdDate": 10,
             "comment": {"id": 10, "text": "root", "comments": [{"id": 11, "text": "reply"}]}},
            {"id": 0, "action": "COMMENTED", "commentAction": "DELETED", "createdDate": 5,
             "comment": {"id": 30, "text": "gone"}},
        ]));
        let found = gather(&acts);
        let ids: Vec<_> = found.iter().map(|f| (f.root.id, f.at, f.reply)).collect();
        assert_eq!(ids, vec![(Some(10), Some(30), false), (Some(20), Some(20), false)]);
    }

    #[test]
    fn threads_past_the_count_or_the_bytes_are_left_out_and_counted_naming_nobody() {
        let acts = activities(json!(
            (0..6)
                .map(|i| json!({"id": 10 - i, "action": "COMMENTED", "commentAction": "ADDED",
            "createdDate": 100 - i, "user": {"slug": format!("u{i}")},
            "comment": {"id": 100 + i, "author": {"slug": format!("u{i}"), "name": format!("u{i}")},
                        "text": if i == 1 { "x".repeat(4000) } else { "short".into() }}}))
                .collect::<Vec<_>>()
        ));
        let mut people = People::default();
        let (drawn, cut) = bounded(gather(&acts), None, &mut people, (4, 2500));
        let ids: Vec<_> = drawn.iter().map(|t| t["comment"]["id"].as_u64().unwrap()).collect();
        // The long second thread does not fit the bytes; the fourth that fits is the count's last.
        assert_eq!(ids, [100, 102, 103, 104]);
        assert_eq!(cut, Cut { count: 1, bytes: 1 });
        let users = people.to_value(&crate::avatar_cache::AvatarCache::default(), 0, None);
        assert!(users.get("u1").is_none() && users.get("u5").is_none() && users.get("u0").is_some(), "{users}");
    }

    #[test]
    fn a_reply_whose_thread_began_before_the_activity_read_is_drawn_as_a_reply() {
        let acts = activities(json!([
            {"id": 3, "action": "COMMENTED", "commentAction": "REPLIED", "createdDate": 30,
             "comment": {"id": 11, "text": "reply"}},
        ]));
        let found = gather(&acts);
        assert_eq!(found.len(), 1);
        assert!(found[0].reply);
    }

    #[test]
    fn a_line_comment_comes_with_the_lines_leading_to_it_ending_at_its_line() {
        let diff: Diff = serde_json::from_value(json!({"hunks": [{"segments": [
            {"type": "CONTEXT", "lines": [{"source": 1, "destination": 1, "line": "a"}, {"source": 2, "destination": 2, "line": "b"},
                                           {"source": 3, "destination": 3, "line": "c"}, {"source": 4, "destination": 4, "line": "d"}]},
            {"type": "ADDED", "lines": [{"source": 5, "destination": 5, "line": "e"}, {"source": 5, "destination": 6, "line": "f", "commentIds": [7]},
                                         {"source": 5, "destination": 7, "line": "g"}]}]}]}))
        .unwrap();
        let root: crate::bitbucket::model::Comment =
            serde_json::from_value(json!({"id": 7, "anchor": {"path": "x", "line": 6, "lineType": "ADDED"}})).unwrap();
        let lines = lines_before(&diff, &root).unwrap();
        let text: Vec<_> = lines.iter().map(|l| l["s"].as_str().unwrap()).collect();
        assert_eq!(text, ["b", "c", "d", "e", "f"]);
        assert_eq!(lines[4]["t"], "ADDED");
        // Not marked by Bitbucket: found by the anchor's line of its type.
        let unmarked: crate::bitbucket::model::Comment =
            serde_json::from_value(json!({"id": 8, "anchor": {"path": "x", "line": 2, "lineType": "CONTEXT"}}))
                .unwrap();
        let text: Vec<_> =
            lines_before(&diff, &unmarked).unwrap().iter().map(|l| l["s"].as_str().unwrap().to_owned()).collect();
        assert_eq!(text, ["a", "b"]);
    }
}
