//! The stack's in-memory Bitbucket: users, projects, repositories, pull requests and builds, and the logical
//! clock that stamps every write so a run is reproducible.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One entry of a commit's file tree: a text file's lines, a binary file's bytes, or a submodule's commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A text file, as its lines without their newlines (shared between the commits that hold it).
    Text(Arc<Vec<String>>),
    /// A binary file's bytes.
    Binary(Arc<Vec<u8>>),
    /// A submodule (a gitlink): the commit id it points at.
    Submodule(String),
}

impl Entry {
    /// A text entry from lines.
    pub fn text(lines: Vec<String>) -> Entry {
        Entry::Text(Arc::new(lines))
    }

    /// The same content: shared storage first, then the bytes.
    pub fn same(&self, other: &Entry) -> bool {
        match (self, other) {
            (Entry::Text(a), Entry::Text(b)) => Arc::ptr_eq(a, b) || a == b,
            (Entry::Binary(a), Entry::Binary(b)) => Arc::ptr_eq(a, b) || a == b,
            (a, b) => a == b,
        }
    }

    /// Size in bytes as a checkout holds it (text lines each end with a newline; a submodule has none).
    pub fn size(&self) -> usize {
        match self {
            Entry::Text(l) => l.iter().map(|x| x.len() + 1).sum(),
            Entry::Binary(b) => b.len(),
            Entry::Submodule(_) => 0,
        }
    }
}

/// A commit's files: path (no leading slash) → entry. Shared between commits until one changes it.
pub type Tree = Arc<BTreeMap<String, Entry>>;

/// A repository's identity: project key and repository slug.
pub type RepoKey = (String, String);

/// Everything the stack serves, as plain data.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// The logical clock (epoch ms): each write takes the next second, so runs are deterministic.
    pub clock: i64,
    /// What `application-properties` answers.
    pub application: Value,
    /// Slug of the user whose token the binary prints.
    pub default_user: String,
    /// Users by slug.
    pub users: BTreeMap<String, User>,
    /// Projects by key.
    pub projects: BTreeMap<String, Project>,
    /// Repositories by (project key, slug).
    pub repos: BTreeMap<RepoKey, Repo>,
    /// Pull requests by (target repository, id).
    pub prs: BTreeMap<(RepoKey, u64), PullRequest>,
    /// Build statuses, in the order they were posted.
    pub builds: Vec<Build>,
    /// The next comment id (ids are global, as Bitbucket's are).
    pub next_comment_id: u64,
    /// The last activity id handed out: [`Model::activity_id`] adds one first; a seed starts it at 5000.
    pub next_activity_id: u64,
    /// Code search answers as a server without a search index does (`/_stack/search`, `--no-search`).
    pub search_off: bool,
    /// Code Insights reports, in the order they were posted.
    pub reports: Vec<Report>,
    /// Code Insights annotations, in the order they were posted.
    pub annotations: Vec<Annotation>,
    /// The insights paths answer 404, as a server without Code Insights (before 5.15) does (`/_stack/insights`).
    pub insights_off: bool,
    /// The OAuth 2.0 provider: incoming links, consents, codes and grants ([`crate::grants`]).
    pub oauth: crate::grants::Provider,
}

/// A Code Insights report on a commit. [reference "Code Insights": spec]
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The repository it was posted to.
    pub repo: RepoKey,
    /// The commit it reports on.
    pub commit: String,
    /// Its key, unique per commit.
    pub key: String,
    /// Its JSON as served (`title`, `result`, `reporter`, `link`, `details`, `data`, `createdDate`), without `key`.
    pub json: Value,
}

/// A Code Insights annotation of a report. [reference "Code Insights": spec]
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// The repository of its report.
    pub repo: RepoKey,
    /// The commit of its report.
    pub commit: String,
    /// Its report's key.
    pub report: String,
    /// Its JSON as served (`path`, `line`, `message`, `severity`, `type`, `link`, `externalId`), without `reportKey`.
    pub json: Value,
}

/// A user account.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    /// URL-safe name, also the login name.
    pub slug: String,
    /// The numeric `id` the user's JSON carries; the stack itself finds users by slug.
    pub id: u64,
    /// `displayName`: the full name ("Jane Doe").
    pub display_name: String,
    /// E-mail address.
    pub email: String,
    /// A service (bot) account rather than a person.
    pub service: bool,
    /// Password for basic authentication.
    pub password: String,
    /// Personal access token for bearer (or basic) authentication.
    pub token: String,
    /// The colour of the square `/users/{slug}/avatar.png` serves.
    pub colour: [u8; 3],
}

