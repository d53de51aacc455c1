//! The JSON shapes Bitbucket answers with: users, projects, repositories, refs, pull requests, comments,
//! activities, commits and builds.
//!
//! Sources: reference "Conventions" and "Pull requests" [rec]: times in epoch ms, `links.self` an array of `{href}`,
//! `avatarUrl` only when the request asks with `avatarSize`, `description` absent when empty, `properties` with
//! `mergeResult`, task counts, `commentCount` (absent when 0) and a merged one's `mergeCommit`.

use crate::model::*;
use serde_json::{Value, json};

/// What a rendering depends on besides the model: the base URL for links and the avatar size asked for.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Base URL without a trailing slash (context path included).
    pub base_url: String,
    /// `avatarSize` from the request, if any.
    pub avatar_size: Option<u32>,
    /// The context path (`""` or `/bitbucket`), for relative avatar URLs.
    pub context_path: String,
    /// Who is asking (a slug), if anyone: a draft comment is drawn for its author only ([`Comment::seen_by`]).
    pub viewer: Option<String>,
}

impl View {
    /// Whether this view shows the comment (published, or a draft of the viewer's).
    pub fn sees(&self, c: &Comment) -> bool {
        c.seen_by(self.viewer.as_deref())
    }
}

fn link(href: String) -> Value {
    json!([{ "href": href }])
}

/// A user.
pub fn user(v: &View, u: &User) -> Value {
    let mut out = json!({
        "name": u.slug,
        "emailAddress": u.email,
        "id": u.id,
        "displayName": u.display_name,
        "active": true,
        "slug": u.slug,
        "type": if u.service { "SERVICE" } else { "NORMAL" },
        "links": { "self": link(format!("{}/users/{}", v.base_url, u.slug)) },
    });
    if let Some(size) = v.avatar_size {
        // Relative, as recorded responses have it [rec]; `v` is a version stamp.
        out["avatarUrl"] = json!(format!("{}/users/{}/avatar.png?s={size}&v=1", v.context_path, u.slug));
    }
    out
}

/// A user by slug; an unknown slug renders as a bare name (a deleted account).
pub fn user_by_slug(v: &View, m: &Model, slug: &str) -> Value {
    match m.user(slug) {
        Some(u) => user(v, u),
        None => {
            json!({ "name": slug, "slug": slug, "displayName": slug, "active": false, "type": "NORMAL" })
        }
    }
}

/// A project.
pub fn project(v: &View, p: &Project) -> Value {
    let mut out = json!({
        "key": p.key,
        "id": p.id,
        "name": p.name,
        "public": false,
        "type": "NORMAL",
        "links": { "self": link(format!("{}/projects/{}", v.base_url, p.key)) },
    });
    if !p.description.is_empty() {
        out["description"] = json!(p.description);
    }
    out
}

/// A repository (with its origin, for a fork).
pub fn repo(v: &View, m: &Model, r: &Repo) -> Value {
    let project_json = m.projects.get(&r.key.0).map(|p| project(v, p)).unwrap_or(json!({ "key": r.key.0 }));
    let (host, path) = split_host(&v.base_url);
    let mut out = json!({
        "slug": r.key.1,
        "id": r.id,
        "name": r.name,
        "hierarchyId": format!("{:020x}", r.id),
        "scmId": "git",
        "state": "AVAILABLE",
        "statusMessage": "Available",
        "forkable": true,
        "public": false,
        "archived": false,
        "project": project_json,
        "links": {
            "clone": [
                { "href": format!("{}/scm/{}/{}.git", v.base_url, r.key.0.to_ascii_lowercase(), r.key.1), "name": "http" },
                { "href": format!("ssh://git@{host}:7999{path}/{}/{}.git", r.key.0.to_ascii_lowercase(), r.key.1), "name": "ssh" },
            ],
            "self": link(format!("{}/projects/{}/repos/{}/browse", v.base_url, r.key.0, r.key.1)),
        },
    });
    if let Some(origin) = r.fork_of.as_ref().and_then(|k| m.repos.get(k)) {
        out["origin"] = repo(v, m, origin);
    }
    out
}

fn split_host(base: &str) -> (String, String) {
    let rest = base.split_once("://").map(|(_, r)| r).unwrap_or(base);
    let (hostport, path) = rest.split_once('/').map(|(h, p)| (h, format!("/{p}"))).unwrap_or((rest, String::new()));
    (hostport.split(':').next().unwrap_or(hostport).to_string(), path)
}

/// A pull request end: `{id, displayId, latestCommit, type, repository}`.
pub fn pr_ref(v: &View, m: &Model, r: &RefKey, commit: &str) -> Value {
    let repository = m.repos.get(&r.repo).map(|x| repo(v, m, x)).unwrap_or(Value::Null);
    json!({
        "id": r.id(),
        "displayId": r.branch,
        "latestCommit": commit,
        "type": "BRANCH",
        "repository": repository,
    })
}

