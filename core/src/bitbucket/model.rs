//! Bitbucket's JSON, as bb reads it: every field optional, unknown fields ignored.
//!
//! Shapes: reference "Conventions", "Pull requests", "Activity", "Diff and changes", "Builds",
//! "Required builds" [spec][rec]. The spec misses PR `author`/`properties` and activity
//! `comment`/`commentAnchor`; real responses carry them [rec], so they are read here.

use serde::Deserialize;
use serde_json::Value;

/// A user: `{name, emailAddress, id, displayName, active, slug, type}`. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct User {
    /// `name`: the login name, which Bitbucket's request bodies take for a user (`reviewers[{user{name}}]`);
    /// for a commit's author, the git author's name.
    pub name: Option<String>,
    /// `slug`: the name in URLs (`/users/{slug}/avatar.png`), and the handle bb shows and tools take back.
    pub slug: Option<String>,
    /// `displayName`: the full name ("Jane Doe"); [`User::label`] writes it before the handle.
    pub display_name: Option<String>,
    /// NORMAL or SERVICE. [spec]
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

impl User {
    /// The short handle the model passes back to tools: the slug, else the name.
    pub fn handle(&self) -> &str {
        self.slug.as_deref().or(self.name.as_deref()).unwrap_or("?")
    }

    /// `Display Name (slug)`, or just the handle when the two are the same or the name is missing.
    pub fn label(&self) -> String {
        match self.display_name.as_deref() {
            Some(d) if !d.is_empty() && d != self.handle() => format!("{d} ({})", self.handle()),
            _ => self.handle().to_owned(),
        }
    }
}

/// A participant: `{user, role, approved, status, lastReviewedCommit?}`. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(from = "ParticipantJson")]
pub struct Participant {
    /// `user`: the person; a participant sent without one holds an empty user, whose handle is `?`.
    pub user: User,
    /// UNAPPROVED, NEEDS_WORK or APPROVED; APPROVED too for a Stash-era `approved: true` without a status.
    pub status: Option<String>,
    /// The source commit they last reviewed ("Since 8.9.18, 8.19.7, 9.0.1, 9.1"). [reference "Pull requests": spec]
    pub last_reviewed_commit: Option<String>,
}

/// A participant as sent: Stash-era servers say `approved: true|false` and no `status`. [reference "Older servers": rec]
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ParticipantJson {
    user: User,
    status: Option<String>,
    approved: Option<bool>,
    last_reviewed_commit: Option<String>,
}

impl From<ParticipantJson> for Participant {
    fn from(p: ParticipantJson) -> Participant {
        let approved = (p.approved == Some(true)).then(|| "APPROVED".to_owned());
        Participant { user: p.user, status: p.status.or(approved), last_reviewed_commit: p.last_reviewed_commit }
    }
}

/// A project: `{key, name}`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Project {
    /// `key`: what URLs name the project by (`/projects/{key}`), and the first half of `KEY/slug`.
    pub key: Option<String>,
}

/// A repository: `{slug, id, name, project}`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Repository {
    /// `slug`: what URLs name the repository by (`/repos/{slug}`); its display `name` may differ.
    pub slug: Option<String>,
    /// The numeric id (default reviewers need it).
    pub id: Option<u64>,
    /// `project` (`{key, name}`): only its key is read.
    pub project: Option<Project>,
}

impl Repository {
    /// `KEY/slug`.
    pub fn full_name(&self) -> String {
        let key = self.project.as_ref().and_then(|p| p.key.as_deref()).unwrap_or("?");
        format!("{key}/{}", self.slug.as_deref().unwrap_or("?"))
    }
}

/// A pull request end: `{id, displayId, latestCommit, type, repository}`. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(from = "RefJson")]
pub struct Ref {
    /// The full ref (`refs/heads/main`).
    pub id: Option<String>,
    /// `displayId`: the short name (`main` for `refs/heads/main`). [reference "Conventions": rec]
    pub display_id: Option<String>,
    /// The commit the ref points at (`latestChangeset` before 4.0).
    pub latest_commit: Option<String>,
    /// The repository the ref lives in: for a pull request from a fork, the source's differs from the target's.
    pub repository: Option<Repository>,
}

/// A ref as sent: before 4.0 its commit is `latestChangeset`; later servers may send both. [reference "Older servers": rec]
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RefJson {
    id: Option<String>,
    display_id: Option<String>,
    latest_commit: Option<String>,
    latest_changeset: Option<String>,
    repository: Option<Repository>,
}

