//! The seed file (`seed/seed.json`): its schema, and how it becomes the model the stack starts from.
//!
//! The file is meant to be read: commits, ids of comments and activities, and the biggest diffs are derived here,
//! deterministically, from short descriptions, so the same file always gives the same stack.

use crate::model::*;
use crate::patches;
use crate::sources;
use crate::trees;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The seed committed with the stack, used when no `--data` file is given.
pub const DEFAULT_SEED: &str = include_str!("../seed/seed.json");

/// The whole seed file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Seed {
    /// Free text for people reading the file.
    #[serde(default)]
    pub about: Vec<String>,
    /// The logical clock's start (epoch ms); every write after start is a second later than the last.
    pub now: i64,
    /// What `application-properties` answers.
    pub application: Value,
    /// The user whose token the binary prints.
    pub default_user: String,
    /// `users`; `defaultUser` must be one of them.
    pub users: Vec<SeedUser>,
    /// `projects`; every repository's project key must be one of theirs.
    pub projects: Vec<SeedProject>,
    /// Repositories (a fork after its origin).
    pub repositories: Vec<SeedRepo>,
    /// `pullRequests`; an id is used once per target repository.
    pub pull_requests: Vec<SeedPr>,
}

/// A user.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedUser {
    /// Slug and login name.
    pub slug: String,
    /// `id`: the numeric id the user's JSON carries.
    pub id: u64,
    /// `displayName`: the full name ("Jane Doe").
    pub display_name: String,
    /// E-mail.
    pub email: String,
    /// NORMAL or SERVICE.
    #[serde(rename = "type", default = "normal")]
    pub kind: String,
    /// `password`, for basic authentication as this user.
    pub password: String,
    /// `token`: the personal access token; the default user's gives way to one given on the command line.
    pub token: String,
    /// Avatar colour, `#rrggbb`.
    pub colour: String,
}

fn normal() -> String {
    "NORMAL".into()
}

/// A project.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedProject {
    /// `key`, upper-cased when read.
    pub key: String,
    /// `id`: the numeric id the project's JSON carries.
    pub id: u64,
    /// `name`: the display name, which may differ from the key.
    pub name: String,
    /// `description`; left out of the project's JSON when empty.
    #[serde(default)]
    pub description: String,
}

/// A repository.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedRepo {
    /// `KEY/slug`.
    pub repo: String,
    /// `id`: the numeric id the repository's JSON carries.
    pub id: u64,
    /// `name`: the display name, which may differ from the slug.
    pub name: String,
    /// `KEY/slug` of the origin, for a fork: the fork starts with the origin's commits and branches.
    #[serde(default)]
    pub fork_of: Option<String>,
    /// `defaultBranch`, `main` when left out.
    #[serde(default = "main_branch")]
    pub default_branch: String,
    /// The default branch's history, oldest first (ignored for forks).
    #[serde(default)]
    pub history: Vec<SeedCommit>,
    /// Further branches, each one commit ahead of the default branch (pull request branches are made on their own).
    #[serde(default)]
    pub branches: Vec<String>,
    /// `tags`, each on a commit of `history`.
    #[serde(default)]
    pub tags: Vec<SeedTag>,
    /// The branching model, as Bitbucket returns it.
    #[serde(default)]
    pub branch_model: Option<Value>,
    /// Required-build conditions, as Bitbucket returns them.
    #[serde(default)]
    pub conditions: Vec<Value>,
    /// Default reviewer conditions.
    #[serde(default)]
    pub default_reviewers: Vec<SeedDefaultReviewers>,
    /// The auto-merge setting (8.15+), off when left out.
    #[serde(default)]
    pub auto_merge: bool,
    /// Report keys the Code Insights merge check requires to pass.
    #[serde(default)]
    pub required_reports: Vec<String>,
}

fn main_branch() -> String {
    "main".into()
}

/// A commit of a default branch's history.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedCommit {
    /// `message`, whole: its first line is the subject.
    pub message: String,
    /// Author slug.
    pub author: String,
    /// `at`: when it was written, epoch ms.
    pub at: i64,
}

/// A tag on the default branch's history.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedTag {
    /// `name`: the tag's short name, without `refs/tags/`.
    pub name: String,
    /// Index into the history (oldest is 0).
    pub commit: usize,
    /// `message`: an annotated tag's message; a lightweight tag has none.
    #[serde(default)]
    pub message: Option<String>,
}

