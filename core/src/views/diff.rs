//! The diff (`show` kind `diff`): a pull request's changes as Bitbucket's diff with comments draws them,
//! the code highlighted in bb under the shell's deadline. The same plan draws two refs' diff (kind
//! `compare`, [`super::compare`]): no pull request to read, no comments, the rest alike.
//!
//! Requests, in stages:
//! 1. in parallel: the pull request (its title and state) and the first page of its changes (2); for two
//!    refs, the first page of what `from` changes against `to` (1);
//! 2. each changed file's diff with its comments, for the first [`MAX_FILES`] files (the session sends
//!    up to [`crate::limits::READS_PER_SESSION`] at once); then the avatars not cached yet.
//!
//! Then CPU work: each line highlighted in bounded steps, until done or the shell's deadline.
//!
//! Comments sit where Bitbucket's diff with comments draws them: a thread on the line whose `commentIds`
//! lists its root, nowhere else — never by its anchor's line number, which names the old file's line for a
//! comment written on the left of a side-by-side diff; file comments at the top of their file; a root that
//! no line lists (orphaned: its line no longer exists) is left to the activity, which marks it outdated.
//! [reference "Diff and changes": rec; `lineComments`/`fileComments` assumed]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::Header;
use super::card::comment;
use crate::bitbucket::Page;
use crate::bitbucket::budget::Share;
use crate::bitbucket::model::{Change, Comment, Diff, PullRequest};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::FetchOutcome;
use crate::fetch::FetchRequest;
use crate::highlight::{HighlightJob, Highlighted, Language, Mark, Plain};
use crate::highlight_cache::HighlightCache;
use crate::limits;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, AvatarStage, People};
use crate::reads::compare::Refs;
use crate::reads::diff::{Range, Since};
use crate::reads::files::Place;
use crate::reads::insights::{Filter, InsightsRead, InsightsReader};
use crate::reads::{diff, pull_request, review};
use crate::tool::Call;

/// Files whose diffs one view carries; the others are listed, and the view says how many it left out.
pub const MAX_FILES: usize = 20;
/// Changed files listed: one page of Bitbucket's file tree.
pub const FILES_LIMIT: u64 = 100;
/// Commits a Commits tab lists: Bitbucket's page shows the first 25 and loads more as one scrolls [assumed].
pub const COMMITS_LIMIT: u64 = 25;

/// The reads of a diff view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffRead {
    /// The pull request, for the view's header: title, state, link and both branches.
    PullRequest,
    /// The first page of its changed files.
    Changes,
    /// The diff of the changed file at this index.
    File(usize),
    /// An avatar of someone whose comment the diff shows.
    Avatar(Avatar),
    /// The highlighting of the file at this index of the view's diffs.
    Highlight(usize),
    /// The person's pending review: their drafts (7.7+), for the review bar.
    Drafts,
    /// The source commit's Code Insights (a pull request's diff only), for the annotations on its lines.
    Insights(InsightsRead),
    /// The first page of the commits shown: a pull request's, or those one ref has that the other lacks (the
    /// Commits tab of Bitbucket's pull request page and of its compare page).
    Commits,
    /// A changed picture's bytes, of the file at this index: before (`false`) or after (`true`).
    Picture(usize, bool),
}

/// What a diff view shows the changes of.
#[derive(Debug)]
pub(super) enum Of {
    /// A pull request's, by id (kind `diff`): every change, or those after `since` (a commit, or the
    /// person's last review).
    PullRequest { id: u64, since: Option<String> },
    /// What one ref has that another lacks (kind `compare`), and how that kind words it.
    Refs(Refs, &'static RefsKind),
}

/// How a view of two refs asks for a file and words itself: given by [`super::compare`], which builds on
/// this module (so this one does not import it).
#[derive(Debug)]
pub(super) struct RefsKind {
    /// Lines of context around each change.
    pub context_lines: u64,
    /// The view's own part of `diff` (the two refs, the compare page), given the base URL.
    pub part: fn(&Refs, Option<&str>) -> Map<String, Value>,
    /// The text for the model, given the plan's count of files and lines.
    pub text: fn(&Refs, &str) -> String,
}

/// Starts a diff view of `project`/`repo`/`pr_id`.
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let since = crate::args::string(args, "since").map(str::to_owned);
    let mut first = vec![(DiffRead::PullRequest, pull_request::request(&project, &repo, id))];
    // With `since` the changes wait for the pull request: its source tip and the person's last review.
    if since.is_none() {
        first.push((DiffRead::Changes, diff::changes_request(&project, &repo, id, 0, FILES_LIMIT, None)));
    }
    first.push((DiffRead::Drafts, review::request(&project, &repo, id)));
    // The pull request page's Commits tab, its first page beside the rest: no round added.
    first.push((DiffRead::Commits, pull_request::commits_request(&project, &repo, id, 0, COMMITS_LIMIT)));
    open(Header::new("diff", args, call), call, project, repo, Of::PullRequest { id, since }, first)
}