/// A project.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// Key (upper case).
    pub key: String,
    /// The numeric `id` the project's JSON carries; URLs name the project by its key.
    pub id: u64,
    /// The display `name`, which may differ from the key.
    pub name: String,
    /// Description, possibly empty.
    pub description: String,
}

/// A repository with its git objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Repo {
    /// Project key and slug.
    pub key: RepoKey,
    /// The numeric `id` the repository's JSON carries (bb asks default reviewers by it; the stack does
    /// not check it).
    pub id: u64,
    /// The display `name`, which may differ from the slug.
    pub name: String,
    /// The repository this one was forked from, served as its `origin`; a fork starts with the origin's
    /// commits and branches.
    pub fork_of: Option<RepoKey>,
    /// Short name of the default branch.
    pub default_branch: String,
    /// Commits by id.
    pub commits: BTreeMap<String, Commit>,
    /// Branch heads: short name → commit id.
    pub branches: BTreeMap<String, String>,
    /// Tags by short name.
    pub tags: BTreeMap<String, Tag>,
    /// The branching model as Bitbucket returns it, if the repository has one.
    pub branch_model: Option<Value>,
    /// Required-build conditions as Bitbucket returns them.
    pub conditions: Vec<Value>,
    /// Default reviewer conditions.
    pub default_reviewers: Vec<DefaultReviewers>,
    /// The report keys the Code Insights merge check requires to pass on every pull request into the repository.
    pub required_reports: Vec<String>,
    /// The repository's auto-merge setting (8.15+; off unless the seed turns it on, as on Bitbucket).
    pub auto_merge: bool,
    /// Each commit's file tree, for the commits that carry one of their own; any other commit has its first
    /// parent's tree with its subject added to `CHANGELOG.md` (`trees::tree_of`).
    pub trees: BTreeMap<String, Tree>,
}

/// A commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// 40 hex digits.
    pub id: String,
    /// The whole message; its first line is the subject.
    pub message: String,
    /// Author's slug.
    pub author: String,
    /// Author and committer time.
    pub at: i64,
    /// Parent ids.
    pub parents: Vec<String>,
}

/// A tag.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    /// Short name.
    pub name: String,
    /// Commit it points at.
    pub commit: String,
    /// Annotation message, for annotated tags.
    pub message: Option<String>,
}

/// A default reviewer condition: who is suggested for which branch pair.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultReviewers {
    /// Condition id.
    pub id: u64,
    /// Matcher over the source ref.
    pub source: Value,
    /// Matcher over the target ref.
    pub target: Value,
    /// Reviewer slugs.
    pub reviewers: Vec<String>,
    /// Approvals required.
    pub required_approvals: u64,
}

/// A pull request state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrState {
    /// Open (drafts are open too).
    Open,
    /// Merged.
    Merged,
    /// Declined.
    Declined,
}

impl PrState {
    /// Bitbucket's name for the state.
    pub fn name(self) -> &'static str {
        match self {
            PrState::Open => "OPEN",
            PrState::Merged => "MERGED",
            PrState::Declined => "DECLINED",
        }
    }

    /// The state Bitbucket names so (upper case), if any.
    pub fn parse(s: &str) -> Option<PrState> {
        match s.to_ascii_uppercase().as_str() {
            "OPEN" => Some(PrState::Open),
            "MERGED" => Some(PrState::Merged),
            "DECLINED" => Some(PrState::Declined),
            _ => None,
        }
    }
}

/// One end of a pull request: a branch of a repository.
#[derive(Debug, Clone, PartialEq)]
pub struct RefKey {
    /// The repository the branch is in: for a pull request from a fork, the source's differs from the target's.
    pub repo: RepoKey,
    /// Short branch name.
    pub branch: String,
}

impl RefKey {
    /// The full ref id, `refs/heads/<branch>`.
    pub fn id(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }
}

/// A reviewer or participant of a pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct Participant {
    /// User slug.
    pub user: String,
    /// UNAPPROVED, NEEDS_WORK or APPROVED.
    pub status: String,
    /// `lastReviewedCommit`; a seed sets the source commit for anyone whose status is not UNAPPROVED, or the
    /// source commit its `lastReviewed` names.
    pub last_reviewed: Option<String>,
}