/// A default reviewer condition.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedDefaultReviewers {
    /// `id`: the condition's id as served.
    pub id: u64,
    /// `sourceMatcher`: a ref matcher as Bitbucket returns it, over the source branch.
    pub source_matcher: Value,
    /// `targetMatcher`: a ref matcher as Bitbucket returns it, over the target branch.
    pub target_matcher: Value,
    /// Reviewer slugs.
    pub reviewers: Vec<String>,
    /// Approvals required.
    #[serde(default)]
    pub required_approvals: u64,
}

/// A pull request.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedPr {
    /// Target repository, `KEY/slug`.
    pub repo: String,
    /// Id in the target repository.
    pub id: u64,
    /// `version`: the version it starts at, 0 when left out.
    #[serde(default)]
    pub version: u64,
    /// `title`; its first line (60 characters at most) is also the message of the source branch's commits.
    pub title: String,
    /// Repeat the title until it is at least this many bytes long (for the 100 KB title).
    #[serde(default)]
    pub title_pad_to: usize,
    /// `description`; served as absent when empty, as Bitbucket does.
    #[serde(default)]
    pub description: String,
    /// `from`: the source branch's short name; made `commits` commits ahead of the default branch unless it
    /// exists.
    pub from: String,
    /// Source repository when it is a fork, `KEY/slug`.
    #[serde(default)]
    pub from_repo: Option<String>,
    /// `to`: the target branch's short name, `main` when left out; made one commit ahead of the default
    /// branch unless it exists.
    #[serde(default = "main_branch")]
    pub to: String,
    /// Author slug.
    pub author: String,
    /// OPEN, MERGED or DECLINED.
    pub state: String,
    /// `draft`: the merge check vetoes a draft.
    #[serde(default)]
    pub draft: bool,
    /// `locked`, served as is; nothing acts on it.
    #[serde(default)]
    pub locked: bool,
    /// `conflicted`: the merge check, `mergeResult` and the modified files' `conflict` say so, and a merge is
    /// refused.
    #[serde(default)]
    pub conflicted: bool,
    /// `created`, epoch ms; also the OPENED activity's time.
    pub created: i64,
    /// `updated`, epoch ms, until a write moves it.
    pub updated: i64,
    /// Closed, for merged and declined ones.
    #[serde(default)]
    pub closed: Option<i64>,
    /// Commits on the source branch (at least 1).
    #[serde(default = "one")]
    pub commits: u32,
    /// `reviewers`; anyone whose status is not UNAPPROVED has reviewed the source commit (`lastReviewedCommit`).
    #[serde(default)]
    pub reviewers: Vec<SeedParticipant>,
    /// Participants that are not reviewers.
    #[serde(default)]
    pub participants: Vec<SeedParticipant>,
    /// Merge-check vetoes besides conflicts.
    #[serde(default)]
    pub vetoes: Vec<Value>,
    /// `files`: each a patch, a generated diff or a binary file, cut to the server's line cap.
    #[serde(default)]
    pub files: Vec<SeedFile>,
    /// Activity after OPENED, oldest first (MERGED/DECLINED are added from `closed` when missing).
    #[serde(default)]
    pub activities: Vec<SeedActivity>,
    /// Builds of the source commit.
    #[serde(default)]
    pub builds: Vec<SeedBuild>,
    /// Code Insights reports on the source commit.
    #[serde(default)]
    pub reports: Vec<SeedReport>,
}

/// A Code Insights report on a pull request's source commit, with its annotations.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedReport {
    /// `key`.
    pub key: String,
    /// The report's JSON as Bitbucket serves it (`title`, `result`, `reporter`, `link`, `details`, `data`,
    /// `createdDate`), served as given.
    pub report: Value,
    /// Its annotations.
    #[serde(default)]
    pub annotations: Vec<SeedAnnotation>,
}

/// One annotation, or a run of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedAnnotation {
    /// The annotation's JSON (`path`, `line`, `message`, `severity`, `type`, `link`, `externalId`).
    pub annotation: Value,
    /// Repeat the message until it is at least this many bytes long (for the 100 KB message).
    #[serde(default)]
    pub message_pad_to: usize,
    /// Make this many, on lines `line`, `line + 1`, … with ` #n` after the message (for 500 on one file).
    #[serde(default = "one")]
    pub repeat: u32,
}

fn one() -> u32 {
    1
}

/// A reviewer or participant.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedParticipant {
    /// `user`: the user's slug.
    pub user: String,
    /// UNAPPROVED, NEEDS_WORK or APPROVED.
    #[serde(default = "unapproved")]
    pub status: String,
    /// `lastReviewed`: the source commit (1-based, oldest first) they last reviewed, served as
    /// `lastReviewedCommit`; left out, anyone whose status is not UNAPPROVED reviewed the tip.
    #[serde(default)]
    pub last_reviewed: Option<usize>,
}