impl From<RefJson> for Ref {
    fn from(r: RefJson) -> Ref {
        let latest_commit = r.latest_commit.or(r.latest_changeset);
        Ref { id: r.id, display_id: r.display_id, latest_commit, repository: r.repository }
    }
}

impl Ref {
    /// The branch's short name.
    pub fn name(&self) -> &str {
        self.display_id.as_deref().or(self.id.as_deref()).unwrap_or("?")
    }
}

/// `properties.mergeResult`. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct MergeResult {
    /// CLEAN, CONFLICTED or UNKNOWN.
    pub outcome: Option<String>,
}

/// A pull request's `properties`; each may be absent. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Properties {
    /// `mergeResult` (`{outcome, current}`): only the outcome is read.
    pub merge_result: Option<MergeResult>,
    /// Open tasks.
    pub open_task_count: Option<u64>,
    /// Resolved tasks.
    pub resolved_task_count: Option<u64>,
    /// Comments (absent means 0 on recorded open PRs). [rec]
    pub comment_count: Option<u64>,
    /// `mergeCommit` (`{id, displayId}`): the commit a merged pull request was merged in (Bitbucket 7+). [assumed]
    pub merge_commit: Option<CommitRef>,
}

/// A pull request. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PullRequest {
    /// Its id within the target repository.
    pub id: Option<u64>,
    /// Its version, for the merge's version check.
    pub version: Option<u64>,
    /// `title`: the line that lists and cards lead with.
    pub title: Option<String>,
    /// The description (absent when empty).
    pub description: Option<String>,
    /// OPEN, MERGED or DECLINED.
    pub state: Option<String>,
    /// A draft (8.18+).
    pub draft: Option<bool>,
    /// Created, epoch ms.
    pub created_date: Option<i64>,
    /// Updated, epoch ms.
    pub updated_date: Option<i64>,
    /// Closed, epoch ms.
    pub closed_date: Option<i64>,
    /// `fromRef`: the branch with the changes; its `latestCommit` is the commit whose builds bb reads.
    pub from_ref: Option<Ref>,
    /// `toRef`: the branch it merges into; its repository is the one the pull request belongs to.
    pub to_ref: Option<Ref>,
    /// `author`: a participant with role AUTHOR (not a bare user); the spec leaves it out, real responses carry it.
    pub author: Option<Participant>,
    /// `reviewers`: participants with role REVIEWER; each one's `status` is their vote.
    pub reviewers: Vec<Participant>,
    /// Other participants.
    pub participants: Vec<Participant>,
    /// Counts and merge outcome.
    pub properties: Option<Properties>,
    /// `links.self[0].href`: the pull request's page. [reference "Conventions": rec]
    pub links: Option<Links>,
}

/// Bitbucket's comment and task counts of a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Open tasks.
    pub open_tasks: u64,
    /// Resolved tasks.
    pub resolved_tasks: u64,
    /// Comments.
    pub comments: u64,
}

impl PullRequest {
    /// Bitbucket's counts: `None` when the pull request has no `properties` at all (Bitbucket said nothing about
    /// them); inside `properties`, an absent count is a zero (Bitbucket leaves out `commentCount` when there are
    /// none). [reference "Pull requests", "Older servers": rec]
    pub fn counts(&self) -> Option<Counts> {
        let p = self.properties.as_ref()?;
        Some(Counts {
            open_tasks: p.open_task_count.unwrap_or(0),
            resolved_tasks: p.resolved_task_count.unwrap_or(0),
            comments: p.comment_count.unwrap_or(0),
        })
    }

    /// The commit a merged pull request was merged in (`properties.mergeCommit`): `None` for any other, or when
    /// Bitbucket does not say (before 7.0).
    pub fn merge_commit(&self) -> Option<&CommitRef> {
        if self.state.as_deref() != Some("MERGED") {
            return None;
        }
        self.properties.as_ref()?.merge_commit.as_ref().filter(|c| c.id.is_some() || c.display_id.is_some())
    }

    /// Whether Bitbucket's `properties.mergeResult` says the branches conflict.
    pub fn conflicted(&self) -> bool {
        self.properties.as_ref().and_then(|p| p.merge_result.as_ref()).and_then(|m| m.outcome.as_deref())
            == Some("CONFLICTED")
    }
}