/// A pull request with its comments, activity and diff.
#[derive(Debug, Clone, PartialEq)]
pub struct PullRequest {
    /// Id within the target repository.
    pub id: u64,
    /// Optimistic-lock version.
    pub version: u64,
    /// `title`, served whole however long (a seed's `titlePadTo` makes a 100 KB one).
    pub title: String,
    /// Description (empty means absent).
    pub description: String,
    /// Open, merged or declined; `closed` is set once it is not open.
    pub state: PrState,
    /// `draft`: the merge check vetoes a draft, and `?draft=` filters on it.
    pub draft: bool,
    /// Served as `locked`; nothing in the stack acts on it.
    pub locked: bool,
    /// Created (epoch ms).
    pub created: i64,
    /// Updated (epoch ms).
    pub updated: i64,
    /// Closed (epoch ms), once merged or declined.
    pub closed: Option<i64>,
    /// Source branch.
    pub from: RefKey,
    /// Target branch.
    pub to: RefKey,
    /// `fromRef.latestCommit`: the source branch's head, moved by a push (a rescope); seeded builds are its.
    pub from_commit: String,
    /// `toRef.latestCommit`: the target branch's head.
    pub to_commit: String,
    /// Author slug.
    pub author: String,
    /// The participants served with role REVIEWER; each one's `status` is their vote.
    pub reviewers: Vec<Participant>,
    /// Participants that are not reviewers.
    pub participants: Vec<Participant>,
    /// Whether merging would conflict.
    pub conflicted: bool,
    /// Merge check vetoes besides conflicts (`{summaryMessage, detailedMessage}`).
    pub vetoes: Vec<Value>,
    /// The changed files the pull request declares, in their order: `…/changes` lists the paths that differ
    /// between the trees in this order (MOVE and COPY as declared), then any other in path order. Their hunks
    /// are not kept: every diff is computed from the trees (`trees`).
    pub files: Vec<FileDiff>,
    /// Comments by id (replies point at their parent).
    pub comments: BTreeMap<u64, Comment>,
    /// Activities in the order they happened.
    pub activities: Vec<Activity>,
    /// The merge commit, once merged.
    pub merge_commit: Option<String>,
    /// A request to merge once every check passes (8.15+).
    pub auto_merge: Option<AutoMerge>,
}

/// A pull request's auto-merge request, as `GET …/auto-merge` answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoMerge {
    /// Who asked.
    pub user: String,
    /// When (epoch ms).
    pub created: i64,
    /// The source commit it was asked for.
    pub from_hash: String,
    /// The merge commit message asked for.
    pub message: Option<String>,
}

impl PullRequest {
    /// Whether `slug` is the author or a reviewer or participant.
    pub fn role_of(&self, slug: &str) -> Option<&'static str> {
        if self.author == slug {
            Some("AUTHOR")
        } else if self.reviewers.iter().any(|p| p.user == slug) {
            Some("REVIEWER")
        } else if self.participants.iter().any(|p| p.user == slug) {
            Some("PARTICIPANT")
        } else {
            None
        }
    }
}

/// One changed file of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDiff {
    /// Path after the change.
    pub path: String,
    /// Path before the change, for moves and copies.
    pub src_path: Option<String>,
    /// ADD, MODIFY, DELETE, MOVE or COPY.
    pub change: String,
    /// A binary file (no hunks).
    pub binary: bool,
    /// The hunks, already cut to the server's line cap.
    pub hunks: Vec<Hunk>,
    /// Whether lines were cut.
    pub truncated: bool,
}

/// A diff hunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    /// Text after the `@@` header (a function name).
    pub context: Option<String>,
    /// First source line.
    pub source_line: u32,
    /// Source lines covered.
    pub source_span: u32,
    /// First destination line.
    pub destination_line: u32,
    /// Destination lines covered.
    pub destination_span: u32,
    /// Runs of lines of one type.
    pub segments: Vec<Segment>,
    /// Whether lines were cut.
    pub truncated: bool,
}

/// A run of lines of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// ADDED, REMOVED or CONTEXT.
    pub kind: &'static str,
    /// The segment's lines in order; a cut file keeps only those under the server's line cap.
    pub lines: Vec<Line>,
    /// Whether lines were cut.
    pub truncated: bool,
}