fn unapproved() -> String {
    "UNAPPROVED".into()
}

/// A changed file: a patch, a generated diff, or a binary file.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedFile {
    /// Path after the change.
    pub path: String,
    /// Path before, for MOVE and COPY.
    #[serde(default)]
    pub src_path: Option<String>,
    /// ADD, MODIFY, DELETE, MOVE or COPY.
    #[serde(default = "modify")]
    pub change: String,
    /// Binary: no hunks.
    #[serde(default)]
    pub binary: bool,
    /// Unified-diff lines.
    #[serde(default)]
    pub patch: Vec<String>,
    /// A generated diff instead of a patch.
    #[serde(default)]
    pub generate: Option<SeedGenerate>,
}

fn modify() -> String {
    "MODIFY".into()
}

/// A generated diff's description.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedGenerate {
    /// rust, typescript, python, go, java or yaml.
    pub language: String,
    /// Lines of diff.
    pub lines: u32,
    /// Each line this many bytes long, its text repeated (a minified file's lines); left out, as generated.
    #[serde(default)]
    pub line_bytes: Option<usize>,
}

/// An activity.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedActivity {
    /// `action` (APPROVED, RESCOPED, …); with a `comment`, the thread is added as COMMENTED whatever it says.
    pub action: String,
    /// `user`: the slug of who acted; a comment thread's root is theirs.
    pub user: String,
    /// `at`: when, epoch ms; a comment thread's root takes it.
    pub at: i64,
    /// For COMMENTED: the comment thread started.
    #[serde(default)]
    pub comment: Option<SeedComment>,
    /// Further fields of the activity.
    #[serde(default)]
    pub extra: Option<Value>,
}

/// A comment with its replies.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedComment {
    /// `text`: Markdown.
    pub text: String,
    /// Author (for replies; a thread's root takes the activity's user).
    #[serde(default)]
    pub author: Option<String>,
    /// When (for replies; a thread's root takes the activity's time).
    #[serde(default)]
    pub at: Option<i64>,
    /// NORMAL or BLOCKER.
    #[serde(default = "normal_severity")]
    pub severity: String,
    /// Anchor as Bitbucket returns it (`orphaned` included).
    #[serde(default)]
    pub anchor: Option<Value>,
    /// Edited at this time (an EDITED activity follows).
    #[serde(default)]
    pub edited_at: Option<i64>,
    /// Deleted at this time (a DELETED activity follows).
    #[serde(default)]
    pub deleted_at: Option<i64>,
    /// Resolved (a task) or thread marked resolved (a comment).
    #[serde(default)]
    pub resolved: Option<SeedResolved>,
    /// `replies`, each added with a REPLIED activity of its own.
    #[serde(default)]
    pub replies: Vec<SeedComment>,
    /// `pending`: a draft (state PENDING), seen by its author only until they finish their review; its replies are
    /// drafts too.
    #[serde(default)]
    pub pending: bool,
}

fn normal_severity() -> String {
    "NORMAL".into()
}

/// Who resolved a task or thread, and when.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedResolved {
    /// `by`: the slug of who resolved it.
    pub by: String,
    /// `at`: when, epoch ms.
    pub at: i64,
}

/// A build of a pull request's source commit.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedBuild {
    /// `key`: a build posted later for the same commit with the same key and ref replaces it.
    pub key: String,
    /// `name`: the label shown for the build beside its key.
    pub name: String,
    /// `state`: SUCCESSFUL, FAILED, INPROGRESS, CANCELLED or UNKNOWN.
    pub state: String,
    /// `"source"` for the pull request's branch, a full ref id, or absent for none.
    #[serde(default, rename = "ref")]
    pub ref_id: Option<String>,
    /// `parent`: the key it reports under for required builds (Bamboo: `PROJ-PLAN` for `PROJ-PLAN123`).
    #[serde(default)]
    pub parent: Option<String>,
    /// `at`: when it was reported (`dateAdded`), epoch ms.
    pub at: i64,
    /// `description`, empty when left out.
    #[serde(default)]
    pub description: String,
    /// `buildNumber`, as text; only the UI listing carries it.
    #[serde(default)]
    pub build_number: Option<String>,
    /// Duration (ms).
    #[serde(default)]
    pub duration: Option<u64>,
    /// `{successful, failed, skipped}`.
    #[serde(default)]
    pub test_results: Option<Value>,
}

/// Parses seed JSON text.
pub fn parse(text: &str) -> Result<Seed, String> {
    serde_json::from_str(text).map_err(|e| format!("The seed data is not valid: {e}"))
}