/// Starts a diff view of `of` with its `first` reads.
pub(super) fn open(
    header: Header,
    call: &Call<'_>,
    project: String,
    repo: String,
    of: Of,
    first: Vec<(DiffRead, FetchRequest)>,
) -> Step {
    let view = DiffView {
        header,
        base_url: call.base_url.map(str::to_owned),
        templates: call.highlight_templates,
        project,
        repo,
        of,
        pr: None,
        changes: None,
        files: Vec::new(),
        share: share(1),
        avatars: AvatarStage::default(),
        people: People::default(),
        missing: Vec::new(),
        built: None,
        jobs: Vec::new(),
        awaited: BTreeSet::new(),
        you: call.bitbucket_user.map(str::to_owned),
        range: None,
        review: Value::Null,
        drafts: Value::Null,
        insights: None,
        commits: Value::Null,
        pictures: BTreeMap::new(),
        pictures_asked: false,
    };
    Step::wait(view, first)
}

#[derive(Debug)]
struct DiffView {
    header: Header,
    base_url: Option<String>,
    templates: bool,
    project: String,
    repo: String,
    of: Of,
    pr: Option<PullRequest>,
    changes: Option<Page<Change>>,
    /// The files whose diffs were asked for: path and what came back.
    files: Vec<(String, Option<Result<Diff, BitbucketError>>)>,
    /// How much of each file's diff the view keeps ([`share`]).
    share: Share,
    avatars: AvatarStage,
    people: People,
    missing: Vec<String>,
    /// The view's data, built once everything is read, highlighted in place as the jobs come back.
    built: Option<Value>,
    /// The files to highlight (index in the view's diffs, and the job), until asked for.
    jobs: Vec<(usize, HighlightJob)>,
    /// The files whose highlighting the answer waits for (not a template lexer's, which is never
    /// waited for), by index in the view's diffs.
    awaited: BTreeSet<usize>,
    /// Whom bb acts as, for the person's last review.
    you: Option<String>,
    /// The commits whose changes are shown, when `since` narrowed them.
    range: Option<Range>,
    /// The iterative review choice (`review` in VIEW_DATA.md), once the pull request is read.
    review: Value,
    /// The person's drafts (`drafts` in VIEW_DATA.md); null when not read or the server keeps none.
    drafts: Value,
    /// The source commit's Code Insights, asked for once the pull request names the commit.
    insights: Option<InsightsReader>,
    /// The Commits tab's first page (`commits` in VIEW_DATA.md); null when not read.
    commits: Value,
    /// Changed pictures' two sides, by path: `[before, after]`, each the file view's `picture` or null.
    pictures: BTreeMap<String, [Value; 2]>,
    /// The pictures' reads were asked for (once every diff is in).
    pictures_asked: bool,
}

impl Plan for DiffView {
    type Read = DiffRead;