impl CommitRef {
    /// The short hash Bitbucket shows (`displayId`, else the full hash's first 11 characters).
    pub fn short(&self) -> &str {
        let id = self.id.as_deref().map(|id| id.get(..11).unwrap_or(id));
        self.display_id.as_deref().or(id).unwrap_or("?")
    }
}

/// `links`: `{self: [{href}]}`. [reference "Conventions": rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Links {
    /// The object's own pages.
    #[serde(rename = "self")]
    pub own: Vec<Href>,
}

impl Links {
    /// The first `self` link.
    pub fn href(&self) -> Option<&str> {
        self.own.first().and_then(|h| h.href.as_deref())
    }
}

/// One link.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Href {
    pub href: Option<String>,
}

/// A comment's anchor. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Anchor {
    /// `path`: the file's path in the repository (`src/lib.rs`), for file and line comments alike.
    pub path: Option<String>,
    /// The line (absent for a file comment).
    pub line: Option<u64>,
    /// ADDED, REMOVED or CONTEXT.
    pub line_type: Option<String>,
    /// Whether the line is no longer in the diff (outdated). [rec]
    pub orphaned: Option<bool>,
    /// FROM (the old file's side) or TO. [spec]
    pub file_type: Option<String>,
    /// The commit the new side was at when the comment was written. [spec][rec]
    pub to_hash: Option<String>,
    /// The first line of a multi-line comment; `line` is its last. [a peer's recorded DC response types; assumed
    /// beyond them]
    pub multiline_marker: Option<MultilineMarker>,
}

impl Anchor {
    /// The lines the anchor covers, first and last, when it is on a line: `from..=line` for a multi-line comment
    /// whose first line is on the same side, else the one line.
    pub fn lines(&self) -> Option<(u64, u64)> {
        let last = self.line?;
        // The first line counts when it is on the same side of the diff: REMOVED lines are the old file's,
        // ADDED and CONTEXT lines the new file's (a range may start on a context line and end on an added one).
        let old_side = |t: Option<&str>| t == Some("REMOVED");
        let first = self
            .multiline_marker
            .as_ref()
            .filter(|m| {
                m.start_line_type.is_none()
                    || old_side(m.start_line_type.as_deref()) == old_side(self.line_type.as_deref())
            })
            .and_then(|m| m.start_line)
            .filter(|&f| f >= 1 && f <= last)
            .unwrap_or(last);
        Some((first, last))
    }
}

/// `multilineMarker`: where a comment on several lines starts. [assumed: a peer's recorded DC types]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MultilineMarker {
    /// The first line's number, on the side its type is on.
    pub start_line: Option<u64>,
    /// ADDED, REMOVED or CONTEXT.
    pub start_line_type: Option<String>,
}

/// A comment, with its replies. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Comment {
    /// Its id.
    pub id: Option<u64>,
    /// Its version, which an update must send. [spec]
    pub version: Option<u64>,
    /// `text`: Markdown, as its author wrote it.
    pub text: Option<String>,
    /// `author`: a bare user (a pull request's author is a participant).
    pub author: Option<User>,
    /// Created, epoch ms.
    pub created_date: Option<i64>,
    /// Last edited, epoch ms.
    pub updated_date: Option<i64>,
    /// Replies, recursively.
    pub comments: Vec<Comment>,
    /// Where it sits.
    pub anchor: Option<Anchor>,
    /// NORMAL, or BLOCKER for a task (7.0+).
    pub severity: Option<String>,
    /// OPEN, PENDING or RESOLVED.
    pub state: Option<String>,
    /// Whether its thread is resolved.
    pub thread_resolved: Option<bool>,
    /// Who resolved it. [rec]
    pub resolver: Option<User>,
    /// Its tasks, on a server before 7.0, where tasks were not comments. [reference "Older servers": rec]
    pub tasks: Vec<OldTask>,
    /// Its `properties` (`repositoryId` [rec], the suggestions applied [assumed]).
    pub properties: Option<CommentProperties>,
}

/// A comment's `properties`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CommentProperties {
    /// The indexes of its ```` ```suggestion ```` blocks that were applied. [assumed: Bitbucket's page marks an
    /// applied suggestion and offers no Apply again, but where its REST answers record that is not public; bb and
    /// the stand-in read it here, reference `bitbucket-dc.md` "Suggestions"]
    pub applied_suggestions: Vec<u64>,
}

impl Comment {
    /// Whether its suggestion `index` was applied (see [`CommentProperties::applied_suggestions`]).
    pub fn applied(&self, index: u64) -> bool {
        self.properties.as_ref().is_some_and(|p| p.applied_suggestions.contains(&index))
    }