fn repo_key(s: &str) -> Result<RepoKey, String> {
    let (k, r) = s.split_once('/').ok_or(format!("`{s}` should be PROJECT/slug"))?;
    Ok((k.to_ascii_uppercase(), r.to_string()))
}

fn colour(s: &str) -> [u8; 3] {
    let hex = s.trim_start_matches('#');
    let byte = |i: usize| hex.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(0x80);
    [byte(0), byte(2), byte(4)]
}

/// Builds the model a seed describes; `token` replaces the default user's token.
pub fn build(seed: &Seed, token: Option<&str>) -> Result<Model, String> {
    let mut m = Model {
        clock: seed.now,
        application: seed.application.clone(),
        default_user: seed.default_user.clone(),
        next_comment_id: 1000,
        next_activity_id: 5000,
        ..Model::default()
    };
    for u in &seed.users {
        let token = match token {
            Some(t) if u.slug == seed.default_user => t.to_string(),
            _ => u.token.clone(),
        };
        m.users.insert(
            u.slug.clone(),
            User {
                slug: u.slug.clone(),
                id: u.id,
                display_name: u.display_name.clone(),
                email: u.email.clone(),
                service: u.kind == "SERVICE",
                password: u.password.clone(),
                token,
                colour: colour(&u.colour),
            },
        );
    }
    if !m.users.contains_key(&seed.default_user) {
        return Err(format!("defaultUser `{}` is not among the users", seed.default_user));
    }
    for p in &seed.projects {
        m.projects.insert(
            p.key.to_ascii_uppercase(),
            Project {
                key: p.key.to_ascii_uppercase(),
                id: p.id,
                name: p.name.clone(),
                description: p.description.clone(),
            },
        );
    }
    let needs = collect_needs(seed)?;
    for r in &seed.repositories {
        add_repo(&mut m, r, &needs)?;
    }
    for p in &seed.pull_requests {
        add_pr(&mut m, p).map_err(|e| format!("pull request {} #{}: {e}", p.repo, p.id))?;
    }
    Ok(m)
}

fn add_repo(m: &mut Model, r: &SeedRepo, needs: &Needs) -> Result<(), String> {
    let key = repo_key(&r.repo)?;
    if !m.projects.contains_key(&key.0) {
        return Err(format!("repository {} names an unknown project", r.repo));
    }
    let mut repo = Repo {
        key: key.clone(),
        id: r.id,
        name: r.name.clone(),
        fork_of: None,
        default_branch: r.default_branch.clone(),
        commits: BTreeMap::new(),
        branches: BTreeMap::new(),
        tags: BTreeMap::new(),
        branch_model: r.branch_model.clone(),
        auto_merge: r.auto_merge,
        trees: BTreeMap::new(),
        conditions: r.conditions.clone(),
        required_reports: r.required_reports.clone(),
        default_reviewers: r
            .default_reviewers
            .iter()
            .map(|d| DefaultReviewers {
                id: d.id,
                source: d.source_matcher.clone(),
                target: d.target_matcher.clone(),
                reviewers: d.reviewers.clone(),
                required_approvals: d.required_approvals,
            })
            .collect(),
    };
    let mut history_ids = Vec::new();
    if let Some(origin) = &r.fork_of {
        let origin_key = repo_key(origin)?;
        let o = m.repos.get(&origin_key).ok_or(format!("fork {} of unknown {origin}", r.repo))?;
        repo.commits = o.commits.clone();
        repo.branches = o.branches.clone();
        repo.trees = o.trees.clone();
        repo.fork_of = Some(origin_key);
    } else {
        let mut parent: Option<String> = None;
        for (i, c) in r.history.iter().enumerate() {
            let id = commit_id(&format!("{}/{}@{i}", key.0, key.1));
            repo.commits.insert(
                id.clone(),
                Commit {
                    id: id.clone(),
                    message: c.message.clone(),
                    author: c.author.clone(),
                    at: c.at,
                    parents: parent.iter().cloned().collect(),
                },
            );
            history_ids.push(id.clone());
            parent = Some(id);
        }
        let head = parent.ok_or(format!("repository {} needs a history", r.repo))?;
        repo.branches.insert(r.default_branch.clone(), head);
        let first = &history_ids[0];
        let subject = r.history[0].message.lines().next().unwrap_or("");
        let mut files = sources::base_files(&key.0, &key.1, &r.name, subject, first);
        if let Some(n) = needs.get(&key) {
            apply_needs(&mut files, n);
        }
        repo.trees.insert(first.clone(), Arc::new(files));
    }
    for t in &r.tags {
        let commit = history_ids.get(t.commit).ok_or(format!("tag {} points past the history", t.name))?;
        repo.tags
            .insert(t.name.clone(), Tag { name: t.name.clone(), commit: commit.clone(), message: t.message.clone() });
    }
    m.repos.insert(key.clone(), repo);
    for b in &r.branches {
        ensure_branch(m, &key, b, 1, &format!("Start {b}"))?;
    }
    Ok(())
}