    fn on(&mut self, read: DiffRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, DiffRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: self.id() };
        match read {
            DiffRead::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => {
                    if let FetchOutcome::Response(r) = &outcome
                        && let Some(user) = &r.user
                    {
                        self.you = Some(user.clone());
                    }
                    if let Err(e) = self.review_of(&pr, f) {
                        return Some(self.error(e, &outcome));
                    }
                    if let Some(c) = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref())
                        && let Some(id) = self.id()
                    {
                        // For the next card of this pull request, which reads these insights with the pull request.
                        f.commits().remember(&self.project, &self.repo, id, c);
                        let (reader, first) =
                            InsightsReader::new((&self.project, &self.repo, c), Some(&Filter::default()));
                        for (r, q) in first {
                            f.fetch(DiffRead::Insights(r), q);
                        }
                        self.insights = Some(reader);
                    }
                    self.pr = Some(pr);
                }
                Err(e) => return Some(self.error(e, &outcome)),
            },
            DiffRead::Changes => match diff::changes(&outcome, about) {
                Ok(page) => {
                    // A change Bitbucket gave no path (or a path without its text) is listed, never asked for as
                    // a path. [reference "Older servers": rec]
                    let paths: Vec<&str> = page.values.iter().filter_map(Change::named_path).take(MAX_FILES).collect();
                    self.share = share(paths.len());
                    // The files' grammars warm up on a CPU thread while the files are read.
                    f.warm_up(HighlightJob::warm_up(paths.iter().map(|p| (*p).to_owned()).collect(), self.templates));
                    for path in paths {
                        let path = path.to_owned();
                        f.fetch(DiffRead::File(self.files.len()), self.file_request(&path));
                        self.files.push((path, None));
                    }
                    self.changes = Some(page);
                }
                Err(e) => return Some(self.error(e, &outcome)),
            },
            DiffRead::File(i) => {
                if let Some(entry) = self.files.get_mut(i) {
                    entry.1 = Some(diff::file_within(&outcome, about, self.share));
                }
            }
            DiffRead::Avatar(a) => self.avatars.on(a, &outcome, f),
            DiffRead::Highlight(_) => {}
            DiffRead::Drafts => self.drafts = super::drafts(&outcome, about),
            DiffRead::Insights(r) => {
                if let Some(reader) = self.insights.as_mut() {
                    reader.on(r, &outcome, &mut |r, q| f.fetch(DiffRead::Insights(r), q));
                }
            }
            DiffRead::Picture(i, after) => {
                if let Some((path, Some(Ok(d)))) = self.files.get(i) {
                    let side = if after { d.destination.as_ref() } else { d.source.as_ref() };
                    let place = Place {
                        project: self.project.clone(),
                        repo: self.repo.clone(),
                        path: side.and_then(|p| p.whole.clone()).unwrap_or_else(|| path.clone()),
                        at: None,
                    };
                    let got = crate::reads::files::picture(&place, &outcome).unwrap_or(Value::Null);
                    self.pictures.entry(path.clone()).or_insert([Value::Null, Value::Null])[usize::from(after)] = got;
                }
            }
            DiffRead::Commits => match crate::reads::refs::commits(&outcome, about) {
                Ok(page) => {
                    let repo_url =
                        self.base_url.as_deref().map(|b| pull_request::repo_url(b, &self.project, &self.repo));
                    self.commits = commits_value(&page, repo_url.as_deref());
                }
                Err(e) => self.missing.push(format!("Commits: not read — {e}")),
            },
        }
        let read_all = self.changes.is_some() && (self.pr.is_some() || matches!(self.of, Of::Refs(..)));
        if f.waiting() > 0 || !read_all {
            return None;
        }
        if !self.pictures_asked {
            self.pictures_asked = true;
            if self.ask_pictures(f) {
                return None;
            }
        }
        if self.built.is_none() {
            self.built = Some(self.view(f.highlights()));
        }
        if self.avatars.ask(&self.people, f, DiffRead::Avatar) {
            return None;
        }
        // Every file not highlighted before goes to the shell as a job of its own; the answer waits
        // for them until the call's deadline (its work's), and never for a template lexer's.
        let jobs = std::mem::take(&mut self.jobs);
        if !jobs.is_empty() {
            for (index, job) in jobs {
                if !job.is_template() {
                    self.awaited.insert(index);
                }
                f.compute(DiffRead::Highlight(index), job);
            }
            f.want_work();
        }
        if self.awaited.is_empty() {
            return Some(self.finish(f));
        }
        None
    }

    fn room(&self) -> Option<u64> {
        Some(limits::VIEW_ROOM)
    }

    fn work(&mut self, last: bool, f: &mut Fetches<'_, '_, DiffRead>) -> Option<ToolResult> {
        // Nothing to step: the jobs run in the shell. The last step is the deadline: what has not
        // come back goes plain, marked so, and comes with the next read of the view (the cache).
        if !last {
            return None;
        }
        if let Some(view) = self.built.as_mut() {
            for index in std::mem::take(&mut self.awaited) {
                mark_plain(view, index, Plain::Deadline);
            }
        }
        Some(self.finish(f))
    }

    fn computed(&mut self, read: DiffRead, done: Highlighted, f: &mut Fetches<'_, '_, DiffRead>) -> Option<ToolResult> {
        let DiffRead::Highlight(index) = read else { return None };
        if let Some(view) = self.built.as_mut() {
            apply(view, index, &done.marks);
        }
        self.awaited.remove(&index);
        self.awaited.is_empty().then(|| self.finish(f))
    }
}