/// A participant: `{user, role, approved, status, lastReviewedCommit?}`.
pub fn participant(v: &View, m: &Model, p: &Participant, role: &str) -> Value {
    let mut out = json!({
        "user": user_by_slug(v, m, &p.user),
        "role": role,
        "approved": p.status == "APPROVED",
        "status": p.status,
    });
    if let Some(c) = &p.last_reviewed {
        out["lastReviewedCommit"] = json!(c);
    }
    out
}

/// The open tasks of a pull request, as its `openTaskCount` says and the merge check counts them: before 7.0 a task
/// with no parent is a plain comment; a draft (PENDING) task is no one's yet.
pub fn open_task_count(m: &Model, pr: &PullRequest) -> usize {
    let legacy = !m.version_at_least(7, 0);
    pr.comments
        .values()
        .filter(|c| c.severity == "BLOCKER" && !(legacy && c.parent.is_none()) && c.is_open_task())
        .count()
}

/// A pull request.
pub fn pull_request(v: &View, m: &Model, pr: &PullRequest) -> Value {
    // Before 7.0 a task hangs on a comment, so a task with no parent is served as a plain comment
    // ([`comment`]) and counted as one, as the page that shows it counts it.
    let legacy = !m.version_at_least(7, 0);
    let task = |c: &&crate::model::Comment| c.severity == "BLOCKER" && !(legacy && c.parent.is_none());
    let open_tasks = open_task_count(m, pr);
    let resolved_tasks = pr.comments.values().filter(|c| task(c) && c.is_resolved_task()).count();
    // Drafts are counted for nobody, their author included. [assumed]
    let comments = pr.comments.values().filter(|c| !c.deleted && !c.is_pending() && !task(c)).count();
    let mut properties = json!({
        "mergeResult": { "outcome": if pr.conflicted { "CONFLICTED" } else { "CLEAN" }, "current": true },
        "openTaskCount": open_tasks,
        "resolvedTaskCount": resolved_tasks,
    });
    if comments > 0 {
        properties["commentCount"] = json!(comments);
    }
    // A merged pull request names the commit it was merged in. [assumed: Bitbucket 7+]
    if let (PrState::Merged, Some(c)) = (pr.state, pr.merge_commit.as_deref()) {
        properties["mergeCommit"] = json!({ "id": c, "displayId": c.get(..11).unwrap_or(c) });
    }
    let mut out = json!({
        "id": pr.id,
        "version": pr.version,
        "title": pr.title,
        "state": pr.state.name(),
        "open": pr.state == PrState::Open,
        "closed": pr.state != PrState::Open,
        "draft": pr.draft,
        "createdDate": pr.created,
        "updatedDate": pr.updated,
        "fromRef": pr_ref(v, m, &pr.from, &pr.from_commit),
        "toRef": pr_ref(v, m, &pr.to, &pr.to_commit),
        "locked": pr.locked,
        "author": participant(v, m, &Participant { user: pr.author.clone(), status: "UNAPPROVED".into(), last_reviewed: None }, "AUTHOR"),
        "reviewers": pr.reviewers.iter().map(|p| participant(v, m, p, "REVIEWER")).collect::<Vec<_>>(),
        "participants": pr.participants.iter().map(|p| participant(v, m, p, "PARTICIPANT")).collect::<Vec<_>>(),
        "properties": properties,
        "links": { "self": link(format!("{}/projects/{}/repos/{}/pull-requests/{}", v.base_url, pr.to.repo.0, pr.to.repo.1, pr.id)) },
    });
    if !pr.description.is_empty() {
        out["description"] = json!(pr.description);
    }
    if let Some(c) = pr.closed {
        out["closedDate"] = json!(c);
    }
    out
}