/// Makes `branch` exist in `repo`, `commits` commits ahead of the default branch; returns its head and the
/// commits made, oldest first (none when it existed).
fn ensure_branch(
    m: &mut Model,
    key: &RepoKey,
    branch: &str,
    commits: u32,
    message: &str,
) -> Result<(String, Vec<String>), String> {
    let default_user = m.default_user.clone();
    let repo = m.repos.get_mut(key).ok_or(format!("unknown repository {}/{}", key.0, key.1))?;
    if let Some(head) = repo.branches.get(branch) {
        return Ok((head.clone(), Vec::new()));
    }
    let mut made = Vec::new();
    let base = repo.branches.get(&repo.default_branch).cloned().ok_or("the default branch has no head")?;
    let base_at = repo.commits.get(&base).map(|c| c.at).unwrap_or(0);
    let mut head = base;
    for i in 0..commits.max(1) {
        let id = commit_id(&format!("{}/{}:{branch}#{i}", key.0, key.1));
        let text = if i == 0 { message.to_string() } else { format!("{message} (part {})", i + 1) };
        repo.commits.insert(
            id.clone(),
            Commit {
                id: id.clone(),
                message: text,
                author: default_user.clone(),
                at: base_at + 3_600_000 * i64::from(i + 1),
                parents: vec![head],
            },
        );
        made.push(id.clone());
        head = id;
    }
    repo.branches.insert(branch.to_string(), head.clone());
    Ok((head, made))
}

fn add_pr(m: &mut Model, p: &SeedPr) -> Result<(), String> {
    let to_repo = repo_key(&p.repo)?;
    let from_repo = match &p.from_repo {
        Some(r) => repo_key(r)?,
        None => to_repo.clone(),
    };
    let first_line = p.title.lines().next().unwrap_or("").chars().take(60).collect::<String>();
    let (from_commit, made) = ensure_branch(m, &from_repo, &p.from, p.commits, &first_line)?;
    let (to_commit, _) = ensure_branch(m, &to_repo, &p.to, 1, &format!("Start {}", p.to))?;
    let state = PrState::parse(&p.state).ok_or(format!("unknown state {}", p.state))?;
    let mut title = p.title.clone();
    while title.len() < p.title_pad_to {
        title.push(' ');
        title.push_str(&p.title);
    }
    let mut files = Vec::new();
    let mut updates = Vec::new();
    for f in &p.files {
        let hunks = hunks_of(f)?;
        files.push(FileDiff {
            path: f.path.clone(),
            src_path: f.src_path.clone(),
            change: f.change.clone(),
            binary: f.binary,
            hunks: Vec::new(),
            truncated: false,
        });
        updates.push((f, hunks));
    }
    source_trees(m, &from_repo, &made, &updates)?;
    let participant = |s: &SeedParticipant| Participant {
        user: s.user.clone(),
        status: s.status.clone(),
        last_reviewed: match s.last_reviewed {
            Some(k) => Some(made.get(k.saturating_sub(1)).unwrap_or(&from_commit).clone()),
            None => (s.status != "UNAPPROVED").then(|| from_commit.clone()),
        },
    };
    let mut pr = PullRequest {
        id: p.id,
        version: p.version,
        title,
        description: p.description.clone(),
        state,
        draft: p.draft,
        locked: p.locked,
        created: p.created,
        updated: p.updated,
        closed: p.closed,
        from: RefKey { repo: from_repo, branch: p.from.clone() },
        to: RefKey { repo: to_repo.clone(), branch: p.to.clone() },
        from_commit: from_commit.clone(),
        to_commit,
        author: p.author.clone(),
        reviewers: p.reviewers.iter().map(participant).collect(),
        participants: p.participants.iter().map(participant).collect(),
        conflicted: p.conflicted,
        vetoes: p.vetoes.clone(),
        files,
        comments: BTreeMap::new(),
        activities: Vec::new(),
        merge_commit: None,
        auto_merge: None,
    };
    let opened = Activity {
        id: m.activity_id(),
        created: p.created,
        user: p.author.clone(),
        action: "OPENED".into(),
        comment_id: None,
        comment_action: None,
        extra: json!({}),
    };
    pr.activities.push(opened);
    for a in &p.activities {
        match &a.comment {
            Some(c) => add_thread(m, &mut pr, c, None, &a.user, a.at, false)?,
            None => {
                let id = m.activity_id();
                pr.activities.push(Activity {
                    id,
                    created: a.at,
                    user: a.user.clone(),
                    action: a.action.clone(),
                    comment_id: None,
                    comment_action: None,
                    extra: a.extra.clone().unwrap_or_else(|| json!({})),
                });
            }
        }
    }
    // A seeded MERGED activity that names its commit names the merge commit.
    if state == PrState::Merged {
        let named = pr.activities.iter().find(|a| a.action == "MERGED").and_then(|a| a.extra["commit"]["id"].as_str());
        pr.merge_commit = named.map(str::to_owned);
    }
    let closing = match state {
        PrState::Merged => Some("MERGED"),
        PrState::Declined => Some("DECLINED"),
        PrState::Open => None,
    };
    if let Some(action) = closing
        && !pr.activities.iter().any(|a| a.action == action)
    {
        let at = p.closed.ok_or("a closed pull request needs `closed`")?;
        let extra = if action == "MERGED" {
            let merge = commit_id(&format!("{}/{}#{}:merge", to_repo.0, to_repo.1, p.id));
            pr.merge_commit = Some(merge.clone());
            json!({ "commit": { "id": merge, "displayId": &merge[..11] } })
        } else {
            json!({})
        };
        let id = m.activity_id();
        pr.activities.push(Activity {
            id,
            created: at,
            user: if action == "MERGED" {
                p.author.clone()
            } else {
                p.reviewers.first().map(|r| r.user.clone()).unwrap_or(p.author.clone())
            },
            action: action.into(),
            comment_id: None,
            comment_action: None,
            extra,
        });
    }
    for b in &p.builds {
        let ref_id = match b.ref_id.as_deref() {
            Some("source") => Some(pr.from.id()),
            other => other.map(str::to_string),
        };
        m.builds.push(Build {
            commit: from_commit.clone(),
            key: b.key.clone(),
            name: b.name.clone(),
            state: b.state.clone(),
            url: format!("https://ci.example.invalid/{}", b.key),
            description: b.description.clone(),
            date_added: b.at,
            ref_id,
            parent: b.parent.clone(),
            build_number: b.build_number.clone(),
            duration: b.duration,
            test_results: b.test_results.clone(),
        });
    }
    for r in &p.reports {
        add_report(m, &pr.from.repo, &from_commit, r);
    }
    let key = (to_repo, p.id);
    if m.prs.contains_key(&key) {
        return Err("the id is used twice".into());
    }
    m.prs.insert(key, pr);
    Ok(())
}