/// What one of `files` files' diffs may keep of its lines: an equal part of the view's whole, at least
/// a file's least ([`crate::limits`]).
fn share(files: usize) -> Share {
    let files = files.max(1);
    Share {
        lines: (limits::VIEW_DIFF_LINES / files).max(limits::FILE_DIFF_LINES),
        bytes: (limits::VIEW_DIFF_BYTES / files).max(limits::FILE_DIFF_BYTES),
    }
}

/// Gives each suggestion drawn on a line of these hunks the lines it would replace, as the diff shows them on the
/// new side (`old` in VIEW_DATA.md), when every one of them is in the hunks; a suggestion on a removed line, or
/// one reaching past the hunks, keeps `old: null`.
fn fill_suggestions(hunks: &mut [Value]) {
    let mut new_side: BTreeMap<u64, String> = BTreeMap::new();
    for l in hunks.iter().flat_map(|h| h["lines"].as_array().into_iter().flatten()) {
        if let (Some(n), Some(text)) = (l["n"].as_u64(), l["s"].as_str()) {
            new_side.insert(n, text.to_owned());
        }
    }
    for l in hunks.iter_mut().flat_map(|h| h["lines"].as_array_mut().into_iter().flatten()) {
        for thread in l.get_mut("c").and_then(Value::as_array_mut).into_iter().flatten() {
            if thread["anchor"]["lineType"] == "REMOVED" {
                continue;
            }
            for s in thread.get_mut("suggestions").and_then(Value::as_array_mut).into_iter().flatten() {
                if let (Some(from), Some(to)) = (s["from"].as_u64(), s["to"].as_u64()) {
                    let old: Option<Vec<&String>> = (from..=to).map(|n| new_side.get(&n)).collect();
                    if let Some(old) = old {
                        // The lines already read as it proposes: there is nothing left to apply, whoever changed them.
                        if s["new"]
                            .as_array()
                            .is_some_and(|new| new.iter().map(Value::as_str).eq(old.iter().map(|o| Some(o.as_str()))))
                        {
                            s["applied"] = json!(true);
                        }
                        s["old"] = json!(old);
                    }
                }
            }
        }
    }
}

/// Every line of the view's file `index`, in order.
fn lines_of(view: &mut Value, index: usize) -> impl Iterator<Item = &mut Value> {
    view["diffs"][index]["hunks"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .flat_map(|h| h["lines"].as_array_mut().into_iter().flatten())
}

/// Sets each line's runs, or why it is plain.
fn apply(view: &mut Value, index: usize, marks: &[Mark]) {
    mark_lines(lines_of(view, index), marks);
}

/// Sets the runs of each of `lines` (view lines, `{s, r?, p?}`), or why it is plain, from `marks` in order:
/// the diff's and the file view's lines alike.
pub(super) fn mark_lines<'a>(lines: impl Iterator<Item = &'a mut Value>, marks: &[Mark]) {
    for (line, mark) in lines.zip(marks) {
        if let Some(o) = line.as_object_mut() {
            o.remove("p");
            o.remove("r");
        }
        match mark {
            Mark::Runs(r) => line["r"] = json!(r),
            Mark::Plain(why) => line["p"] = json!(why.as_str()),
        }
    }
}

/// Marks every line of file `index` plain, for `why`.
fn mark_plain(view: &mut Value, index: usize, why: Plain) {
    for line in lines_of(view, index) {
        if line.get("r").is_none() {
            line["p"] = json!(why.as_str());
        }
    }
}

/// A page of commits as the Commits tab lists them (the form's shape): newest first, each with its short id, the
/// first line of its message, its author's name, when it was written and its page in Bitbucket (under `repo_url`);
/// `more` when Bitbucket has more.
fn commits_value(page: &Page<crate::bitbucket::model::Commit>, repo_url: Option<&str>) -> Value {
    let items: Vec<Value> = page
        .values
        .iter()
        .map(|c| {
            json!({"id": c.id, "short": c.display_id,
                   "message": c.message.as_deref().map(|m| crate::text::one_line(m.lines().next().unwrap_or(""))),
                   "author": c.author.as_ref().and_then(|a| a.display_name.clone().or(a.name.clone())),
                   "at": c.author_timestamp,
                   "url": repo_url.zip(c.id.as_deref()).map(|(r, id)| format!("{r}/commits/{}", crate::bitbucket::segment(id)))})
        })
        .collect();
    json!({"items": items, "more": page.next.is_some()})
}