    /// Whether it is a draft of a review: `state: PENDING`, seen only by its author (7.7+). Comment reads carry
    /// no `pending` flag (a peer found none on 10.4.3); the state says it. [javadoc AddCommentRequest.isPending]
    pub fn is_pending(&self) -> bool {
        self.state.as_deref() == Some("PENDING")
    }

    /// Whether this comment is a task.
    /// Runs `scrub` over its text and its replies' (see [`crate::DiffAnswer::scrub`]).
    pub fn scrub(&mut self, scrub: &impl Fn(&str) -> Option<String>) {
        if let Some(clean) = self.text.as_deref().and_then(scrub) {
            self.text = Some(clean);
        }
        for reply in &mut self.comments {
            reply.scrub(scrub);
        }
    }

    pub fn is_task(&self) -> bool {
        self.severity.as_deref() == Some("BLOCKER")
    }
}

/// A task of the old kind (before 7.0): an entry of its comment's `tasks`, with an id of its own (not a comment
/// id: update_pr_comment cannot resolve it). [reference "Older servers": rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OldTask {
    /// Its id, among tasks.
    pub id: Option<u64>,
    /// `text`: Markdown, as its author wrote it.
    pub text: Option<String>,
    /// OPEN or RESOLVED.
    pub state: Option<String>,
    /// Who wrote it.
    pub author: Option<User>,
    /// Created, epoch ms.
    pub created_date: Option<i64>,
}

impl OldTask {
    /// Whether it is resolved.
    pub fn resolved(&self) -> bool {
        self.state.as_deref() == Some("RESOLVED")
    }
}

/// One activity; unknown actions are tolerated. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Activity {
    /// Its id.
    pub id: Option<u64>,
    /// When, epoch ms.
    pub created_date: Option<i64>,
    /// `user`: who acted (commented, approved, merged, …).
    pub user: Option<User>,
    /// What (COMMENTED, APPROVED, ...).
    pub action: Option<String>,
    /// ADDED, EDITED, DELETED or REPLIED, for COMMENTED.
    pub comment_action: Option<String>,
    /// The comment, for COMMENTED.
    pub comment: Option<Comment>,
    /// The anchor with `orphaned`, for file and line comments.
    pub comment_anchor: Option<Anchor>,
    /// RESCOPED: the commits added, `{commits, total}`. [rec]
    pub added: Option<CommitsChanged>,
    /// RESCOPED: the commits removed, `{commits, total}`. [rec]
    pub removed: Option<CommitsChanged>,
    /// UPDATED: reviewers added. [rec]
    pub added_reviewers: Vec<User>,
    /// UPDATED: reviewers removed. [rec]
    pub removed_reviewers: Vec<User>,
    /// MERGED: the merge commit, `{id, displayId}`. [rec]
    pub commit: Option<CommitRef>,
    /// COMMENTED on a line: the diff of what the comment is anchored to, which Bitbucket's overview draws above
    /// it (`PullRequestCommentActivity.getDiff`, 5.0+: reference "Activity"). [spec; its lines assumed]
    pub diff: Option<Diff>,
}

/// The commits a RESCOPED activity added or removed: Bitbucket's `total`, and the ones it lists. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct CommitsChanged {
    /// How many, as Bitbucket counts them.
    pub total: Option<u64>,
    /// The commits it lists (possibly fewer than `total`).
    pub commits: Vec<Value>,
}

/// A commit as an activity names it: `{id, displayId}`. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CommitRef {
    /// The full hash.
    pub id: Option<String>,
    /// The short hash Bitbucket shows.
    pub display_id: Option<String>,
}

/// Bitbucket's merge check: `GET …/pull-requests/{id}/merge` → `{canMerge, conflicted, outcome, vetoes}`. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MergeCheck {
    /// Whether Bitbucket would merge it now.
    pub can_merge: Option<bool>,
    /// Whether the branches conflict.
    pub conflicted: Option<bool>,
    /// CLEAN, CONFLICTED or UNKNOWN.
    pub outcome: Option<String>,
    /// Why not, each from a merge check or a plugin, in Bitbucket's words.
    pub vetoes: Vec<Veto>,
}

/// One reason Bitbucket will not merge. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Veto {
    /// The short form ("Not enough approvals").
    pub summary_message: Option<String>,
    /// The sentence ("You need 2 more approvals before this pull request can be merged.").
    pub detailed_message: Option<String>,
}