/// One line of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Line number in the source file.
    pub source: u32,
    /// Line number in the destination file.
    pub destination: u32,
    /// Text without the newline.
    pub text: String,
}

/// A comment, a reply or a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    /// Its id, from [`Model::comment_id`]: global across pull requests, as Bitbucket's are.
    pub id: u64,
    /// Version, bumped on every edit.
    pub version: u64,
    /// Markdown text.
    pub text: String,
    /// Author slug.
    pub author: String,
    /// When it was added, epoch ms.
    pub created: i64,
    /// When it was last edited, epoch ms; `created` until then.
    pub updated: i64,
    /// Parent comment, for replies.
    pub parent: Option<u64>,
    /// File or line anchor as Bitbucket returns it (`orphaned` included).
    pub anchor: Option<Value>,
    /// NORMAL or BLOCKER (a task).
    pub severity: String,
    /// OPEN, RESOLVED, or PENDING for a draft (7.7+): a draft is seen by its author only, until they finish
    /// their review (`api::drafts`).
    pub state: String,
    /// Whether a comment thread was marked resolved.
    pub thread_resolved: bool,
    /// Who resolved it.
    pub resolver: Option<String>,
    /// When it was resolved.
    pub resolved_date: Option<i64>,
    /// Deleted comments stay for their DELETED activity but are no longer shown.
    pub deleted: bool,
    /// The indexes of its ```` ```suggestion ```` blocks applied (`api::suggestions`), in the order applied:
    /// rendered as `properties.appliedSuggestions`. [assumed: where Bitbucket records an applied suggestion is
    /// not public; reference `bitbucket-dc.md` "Suggestions"]
    pub applied: Vec<u64>,
}

impl Comment {
    /// Whether the comment is a draft (state PENDING), not yet published.
    pub fn is_pending(&self) -> bool {
        self.state == "PENDING"
    }

    /// Whether `viewer` sees the comment: everybody sees a published one, only its author a draft (so a request
    /// with no viewer sees no drafts).
    pub fn seen_by(&self, viewer: Option<&str>) -> bool {
        !self.is_pending() || viewer == Some(self.author.as_str())
    }

    /// Whether the comment is an open task (a published one: a pending task is counted by nobody).
    pub fn is_open_task(&self) -> bool {
        !self.deleted && self.severity == "BLOCKER" && self.state == "OPEN"
    }

    /// Whether the comment is a resolved task.
    pub fn is_resolved_task(&self) -> bool {
        !self.deleted && self.severity == "BLOCKER" && self.state == "RESOLVED"
    }

    /// Whether the anchor says the comment no longer sits on the current diff.
    pub fn is_orphaned(&self) -> bool {
        self.anchor.as_ref().and_then(|a| a.get("orphaned")).and_then(Value::as_bool) == Some(true)
    }
}

/// An entry of a pull request's activity.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// Its id, from [`Model::activity_id`].
    pub id: u64,
    /// When it happened.
    pub created: i64,
    /// Who did it.
    pub user: String,
    /// The action (COMMENTED, APPROVED, ...).
    pub action: String,
    /// For COMMENTED: the comment.
    pub comment_id: Option<u64>,
    /// For COMMENTED: ADDED, EDITED, DELETED or REPLIED.
    pub comment_action: Option<String>,
    /// Further fields of the activity (an object), e.g. RESCOPED's `added`.
    pub extra: Value,
}

/// A build status reported for a commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Build {
    /// The commit the status was posted for; the listings find builds by it.
    pub commit: String,
    /// The build's key.
    pub key: String,
    /// `name`: the label shown for the build beside its key.
    pub name: String,
    /// SUCCESSFUL, FAILED, INPROGRESS, CANCELLED or UNKNOWN.
    pub state: String,
    /// Link to the build.
    pub url: String,
    /// `description`: the CI server's free text, possibly empty.
    pub description: String,
    /// `dateAdded`: when it was reported, epoch ms.
    pub date_added: i64,
    /// The ref it was built for, if it says.
    pub ref_id: Option<String>,
    /// The parent key it reports under for required builds.
    pub parent: Option<String>,
    /// `buildNumber`, as text; only the UI listing carries it.
    pub build_number: Option<String>,
    /// Duration in ms.
    pub duration: Option<u64>,
    /// `{successful, failed, skipped}`.
    pub test_results: Option<Value>,
}