impl DiffView {
    /// The pull request's id, for a pull request's diff.
    fn id(&self) -> Option<u64> {
        match self.of {
            Of::PullRequest { id, .. } => Some(id),
            Of::Refs(..) => None,
        }
    }

    /// The iterative review choice once the pull request is read; with `since`, the range it names and
    /// the changes of that range asked for (an empty list when nothing changed since).
    fn review_of(&mut self, pr: &PullRequest, f: &mut Fetches<'_, '_, DiffRead>) -> Result<(), String> {
        let Of::PullRequest { id, since } = &self.of else { return Ok(()) };
        let id = *id;
        let last = self.you.as_deref().and_then(|you| diff::last_reviewed(pr, you)).map(str::to_owned);
        let Some(asked) = since.clone() else {
            // Reviewed up to the source's head (a finished review sets it): nothing since, said as 0.
            let head = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
            let commits = if last.is_some() && last.as_deref() == head { json!(0) } else { Value::Null };
            self.review = json!({"lastReviewed": last, "since": null, "commits": commits});
            return Ok(());
        };
        let shown_since = match diff::since(pr, &asked, self.you.as_deref()) {
            Since::Range { range, .. } => {
                let from = range.since.clone();
                self.range = Some(range);
                Some(from)
            }
            Since::NoReview { .. } => None,
            Since::Nothing { commit } => {
                // Nothing after it: no changes to ask for.
                self.changes = Some(Page { values: Vec::new(), unreadable: 0, start: 0, next: None });
                self.review = json!({"lastReviewed": last, "since": commit, "commits": 0});
                return Ok(());
            }
            Since::Unknown(e) => return Err(e),
        };
        self.review = json!({"lastReviewed": last, "since": shown_since, "commits": null});
        let request = diff::changes_request(&self.project, &self.repo, id, 0, FILES_LIMIT, self.range.as_ref());
        f.fetch(DiffRead::Changes, request);
        Ok(())
    }

    /// One file's diff: a pull request's with its comments, two refs' with three lines of context as
    /// compare_refs asks.
    fn file_request(&self, path: &str) -> FetchRequest {
        match &self.of {
            Of::PullRequest { id, .. } => {
                diff::file_request(&self.project, &self.repo, *id, path, None, self.range.as_ref())
            }
            Of::Refs(refs, kind) => refs.file_request(path, kind.context_lines),
        }
        .keeping(self.share)
    }

    /// The answer when the view could not be built, with the page to open in Bitbucket.
    fn error(&self, e: impl Into<String>, outcome: &FetchOutcome) -> ToolResult {
        let base = self.base_url.as_deref();
        match &self.of {
            Of::PullRequest { id, .. } => {
                self.header.error(e, base.map(|b| pull_request::page_url(b, &self.project, &self.repo, *id)))
            }
            Of::Refs(refs, _) => self.header.error(refs.error(e, outcome), base.map(|b| refs.page_url(b))),
        }
    }

    fn finish<R>(&mut self, f: &mut Fetches<'_, '_, R>) -> ToolResult {
        let view = self.built.take().unwrap_or(Value::Null);
        let now = f.now_ms();
        let users = self.people.to_value(&f.avatars(), now, self.base_url.as_deref());
        let files = view["files"].as_array().map_or(0, Vec::len);
        let shown = view["diffs"].as_array().map_or(0, Vec::len);
        let lines: usize = view["diffs"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|d| d["hunks"].as_array().into_iter().flatten())
            .map(|h| h["lines"].as_array().map_or(0, Vec::len))
            .sum();
        let comments = count_threads(&view);
        let left: u64 = view["diffs"].as_array().into_iter().flatten().filter_map(|d| d["leftOut"].as_u64()).sum();
        let left = if left > 0 { format!(", {left} more left in Bitbucket") } else { String::new() };
        let more = if view["filesMore"] == true { ", more files exist" } else { "" };
        let text = match &self.of {
            Of::PullRequest { id, .. } => {
                let since = match self.review["since"].as_str() {
                    Some(c) => format!(" since commit {}", crate::text::short_commit(Some(c))),
                    None => String::new(),
                };
                format!(
                    "Showing the diff of PR #{id} in {}/{}{since} to the person: {files} changed file(s){more}, {shown} with their diff ({lines} lines{left}, {comments} comment thread(s)).",
                    self.project, self.repo
                )
            }
            Of::Refs(refs, kind) => (kind.text)(
                refs,
                &format!("{files} changed file(s){more}, {shown} with their diff ({lines} lines{left})"),
            ),
        };
        self.header.result(text, users, self.missing.clone(), ("diff", view))
    }