/// A path: `{toString, components, name, extension}`. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Path {
    /// `toString`: the components joined with `/` (`src/lib.rs`); bb reads no other part of a path.
    #[serde(rename = "toString")]
    pub whole: Option<String>,
}

/// `properties` of a change.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ChangeProperties {
    /// Comments on the file. [assumed]
    pub active_comments: Option<u64>,
}

/// One changed file of a pull request. [rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Change {
    /// `path`: where the file is after the change; older servers may leave it out (see [`Change::named_path`]).
    pub path: Option<Path>,
    /// Where it came from (MOVE, COPY).
    pub src_path: Option<Path>,
    /// ADD, MODIFY, DELETE, MOVE or COPY.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Comment counts.
    pub properties: Option<ChangeProperties>,
    /// Present when the file conflicts between the branches: `{ourChange, theirChange}`. [spec: RestChange.conflict]
    pub conflict: Option<Value>,
}

impl Change {
    /// The file's path (`?` when Bitbucket gave none).
    pub fn path(&self) -> &str {
        self.named_path().unwrap_or("?")
    }

    /// The file's path, when Bitbucket gave one: a change without it is never asked for as a path.
    /// [reference "Older servers": rec]
    pub fn named_path(&self) -> Option<&str> {
        self.path.as_ref().and_then(|p| p.whole.as_deref()).filter(|p| !p.is_empty())
    }
}

/// A diff answer: `{fromHash, toHash, contextLines, whitespace, diffs[], truncated}`. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct DiffSet {
    /// `diffs`: one per file; the per-file diff bb asks for holds one, and only the first is read.
    pub diffs: Vec<Diff>,
    /// Whether Bitbucket cut it.
    pub truncated: Option<bool>,
    /// `contextLines`: the lines of context Bitbucket put around each change (any JSON: read as a count
    /// only when it is one).
    #[serde(rename = "contextLines")]
    pub context_lines: Option<Value>,
}

/// One file's diff. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Diff {
    /// The old file (null when added).
    pub source: Option<Path>,
    /// The new file (null when deleted).
    pub destination: Option<Path>,
    /// `hunks`, in file order; none when there is no text change to show.
    pub hunks: Vec<Hunk>,
    /// Whether Bitbucket cut it.
    pub truncated: Option<bool>,
    /// A binary file.
    pub binary: Option<bool>,
    /// The root comments drawn on its lines (each line's `commentIds` names which). [assumed: with `withComments=true`]
    pub line_comments: Vec<Comment>,
    /// The comments on the file as a whole. [assumed: with `withComments=true`]
    pub file_comments: Vec<Comment>,
    /// Lines Bitbucket sent that bb did not keep: past the share of the call that read them.
    #[serde(skip)]
    pub left_out: usize,
    /// The lines of context around each change, from the answer the diff came in (its `contextLines`)
    /// when that is a count: a last hunk with fewer after its last change ends where the file ends.
    #[serde(skip)]
    pub context_lines: Option<u64>,
}

impl Diff {
    /// Runs `scrub` over the text of every line and comment (see [`crate::DiffAnswer::scrub`]).
    pub fn scrub(&mut self, scrub: &impl Fn(&str) -> Option<String>) {
        let lines = self.hunks.iter_mut().flat_map(|h| &mut h.segments).flat_map(|s| &mut s.lines);
        for text in lines.filter_map(|l| l.line.as_mut()) {
            if let Some(clean) = scrub(text) {
                *text = clean;
            }
        }
        for c in self.line_comments.iter_mut().chain(&mut self.file_comments) {
            c.scrub(scrub);
        }
    }
}

/// A hunk. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Hunk {
    /// The enclosing code's first line.
    pub context: Option<String>,
    /// First old line.
    pub source_line: Option<u64>,
    /// Old lines.
    pub source_span: Option<u64>,
    /// First new line.
    pub destination_line: Option<u64>,
    /// New lines.
    pub destination_span: Option<u64>,
    /// `segments`: the hunk's lines in order, as runs of ADDED, REMOVED and CONTEXT lines.
    pub segments: Vec<Segment>,
    /// Whether Bitbucket cut it.
    pub truncated: Option<bool>,
}

/// A run of lines of one kind. [spec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Segment {
    /// ADDED, REMOVED or CONTEXT.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The lines, as many as the decode's share keeps ([`super::budget`]).
    #[serde(deserialize_with = "super::budget::lines")]
    pub lines: Vec<Line>,
    /// Whether Bitbucket cut it.
    pub truncated: Option<bool>,
}