/// Adds a report and its annotations to `commit` of `repo`.
fn add_report(m: &mut Model, repo: &RepoKey, commit: &str, r: &SeedReport) {
    m.reports.push(Report {
        repo: repo.clone(),
        commit: commit.to_owned(),
        key: r.key.clone(),
        json: r.report.clone(),
    });
    for a in &r.annotations {
        let mut json = a.annotation.clone();
        if let Some(message) = json.get("message").and_then(Value::as_str).map(str::to_owned) {
            let mut padded = message.clone();
            while padded.len() < a.message_pad_to {
                padded.push(' ');
                padded.push_str(&message);
            }
            json["message"] = Value::String(padded);
        }
        let line = json.get("line").and_then(Value::as_u64).unwrap_or(0);
        for n in 0..a.repeat {
            let mut one = json.clone();
            if a.repeat > 1 {
                one["line"] = Value::from(line + u64::from(n));
                let message = one.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
                one["message"] = Value::String(format!("{message} #{}", n + 1));
            }
            m.annotations.push(Annotation {
                repo: repo.clone(),
                commit: commit.to_owned(),
                report: r.key.clone(),
                json: one,
            });
        }
    }
}

/// Adds a comment, its replies and the activities they make (ADDED or REPLIED, EDITED, DELETED). An anchor
/// without `fromHash`/`toHash` gets the pull request's target and source commits, the diff it was made on.
fn add_thread(
    m: &mut Model,
    pr: &mut PullRequest,
    c: &SeedComment,
    parent: Option<u64>,
    user: &str,
    at: i64,
    under_draft: bool,
) -> Result<(), String> {
    let author = c.author.clone().unwrap_or(user.to_string());
    let at = c.at.unwrap_or(at);
    let id = m.comment_id();
    let pending = under_draft || c.pending;
    let (state, thread_resolved) = match (&c.resolved, c.severity.as_str()) {
        _ if pending => ("PENDING", false),
        (Some(_), "BLOCKER") => ("RESOLVED", false),
        (Some(_), _) => ("OPEN", true),
        (None, _) => ("OPEN", false),
    };
    let mut anchor = c.anchor.clone();
    if let Some(o) = anchor.as_mut().and_then(Value::as_object_mut) {
        o.entry("fromHash").or_insert(json!(pr.to_commit));
        o.entry("toHash").or_insert(json!(pr.from_commit));
    }
    pr.comments.insert(
        id,
        Comment {
            id,
            version: u64::from(c.edited_at.is_some()),
            text: c.text.clone(),
            author: author.clone(),
            created: at,
            updated: c.edited_at.unwrap_or(at),
            parent,
            anchor,
            severity: c.severity.clone(),
            state: state.into(),
            thread_resolved,
            resolver: c.resolved.as_ref().filter(|_| !pending).map(|r| r.by.clone()),
            resolved_date: c.resolved.as_ref().filter(|_| !pending).map(|r| r.at),
            deleted: c.deleted_at.is_some(),
            applied: Vec::new(),
        },
    );
    let mut push = |m: &mut Model, when: i64, what: &str| {
        let aid = m.activity_id();
        pr.activities.push(Activity {
            id: aid,
            created: when,
            user: author.clone(),
            action: "COMMENTED".into(),
            comment_id: Some(id),
            comment_action: Some(what.into()),
            extra: json!({}),
        });
    };
    push(m, at, if parent.is_some() { "REPLIED" } else { "ADDED" });
    if let Some(e) = c.edited_at {
        push(m, e, "EDITED");
    }
    if let Some(d) = c.deleted_at {
        push(m, d, "DELETED");
    }
    for r in &c.replies {
        add_thread(m, pr, r, Some(id), &author, at + 60_000, pending)?;
    }
    Ok(())
}