    /// The view's data (`diff` in VIEW_DATA.md), with every line plain; highlighting fills in runs.
    fn view(&mut self, cache: &HighlightCache) -> Value {
        let pr = self.pr.clone().unwrap_or_default();
        let base = self.base_url.clone();
        let files_more = self.changes.as_ref().is_some_and(|p| p.next.is_some());
        // Annotations only where they were read whole: a server without Code Insights, or one whose annotations
        // failed, draws none (and the latter says so in `missing`).
        let reader = self.insights.take();
        let notes = self.annotations(reader.as_ref());
        let by_path = notes.as_ref().map(|(list, _)| super::insights::counts_by_path(list));
        let files: Vec<Value> = self
            .changes
            .as_ref()
            .map(|p| &p.values[..])
            .unwrap_or(&[])
            .iter()
            .map(|c| {
                let mut file = json!({"path": c.path(), "srcPath": c.src_path.as_ref().and_then(|p| p.whole.clone()),
                       "type": c.kind, "comments": c.properties.as_ref().and_then(|p| p.active_comments),
                       "conflicted": c.conflict.is_some()});
                if self.id().is_some() {
                    file["annotations"] = json!(by_path.as_ref().map(|m| m.get(c.path()).copied().unwrap_or(0)));
                }
                file
            })
            .collect();
        let drawn: Vec<(String, (Value, usize))> = match &notes {
            Some((list, titles)) => self
                .files
                .iter()
                .map(|(path, _)| (path.clone(), super::insights::for_file(list, path, titles)))
                .collect(),
            None => Vec::new(),
        };
        let mut diffs = Vec::new();
        let conflicted: BTreeSet<String> = self
            .changes
            .as_ref()
            .map(|p| p.values.iter().filter(|c| c.conflict.is_some()).map(|c| c.path().to_owned()).collect())
            .unwrap_or_default();
        for (path, got) in std::mem::take(&mut self.files) {
            match got {
                Some(Ok(d)) => {
                    let index = diffs.len();
                    let (mut value, job) = self.file(&path, &d, index, cache);
                    value["conflicted"] = json!(conflicted.contains(&path));
                    if let Some([before, after]) = self.pictures.remove(&path) {
                        value["pictures"] = json!({"before": before, "after": after});
                    }
                    if let Some((_, (list, more))) = drawn.iter().find(|(p, _)| *p == path) {
                        value["annotations"] = list.clone();
                        value["annotationsMore"] = json!(more);
                    }
                    diffs.push(value);
                    self.jobs.extend(job);
                }
                Some(Err(e)) => {
                    self.missing.push(format!("The diff of {path}: not read — {e}"));
                    diffs.push(json!({"path": path, "error": e.said()}));
                }
                None => diffs.push(json!({"path": path, "error": "not read"})),
            }
        }
        let listed = files.len();
        if let Of::Refs(refs, kind) = &self.of {
            let mut part = (kind.part)(refs, base.as_deref());
            // "Show more" reads the files on each side at the two refs (the file kind, by refresh_view).
            part.insert("expand".into(), json!({"new": refs.from, "old": refs.to}));
            part.insert("files".into(), json!(files));
            part.insert("filesMore".into(), json!(files_more));
            part.insert("diffs".into(), json!(diffs));
            part.insert("notCarried".into(), json!(listed.saturating_sub(MAX_FILES)));
            part.insert("commits".into(), self.commits.clone());
            return Value::Object(part);
        }
        json!({
            "id": pr.id.or(self.id()),
            "title": pr.title.as_deref().unwrap_or(""),
            "url": pr.links.as_ref().and_then(|l| l.href()),
            "state": pr.state.as_deref().unwrap_or("OPEN"),
            "updated": pr.updated_date,
            "project": self.project,
            "repo": self.repo,
            "source": super::card::branch(pr.from_ref.as_ref(), base.as_deref()),
            "target": super::card::branch(pr.to_ref.as_ref(), base.as_deref()),
            "files": files,
            "filesMore": files_more,
            "diffs": diffs,
            "notCarried": listed.saturating_sub(MAX_FILES),
            "head": pr.from_ref.as_ref().and_then(|r| r.latest_commit.clone()),
            "drafts": if pr.state.as_deref() == Some("OPEN") { self.drafts.clone() } else { Value::Null },
            // "Show more" reads the new side at the source's tip, the old at the target's (the file kind).
            "expand": match (pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref()),
                             pr.to_ref.as_ref().and_then(|r| r.latest_commit.as_deref())) {
                (Some(new), Some(old)) => json!({"new": new, "old": old}),
                _ => Value::Null,
            },
            "review": self.review,
            "commits": self.commits,
        })
    }

    /// Each changed picture's two sides (issue 54: a changed image's diff shows before and after): the old file at
    /// the target's tip (Bitbucket's diff is from the merge base, which holds the same file unless the target changed
    /// it since [bb's choice]) and the new at the source's, each to [`crate::pictures::VIEW_BYTES`]; an added file
    /// has no before, a deleted one no after. Whether any was asked for.
    fn ask_pictures(&mut self, f: &mut Fetches<'_, '_, DiffRead>) -> bool {
        let (new, old) = match (&self.of, &self.pr) {
            (Of::Refs(refs, _), _) => (Some(refs.from.clone()), Some(refs.to.clone())),
            (Of::PullRequest { .. }, Some(pr)) => (
                pr.from_ref.as_ref().and_then(|r| r.latest_commit.clone()),
                pr.to_ref.as_ref().and_then(|r| r.latest_commit.clone()),
            ),
            _ => (None, None),
        };
        let mut asked = false;
        for (i, (path, got)) in self.files.iter().enumerate() {
            let Some(Ok(d)) = got else { continue };
            if d.binary != Some(true) || !crate::pictures::named(path) {
                continue;
            }
            for (after, side, at) in [(false, d.source.as_ref(), &old), (true, d.destination.as_ref(), &new)] {
                let (Some(side), Some(at)) = (side.and_then(|p| p.whole.clone()), at) else { continue };
                let place =
                    Place { project: self.project.clone(), repo: self.repo.clone(), path: side, at: Some(at.clone()) };
                f.fetch(DiffRead::Picture(i, after), place.raw_request(crate::pictures::VIEW_BYTES));
                asked = true;
            }
        }
        asked
    }

    /// The annotations read whole and each report's title; `None` without them (a compare view, a server without
    /// Code Insights, a read that failed, which is noted in `missing`).
    fn annotations<'r>(
        &mut self,
        reader: Option<&'r InsightsReader>,
    ) -> Option<(&'r [crate::reads::insights::Annotation], BTreeMap<String, String>)> {
        let reader = reader?;
        if reader.absent {
            return None;
        }
        if let Some(e) = reader.annotations_error.as_ref() {
            self.missing.push(format!("Code Insights annotations: not read — {e}"));
            return None;
        }
        let list = reader.annotations.as_deref()?;
        if reader.unreadable > 0 {
            self.missing.push(super::insights::unreadable_line(reader.unreadable));
        }
        Some((list, super::insights::titles(reader)))
    }

    /// One file's diff as the page draws it, and the job that highlights it (none when the same lines
    /// were highlighted whole before: their marks come from the cache).
    fn file(
        &mut self,
        path: &str,
        d: &Diff,
        index: usize,
        cache: &HighlightCache,
    ) -> (Value, Option<(usize, HighlightJob)>) {
        let base = self.base_url.clone();
        let people = &mut self.people;
        let roots: BTreeMap<u64, &Comment> = d.line_comments.iter().filter_map(|c| Some((c.id?, c))).collect();
        let mut placed = BTreeSet::new();
        let mut first_line = None;
        let mut hunks = Vec::new();
        for h in &d.hunks {
            let mut lines = Vec::new();
            for s in &h.segments {
                let kind = match s.kind.as_deref() {
                    Some("ADDED") => "A",
                    Some("REMOVED") => "R",
                    _ => "C",
                };
                for l in &s.lines {
                    let text = l.line.as_deref().unwrap_or("");
                    first_line.get_or_insert_with(|| text.to_owned());
                    // Line numbers as Bitbucket's gutters show them: a removed line has only its old
                    // number, an added one only its new one. [reference "Diff and changes": rec]
                    let (old, new) = match kind {
                        "A" => (None, l.destination),
                        "R" => (l.source, None),
                        _ => (l.source, l.destination),
                    };
                    // A context line leaves out its type: most lines of a diff are context.
                    let mut line = if kind == "C" { json!({"s": text}) } else { json!({"t": kind, "s": text}) };
                    if let Some(o) = old {
                        line["o"] = json!(o);
                    }
                    if let Some(n) = new {
                        line["n"] = json!(n);
                    }
                    if l.truncated == Some(true) {
                        line["cut"] = json!(true);
                    }
                    let threads: Vec<Value> = l
                        .comment_ids
                        .iter()
                        .filter_map(|id| roots.get(id))
                        .filter(|c| c.id.is_some_and(|id| placed.insert(id)))
                        .map(|c| comment(c, false, people, base.as_deref(), 0))
                        .collect();
                    if !threads.is_empty() {
                        line["c"] = Value::Array(threads);
                    }
                    lines.push(line);
                }
            }
            hunks.push(json!({
                "context": h.context,
                "old": [h.source_line, h.source_span],
                "new": [h.destination_line, h.destination_span],
                "truncated": h.truncated == Some(true) || h.segments.iter().any(|s| s.truncated == Some(true)),
                "lines": lines,
            }));
        }
        fill_suggestions(&mut hunks);
        let file_comments: Vec<Value> =
            d.file_comments.iter().map(|c| comment(c, false, people, base.as_deref(), 0)).collect();
        // Roots no line lists: their line is gone (orphaned); the activity shows them, marked outdated.
        let unplaced = roots.keys().filter(|id| !placed.contains(id)).count();
        let language = Language::detect(path, first_line.as_deref());
        let key = language.map(|l| {
            let lines = hunks.iter().flat_map(|h| h["lines"].as_array().into_iter().flatten()).map(|l| {
                let side = l.get("t").and_then(Value::as_str).and_then(|t| t.bytes().next()).unwrap_or(b'C');
                (side, l["s"].as_str().unwrap_or(""))
            });
            HighlightCache::key(l.name(), self.templates, lines)
        });
        let cached = key.and_then(|k| cache.get(k));
        if let Some(marks) = cached {
            let lines = hunks.iter_mut().flat_map(|h| h["lines"].as_array_mut().into_iter().flatten());
            for (line, mark) in lines.zip(marks) {
                match mark {
                    Mark::Runs(r) => line["r"] = json!(r),
                    Mark::Plain(why) => line["p"] = json!(why.as_str()),
                }
            }
        }
        // A template lexer's lines go out plain, said so, until its job has come back.
        let pending_template = cached.is_none() && language.is_some_and(|l| l.is_template());
        if pending_template {
            for line in hunks.iter_mut().flat_map(|h| h["lines"].as_array_mut().into_iter().flatten()) {
                line["p"] = json!(Plain::Template.as_str());
            }
        }
        let value = json!({
            "path": path,
            "srcPath": d.source.as_ref().and_then(|p| p.whole.clone()),
            "binary": d.binary == Some(true),
            "truncated": d.truncated == Some(true),
            "language": language.map(|l| l.name()),
            "fileComments": file_comments,
            "outdatedComments": unplaced,
            "hunks": hunks,
        });
        let mut value = value;
        if d.left_out > 0 {
            // Lines past the view's share of this file: skipped as they were read ([`share`]).
            value["leftOut"] = json!(d.left_out);
        }
        if let Some(n) = d.context_lines {
            // The page's Show more below the last hunk: fewer context lines after its last change than
            // this, and the file ends there.
            value["contextLines"] = json!(n);
        }
        let job = match (language, key) {
            // Without --highlight-templates a template lexer's lines are plain: nothing to run.
            (Some(l), Some(key)) if cached.is_none() && (self.templates || !l.is_template()) => {
                let lines = value["hunks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|h| h["lines"].as_array().into_iter().flatten())
                    .map(|l| {
                        let side = l.get("t").and_then(Value::as_str).and_then(|t| t.bytes().next()).unwrap_or(b'C');
                        (side, l["s"].as_str().unwrap_or("").to_owned())
                    })
                    .collect();
                Some((index, HighlightJob::new(key, l, self.templates, lines)))
            }
            _ => None,
        };
        (value, job)
    }
}

/// How many threads a view draws (on lines and at the top of files).
fn count_threads(view: &Value) -> usize {
    let mut n = 0;
    for d in view["diffs"].as_array().into_iter().flatten() {
        n += d["fileComments"].as_array().map_or(0, Vec::len);
        for h in d["hunks"].as_array().into_iter().flatten() {
            for l in h["lines"].as_array().into_iter().flatten() {
                n += l["c"].as_array().map_or(0, Vec::len);
            }
        }
    }
    n
}