/// A diff line. [spec][rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Line {
    /// Old line number.
    pub source: Option<u64>,
    /// New line number.
    pub destination: Option<u64>,
    /// `line`: the line's text, without its newline or a `+`/`-` sign.
    pub line: Option<String>,
    /// Root comments Bitbucket draws on this line. [rec]
    pub comment_ids: Vec<u64>,
    /// Whether Bitbucket cut the line.
    pub truncated: Option<bool>,
}

/// A build status (legacy or UI listing). [spec][rec; UI shape assumed]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Build {
    /// SUCCESSFUL, FAILED, INPROGRESS, CANCELLED or UNKNOWN.
    pub state: Option<String>,
    /// `key`: the build's identity (Bamboo: `PROJ-PLAN123`); a build without a `parent` counts under it for
    /// required builds. [reference "Builds": assumed]
    pub key: Option<String>,
    /// `name`: a label for people; bb writes it beside the key when the two differ, and the key when it is absent.
    pub name: Option<String>,
    /// `url`: the build's page on the CI server that reported it.
    pub url: Option<String>,
    /// `description`: the CI server's own words about the run.
    pub description: Option<String>,
    /// The key it reports under for required builds (UI listing only). [assumed]
    pub parent: Option<String>,
    /// The build number (a string or a number).
    pub build_number: Option<Value>,
    /// Test results `{successful, failed, skipped}`.
    pub test_results: Option<Value>,
    /// How long it ran, ms (UI listing). [assumed]
    pub duration: Option<u64>,
    /// The ref it ran for (UI listing). [assumed]
    #[serde(rename = "ref")]
    pub ref_id: Option<String>,
    /// When it was reported, epoch ms.
    pub date_added: Option<i64>,
}

impl Build {
    /// What the required-builds check reads of this build.
    pub fn facts(&self) -> crate::requirements::BuildFacts {
        crate::requirements::BuildFacts {
            key: self.key.clone().unwrap_or_default(),
            parent: self.parent.clone(),
            state: self.state.clone().unwrap_or_else(|| "UNKNOWN".into()),
            ref_id: self.ref_id.clone(),
            date: self.date_added,
        }
    }
}

/// Build stats of a commit. [spec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BuildStats {
    /// Successful builds.
    pub successful: Option<u64>,
    /// Failed builds.
    pub failed: Option<u64>,
    /// Running builds.
    pub in_progress: Option<u64>,
    /// Cancelled builds.
    pub cancelled: Option<u64>,
    /// Builds in an unknown state.
    pub unknown: Option<u64>,
}

/// A ref matcher: `{id, displayId, type{id, name}}`. [spec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Matcher {
    /// The id (a ref, a pattern, a category).
    pub id: Option<String>,
    /// `displayId`: the matcher as Bitbucket writes it; bb's sentence about a condition uses it, else the id.
    pub display_id: Option<String>,
    /// `type` (`{id, name}`): which kind of matcher, and so how `id` reads.
    #[serde(rename = "type")]
    pub kind: Option<MatcherType>,
}

/// A matcher's type.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct MatcherType {
    /// ANY_REF, BRANCH, PATTERN, MODEL_CATEGORY or MODEL_BRANCH.
    pub id: Option<String>,
}

/// A required-builds condition. [spec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    /// Its id.
    pub id: Option<u64>,
    /// The keys that must have a successful build.
    pub build_parent_keys: Vec<String>,
    /// The target branches it applies to.
    pub ref_matcher: Option<Matcher>,
    /// The source branches it exempts.
    pub exempt_ref_matcher: Option<Matcher>,
}

/// A commit: `{id, displayId, author{name, emailAddress}, authorTimestamp, committer, committerTimestamp, message,
/// parents[{id, displayId}]}`. [reference "Projects, …": spec, rec]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Commit {
    /// The full hash.
    pub id: Option<String>,
    /// The short hash Bitbucket shows.
    pub display_id: Option<String>,
    /// Who wrote it (a git identity; `name` and `emailAddress`, sometimes a Bitbucket user).
    pub author: Option<User>,
    /// When it was written, epoch ms.
    pub author_timestamp: Option<i64>,
    /// `message`: the whole message, subject line first; lists show only that line.
    pub message: Option<String>,
    /// Its parents (two or more for a merge).
    pub parents: Vec<CommitRef>,
}