/// A seed file's hunks, whole (the line cap applies to what a diff serves, not to the file).
fn hunks_of(f: &SeedFile) -> Result<Vec<Hunk>, String> {
    if f.binary {
        return Ok(Vec::new());
    }
    match &f.generate {
        Some(g) => {
            let mut hunks = patches::generate(&g.language, g.lines, f.change == "ADD");
            if let Some(bytes) = g.line_bytes {
                patches::widen(&mut hunks, bytes);
            }
            Ok(hunks)
        }
        None => patches::parse(&f.patch).map_err(|e| format!("{}: {e}", f.path)),
    }
}

/// What pull requests need of a file in their repository's first tree: absent (added by one), present with
/// these lines at these numbers (their hunks' source lines), exactly so long (deleted whole), binary.
#[derive(Debug, Default)]
struct Need {
    absent: bool,
    present: bool,
    binary: bool,
    lines: BTreeMap<u32, String>,
    exact: Option<u32>,
}

type Needs = BTreeMap<RepoKey, BTreeMap<String, Need>>;

/// The needs of every seeded pull request, by the repository whose history its source branch starts from (a
/// fork's origin). The first pull request to say what a line holds wins; a later one that disagrees gets a diff
/// of what the file really holds.
fn collect_needs(seed: &Seed) -> Result<Needs, String> {
    let origin: BTreeMap<String, Option<String>> =
        seed.repositories.iter().map(|r| (r.repo.to_ascii_uppercase(), r.fork_of.clone())).collect();
    let root = |name: &str| -> Result<RepoKey, String> {
        let mut at = name.to_string();
        for _ in 0..16 {
            match origin.get(&at.to_ascii_uppercase()) {
                Some(Some(o)) => at = o.clone(),
                _ => break,
            }
        }
        repo_key(&at)
    };
    let mut needs = Needs::new();
    for p in &seed.pull_requests {
        let key = root(p.from_repo.as_deref().unwrap_or(&p.repo))?;
        let of_repo = needs.entry(key).or_default();
        for f in &p.files {
            let hunks = hunks_of(f)?;
            let src = f.src_path.clone().unwrap_or(f.path.clone());
            match f.change.as_str() {
                "ADD" => {
                    of_repo.entry(f.path.clone()).or_default().absent = true;
                    continue;
                }
                "MOVE" | "COPY" => of_repo.entry(f.path.clone()).or_default().absent = true,
                _ => {}
            }
            let need = of_repo.entry(src).or_default();
            need.present = true;
            need.binary |= f.binary;
            let mut last = 0;
            for h in &hunks {
                if let Some(c) = &h.context
                    && h.source_line > 1
                {
                    need.lines.entry(h.source_line - 1).or_insert(c.clone());
                }
                for s in h.segments.iter().filter(|s| s.kind != "ADDED") {
                    for l in &s.lines {
                        need.lines.entry(l.source).or_insert(l.text.clone());
                        last = last.max(l.source);
                    }
                }
            }
            if f.change == "DELETE" && !f.binary {
                need.exact.get_or_insert(last);
            }
        }
    }
    Ok(needs)
}