impl Model {
    /// Whether the served version (`application.version`, `9.4.0`) is at least `major.minor`.
    pub fn version_at_least(&self, major: u32, minor: u32) -> bool {
        let text = self.application.get("version").and_then(Value::as_str).unwrap_or("");
        let mut parts = text.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
    }

    /// Whether the server keeps draft comments and reviews: 7.7 and later. [doc: Atlassian's javadoc,
    /// `AddCommentRequest.isPending`, `AddCommentReplyRequest` and `PullRequestFinishReviewRequest`, "Since 7.7"]
    pub fn has_drafts(&self) -> bool {
        self.version_at_least(7, 7)
    }

    /// Advances the logical clock by one second and returns the new time.
    pub fn tick(&mut self) -> i64 {
        self.clock += 1000;
        self.clock
    }

    /// A fresh comment id.
    pub fn comment_id(&mut self) -> u64 {
        self.next_comment_id += 1;
        self.next_comment_id
    }

    /// A fresh activity id.
    pub fn activity_id(&mut self) -> u64 {
        self.next_activity_id += 1;
        self.next_activity_id
    }

    /// The repository a project key and slug name (the key's letter case is ignored, as Bitbucket does).
    pub fn repo(&self, key: &str, slug: &str) -> Option<&Repo> {
        self.repos.get(&(key.to_ascii_uppercase(), slug.to_string()))
    }

    /// The user with a slug.
    pub fn user(&self, slug: &str) -> Option<&User> {
        self.users.get(slug)
    }

    /// The id of a user, 0 when unknown.
    pub fn user_id(&self, slug: &str) -> u64 {
        self.users.get(slug).map(|u| u.id).unwrap_or(0)
    }

    /// Resolves a ref or commit name in a repository (`refs/heads/x`, `x`, `refs/tags/t`, `t` or a commit id prefix)
    /// to a commit id.
    pub fn resolve(&self, repo: &Repo, name: &str) -> Option<String> {
        let short = name.strip_prefix("refs/heads/").unwrap_or(name);
        if let Some(c) = repo.branches.get(short) {
            return Some(c.clone());
        }
        let tag = name.strip_prefix("refs/tags/").unwrap_or(name);
        if let Some(t) = repo.tags.get(tag) {
            return Some(t.commit.clone());
        }
        if name.len() >= 4 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return repo.commits.keys().find(|id| id.starts_with(&name.to_ascii_lowercase())).cloned();
        }
        None
    }

    /// Commits reachable from `head`, newest first (by time, then id), excluding those reachable from `stop`.
    pub fn history(&self, repo: &Repo, head: &str, stop: Option<&str>) -> Vec<Commit> {
        let excluded = match stop {
            Some(s) => ancestors(repo, s),
            None => Default::default(),
        };
        let mut out: Vec<Commit> = ancestors(repo, head)
            .into_iter()
            .filter(|id| !excluded.contains(id))
            .filter_map(|id| repo.commits.get(&id).cloned())
            .collect();
        out.sort_by(|a, b| b.at.cmp(&a.at).then(b.id.cmp(&a.id)));
        out
    }
}

/// Commits reachable from `head` (itself included).
pub fn ancestors(repo: &Repo, head: &str) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![head.to_string()];
    while let Some(id) = todo.pop() {
        if let Some(c) = repo.commits.get(&id)
            && seen.insert(id)
        {
            todo.extend(c.parents.iter().cloned());
        }
    }
    seen
}

/// A deterministic 40-hex-digit commit id for a label (FNV-1a over the label, three ways).
pub fn commit_id(label: &str) -> String {
    hash_id(label.as_bytes())
}

/// A deterministic 40-hex-digit id for bytes (a file's `contentId`), as [`commit_id`] makes them.
pub fn hash_id(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(48);
    for salt in 0u64..3 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 32;
        out.push_str(&format!("{h:016x}"));
    }
    out.truncate(40);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_ids_are_forty_hex_digits_and_stable() {
        let a = commit_id("BB/api@0");
        assert_eq!(a.len(), 40);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a, commit_id("BB/api@0"));
        assert_ne!(a, commit_id("BB/api@1"));
    }
}