/// A comment with its visible replies, recursively (a draft reply only for its author).
///
/// A server before 7.0 (`application.version`) writes the older shape: a task is not a comment but an entry of
/// its comment's `tasks` array, `{id, text, state: OPEN|RESOLVED, author, createdDate}`, and comments carry no
/// `severity`, `state` or `threadResolved`. So a task reply is served in its parent's `tasks`, and a task with no
/// parent (which such a server could not have) reads as a plain comment. [reference "Older servers": rec]
pub fn comment(v: &View, m: &Model, pr: &PullRequest, c: &Comment) -> Value {
    let legacy = !m.version_at_least(7, 0);
    let children = || pr.comments.values().filter(|r| r.parent == Some(c.id) && !r.deleted && v.sees(r));
    let replies: Vec<Value> =
        children().filter(|r| !(legacy && r.severity == "BLOCKER")).map(|r| comment(v, m, pr, r)).collect();
    let mut out = json!({
        "id": c.id,
        "version": c.version,
        "text": c.text,
        "author": user_by_slug(v, m, &c.author),
        "createdDate": c.created,
        "updatedDate": c.updated,
        "comments": replies,
    });
    if let Some(a) = &c.anchor {
        out["anchor"] = anchor(a, pr);
    }
    if legacy {
        let tasks: Vec<Value> = children()
            .filter(|r| r.severity == "BLOCKER")
            .map(|t| {
                json!({"id": t.id, "text": t.text, "state": if t.state == "RESOLVED" { "RESOLVED" } else { "OPEN" },
                       "author": user_by_slug(v, m, &t.author), "createdDate": t.created,
                       "permittedOperations": { "editable": true, "transitionable": true, "deletable": true }})
            })
            .collect();
        out["tasks"] = json!(tasks);
        out["permittedOperations"] = json!({ "editable": true, "deletable": true });
        return out;
    }
    out["severity"] = json!(c.severity);
    out["state"] = json!(c.state);
    out["threadResolved"] = json!(c.thread_resolved);
    out["properties"] = json!({ "repositoryId": m.repos.get(&pr.to.repo).map(|r| r.id).unwrap_or(0) });
    if !c.applied.is_empty() {
        // [assumed] see `api::suggestions`: the suggestions of this comment that were applied.
        out["properties"]["appliedSuggestions"] = json!(c.applied);
    }
    out["permittedOperations"] = json!({ "editable": true, "transitionable": true, "deletable": true });
    if let Some(r) = &c.resolver {
        out["resolver"] = user_by_slug(v, m, r);
    }
    if let Some(d) = c.resolved_date {
        out["resolvedDate"] = json!(d);
    }
    out
}

/// An anchor as stored, completed with the diff's hashes and `diffType` the way Bitbucket returns it.
fn anchor(a: &Value, pr: &PullRequest) -> Value {
    let mut out = a.clone();
    if let Some(o) = out.as_object_mut() {
        o.entry("diffType").or_insert(json!("EFFECTIVE"));
        o.entry("fromHash").or_insert(json!(pr.to_commit));
        o.entry("toHash").or_insert(json!(pr.from_commit));
        o.entry("orphaned").or_insert(json!(false));
    }
    out
}

/// An activity, with its comment (and anchor) for COMMENTED.
pub fn activity(v: &View, m: &Model, pr: &PullRequest, a: &Activity) -> Value {
    let mut out = json!({
        "id": a.id,
        "createdDate": a.created,
        "user": user_by_slug(v, m, &a.user),
        "action": a.action,
    });
    if let Some(c) = a.comment_id.and_then(|id| pr.comments.get(&id)) {
        out["comment"] = comment(v, m, pr, c);
        if let Some(anc) = &c.anchor {
            out["commentAnchor"] = anchor(anc, pr);
        }
    }
    if let Some(ca) = &a.comment_action {
        out["commentAction"] = json!(ca);
    }
    if let (Some(o), Some(extra)) = (out.as_object_mut(), a.extra.as_object()) {
        for (k, val) in extra {
            o.insert(k.clone(), val.clone());
        }
    }
    out
}

/// A commit.
pub fn commit(v: &View, m: &Model, c: &Commit) -> Value {
    // A commit's author is the git author (`name`, `emailAddress`); where Bitbucket matches it to one of its users
    // by e-mail it answers that user whole (`displayName`, `slug`, `id`, …) beside the address [rec: recorded
    // commit answers of DC servers].
    let person = match m.user(&c.author) {
        Some(u) => {
            let mut p = user(v, u);
            p["emailAddress"] = json!(u.email);
            p
        }
        None => {
            json!({ "name": c.author, "emailAddress": format!("{}@example.invalid", c.author) })
        }
    };
    json!({
        "id": c.id,
        "displayId": &c.id[..11.min(c.id.len())],
        "author": person,
        "authorTimestamp": c.at,
        "committer": person,
        "committerTimestamp": c.at,
        "message": c.message,
        "parents": c.parents.iter().map(|p| json!({ "id": p, "displayId": &p[..11.min(p.len())] })).collect::<Vec<_>>(),
    })
}

/// A build as the UI listing returns it (with ref, parent, number, duration and test results when known).
pub fn build_full(b: &Build) -> Value {
    let mut out = build_legacy(b);
    if let Some(r) = &b.ref_id {
        out["ref"] = json!(r);
    }
    if let Some(p) = &b.parent {
        out["parent"] = json!(p);
    }
    if let Some(n) = &b.build_number {
        out["buildNumber"] = json!(n);
    }
    if let Some(d) = b.duration {
        out["duration"] = json!(d);
    }
    if let Some(t) = &b.test_results {
        out["testResults"] = t.clone();
    }
    out
}

/// A build as the legacy listing returns it: no ref, no parent. [spec]
pub fn build_legacy(b: &Build) -> Value {
    json!({
        "state": b.state,
        "key": b.key,
        "name": b.name,
        "url": b.url,
        "description": b.description,
        "dateAdded": b.date_added,
    })
}