/// Makes a repository's first tree hold what its pull requests need.
fn apply_needs(files: &mut BTreeMap<String, Entry>, needs: &BTreeMap<String, Need>) {
    for (path, need) in needs {
        if need.absent && !need.present {
            files.remove(path);
            continue;
        }
        if need.binary {
            if !matches!(files.get(path), Some(Entry::Binary(_))) {
                files.insert(path.clone(), Entry::Binary(Arc::new(sources::png(path, "before"))));
            }
            continue;
        }
        let mut lines = match files.get(path) {
            Some(Entry::Text(l)) => l.as_ref().clone(),
            _ => Vec::new(),
        };
        let texts: BTreeSet<&str> = need.lines.values().map(String::as_str).collect();
        let avoid = |l: &str| texts.contains(l);
        let longest = need.lines.keys().max().copied().unwrap_or(0) as usize;
        let mut len = need.exact.map(|e| e as usize).unwrap_or(lines.len().max(longest));
        if len == 0 {
            len = 12;
        }
        lines.truncate(len);
        while lines.len() < len {
            lines.push(sources::filler(path, lines.len() + 1, &avoid));
        }
        for (n, text) in &need.lines {
            if let Some(slot) = lines.get_mut((*n as usize).wrapping_sub(1)) {
                *slot = text.clone();
            }
        }
        files.insert(path.clone(), Entry::text(lines));
    }
}

/// The paths one seed file sets (or removes) on the source branch, from the tree the branch starts at.
fn file_updates(before: &Tree, f: &SeedFile, hunks: &[Hunk]) -> Vec<(String, Option<Entry>)> {
    let after = |src: &str, salt: &str| -> Option<Entry> {
        if f.binary {
            return Some(Entry::Binary(Arc::new(sources::png(&f.path, salt))));
        }
        let old = match before.get(src) {
            Some(Entry::Text(l)) => l.as_slice(),
            _ => &[],
        };
        Some(Entry::text(trees::apply(old, hunks)))
    };
    let src = f.src_path.clone().unwrap_or(f.path.clone());
    match f.change.as_str() {
        "ADD" => vec![(f.path.clone(), after("", "added"))],
        "DELETE" => vec![(f.path.clone(), None)],
        "MOVE" => vec![(src.clone(), None), (f.path.clone(), after(&src, "moved"))],
        "COPY" => vec![(f.path.clone(), after(&src, "copied"))],
        _ => vec![(f.path.clone(), after(&src, "modified"))],
    }
}

/// Gives a pull request's new source commits their trees: the files spread over them (file i in commit
/// i mod N, or in the last commits when there are fewer files than commits), each tree the one before plus its
/// files.
fn source_trees(
    m: &mut Model,
    repo: &RepoKey,
    made: &[String],
    updates: &[(&SeedFile, Vec<Hunk>)],
) -> Result<(), String> {
    let Some(r) = m.repos.get_mut(repo) else {
        return Err(format!("unknown repository {}/{}", repo.0, repo.1));
    };
    let Some(first) = made.first() else {
        return Ok(());
    };
    let start = r.commits.get(first).and_then(|c| c.parents.first().cloned()).unwrap_or_default();
    let before = trees::tree_of(r, &start).unwrap_or_default();
    let (n, k) = (made.len(), updates.len());
    let commit_of = |i: usize| if k >= n { i % n } else { n - k + i };
    let mut tree = before.clone();
    for (j, id) in made.iter().enumerate() {
        for (i, (f, hunks)) in updates.iter().enumerate() {
            if commit_of(i) == j {
                for (path, entry) in file_updates(&before, f, hunks) {
                    tree = trees::with(&tree, &path, entry);
                }
            }
        }
        r.trees.insert(id.clone(), tree.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_seed_builds_a_model() {
        let seed = parse(DEFAULT_SEED);
        assert!(seed.is_ok(), "{:?}", seed.err());
        let model = seed.and_then(|s| build(&s, None));
        assert!(model.is_ok(), "{:?}", model.err());
    }

    #[test]
    fn the_token_option_replaces_the_default_users_token() {
        let seed = parse(DEFAULT_SEED).unwrap_or_else(|e| unreachable!("{e}"));
        let m = build(&seed, Some("tok-xyz")).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(m.users[&m.default_user].token, "tok-xyz");
    }
}
