//! A file at a ref (`show` kind `file`): a window of its lines as Bitbucket's source view shows them,
//! numbered, highlighted in bb under the same deadline and cache as the diff; with `blame: true` (the page
//! asks for it when the person turns blame on in full screen) who last changed each line beside it. The
//! diff view reads the lines it expands ("Show more") through this kind, by `refresh_view`.
//!
//! Requests, in one stage: the window (`…/browse/{path}?at&start&limit`) and, with `blame`, the blame of the
//! same lines (`…/browse/{path}?at&blame&noContent&start&limit`) [`crate::reads::files`]. Then the lines are
//! highlighted as one job: a window highlighted on its own starts in the language's first state, so a window
//! that opens inside a block comment is drawn as code until the comment's end [inferred: bat and Bitbucket
//! highlight whole files; bb reads only the window].

use serde_json::{Map, Value, json};

use super::Header;
use crate::args::{flag, number};
use crate::bitbucket::model::User;
use crate::bitbucket::segment;
use crate::bitbucket::window::{self, LineShare};
use crate::errors::BitbucketError;
use crate::fetch::FetchOutcome;
use crate::highlight::{HighlightJob, Highlighted, Language, Mark, Plain};
use crate::highlight_cache::HighlightCache;
use crate::limits;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, AvatarStage, People};
use crate::reads::files::{self, Blame, Browsed, Lines, Place};
use crate::reads::pull_request;
use crate::tool::Call;

/// The kind's name.
pub const KIND: &str = "file";
/// Lines a view carries by default (get_file's default window).
const WINDOW: u64 = 200;
/// The longest line the view carries whole; a longer one is cut, its length said.
const LINE_CHARS: usize = 2_000;
/// What a view keeps of Bitbucket's answer as it is read: lines cut at [`LINE_CHARS`], and at most
/// [`limits::VIEW_FILE_BYTES`] of line text (the window then ends early and says the file goes on).
const SHARE: LineShare = LineShare { bytes: limits::VIEW_FILE_BYTES, line_chars: LINE_CHARS };

/// The reads of a file view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRead {
    /// The window of lines.
    Lines,
    /// The blame of the same lines.
    Blame,
    /// The highlighting of the lines.
    Highlight,
    /// An avatar of a blame entry's author (the card draws the same people with theirs).
    Avatar(Avatar),
    /// The default branch, for the ref chip's name when the call names no ref.
    Branch,
    /// A picture's bytes (a binary file whose name says picture, or an SVG), to draw it.
    Raw,
}

/// The argument only the view takes (the page asks for it): blame beside the lines.
pub fn extend_schema(schema: &mut Value) {
    if let Some(p) = schema["properties"].as_object_mut() {
        p.insert("blame".into(), json!({"type": "boolean", "description": "Who last changed each line"}));
    }
}

/// Starts a view of the file the arguments name (get_file's arguments, and `blame`).
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let header = Header::new(KIND, args, call);
    let (project, repo) = crate::args::repository(args);
    let path = crate::args::string(args, "path").unwrap_or("").trim_matches('/').to_owned();
    if path.is_empty() {
        return Step::Done(
            header.error("`path` names no file: give the file's path from the repository's root.", None),
        );
    }
    let place = Place { project, repo, path, at: crate::args::string(args, "at").map(str::to_owned) };
    let first_line = number(args, "start_line").unwrap_or(1).max(1);
    let count = number(args, "line_count").unwrap_or(WINDOW).max(1);
    let blame = flag(args, "blame").unwrap_or(false);
    let mut first = vec![(FileRead::Lines, place.window_request(first_line - 1, count, SHARE))];
    if blame {
        first.push((FileRead::Blame, place.blame_request(first_line - 1, count)));
    }
    if place.at.is_none() {
        first.push((FileRead::Branch, crate::reads::repository::default_branch_request(&place.project, &place.repo)));
    }
    let view = FileView {
        header,
        base_url: call.base_url.map(str::to_owned),
        templates: call.highlight_templates,
        place,
        blame_asked: blame,
        branch: None,
        branch_commit: None,
        lines: None,
        dropped: 0,
        blame: None,
        built: None,
        awaited: false,
        people: People::default(),
        avatars: AvatarStage::default(),
        users: json!({}),
        picture: None,
        binary: false,
    };
    Step::wait(view, first)
}

#[derive(Debug)]
struct FileView {
    header: Header,
    base_url: Option<String>,
    templates: bool,
    place: Place,
    blame_asked: bool,
    /// The default branch's name, when the call names no ref and Bitbucket said it.
    branch: Option<String>,
    /// The commit the default branch points at, when the call names no ref and Bitbucket said it.
    branch_commit: Option<String>,
    lines: Option<Lines>,
    /// Lines of the window past the view's bytes, not carried.
    dropped: u64,
    blame: Option<Result<Vec<Blame>, BitbucketError>>,
    built: Option<Value>,
    awaited: bool,
    /// The blame's authors: their avatars are read beside the lines once the blame names them.
    people: People,
    avatars: AvatarStage,
    /// The view's `users`, made when the view is built.
    users: Value,
    /// The picture the file is, read to [`crate::pictures::VIEW_BYTES`]: `{mimeType, name, width, height,
    /// bytes, data}` (`data` base64, absent past the cap).
    picture: Option<Value>,
    /// Bitbucket said the file is binary.
    binary: bool,
}

impl Plan for FileView {
    type Read = FileRead;

    fn on(&mut self, read: FileRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, FileRead>) -> Option<ToolResult> {
        match read {
            FileRead::Lines => match files::browsed_within(&outcome, &self.place, SHARE) {
                Ok(Browsed::Lines(l)) => {
                    self.dropped = l.dropped;
                    self.lines = Some(l);
                    // An SVG is text to Bitbucket's browse; the view draws it as the picture it is too.
                    if crate::pictures::is_svg_name(&self.place.path) {
                        f.fetch(FileRead::Raw, self.place.raw_request(crate::pictures::VIEW_BYTES));
                    }
                }
                Ok(Browsed::Binary) if crate::pictures::named(&self.place.path) => {
                    self.binary = true;
                    f.fetch(FileRead::Raw, self.place.raw_request(crate::pictures::VIEW_BYTES));
                }
                Ok(Browsed::Binary) => return Some(self.binary()),
                Ok(Browsed::Folder(_)) => {
                    return Some(self.error(format!("{} is a folder, not a file.", self.place.name())));
                }
                Ok(Browsed::Other) => {
                    return Some(self.error(format!(
                        "{} is neither a text file nor a folder (a submodule, or an entry bb cannot read).",
                        self.place.name()
                    )));
                }
                Err(e) => {
                    let said = e.bitbucket_said();
                    return Some(self.header.error_said(e.into(), self.url(1), said));
                }
            },
            FileRead::Blame => {
                self.blame = Some(files::blame(&outcome, &self.place).map(|(b, _)| b));
                if let Some(Ok(entries)) = &self.blame {
                    for b in entries {
                        if let Some(slug) = b.user.as_deref().filter(|u| !u.is_empty()) {
                            let user = User {
                                name: Some(slug.to_owned()),
                                slug: Some(slug.to_owned()),
                                display_name: Some(b.author.clone()).filter(|a| !a.trim().is_empty()),
                                kind: None,
                            };
                            self.people.note(&user);
                        }
                    }
                    self.avatars.early(&self.people, f, FileRead::Avatar);
                }
            }
            FileRead::Avatar(a) => self.avatars.on(a, &outcome, f),
            FileRead::Highlight => {}
            FileRead::Raw => self.picture = files::picture(&self.place, &outcome),
            FileRead::Branch => {
                let about = crate::errors::Subject { project: &self.place.project, repo: &self.place.repo, pr: None };
                if let Ok(b) = crate::reads::repository::default_branch(&outcome, about) {
                    self.branch = b.display_id;
                    self.branch_commit = b.latest_commit;
                }
            }
        }
        if f.waiting() > 0 || self.built.is_some() {
            return None;
        }
        if self.binary {
            return Some(self.binary());
        }
        let now = f.now_ms();
        self.users = self.people.to_value(&f.avatars(), now, self.base_url.as_deref());
        let (view, job) = self.view(f.highlights());
        self.built = Some(view);
        match job {
            Some(job) => {
                self.awaited = !job.is_template();
                f.compute(FileRead::Highlight, job);
                f.want_work();
                if self.awaited { None } else { Some(self.finish()) }
            }
            None => Some(self.finish()),
        }
    }

    fn room(&self) -> Option<u64> {
        Some(limits::VIEW_ROOM)
    }

    fn work(&mut self, last: bool, _: &mut Fetches<'_, '_, FileRead>) -> Option<ToolResult> {
        if !last || !self.awaited {
            return None;
        }
        if let Some(view) = self.built.as_mut() {
            for line in view["lines"].as_array_mut().into_iter().flatten() {
                if line.get("r").is_none() {
                    line["p"] = json!(Plain::Deadline.as_str());
                }
            }
        }
        self.awaited = false;
        Some(self.finish())
    }

    fn computed(&mut self, _: FileRead, done: Highlighted, _: &mut Fetches<'_, '_, FileRead>) -> Option<ToolResult> {
        if let Some(view) = self.built.as_mut() {
            apply(view, &done.marks);
        }
        if !self.awaited {
            return None;
        }
        self.awaited = false;
        Some(self.finish())
    }
}

/// "a PNG picture, 10×10 pixels (812 bytes), drawn" for the model's sentence.
fn picture_words(p: &Value) -> String {
    let name = p["name"].as_str().unwrap_or("picture");
    let size = match (p["width"].as_u64(), p["height"].as_u64()) {
        (Some(w), Some(h)) => format!(", {w}×{h} pixels"),
        _ => String::new(),
    };
    match p["bytes"].as_u64() {
        Some(n) => format!("a {name} picture{size} ({}), drawn as Bitbucket draws it", crate::pictures::bytes_words(n)),
        None => format!(
            "a {name} picture{size}, larger than the {} a view carries: Bitbucket's page shows it",
            crate::pictures::bytes_words(crate::pictures::VIEW_BYTES as u64)
        ),
    }
}

/// Sets each line's runs, or why it is plain.
fn apply(view: &mut Value, marks: &[Mark]) {
    super::diff::mark_lines(view["lines"].as_array_mut().into_iter().flatten(), marks);
}

impl FileView {
    /// Bitbucket's source page of the file at the ref, at the window's first line.
    fn url(&self, line: u64) -> Option<String> {
        let base = self.base_url.as_deref()?;
        let p = &self.place;
        let path = crate::bitbucket::file_path(&p.path);
        let at = p.at.as_deref().map(|a| format!("?at={}", segment(a))).unwrap_or_default();
        Some(format!("{}/browse/{path}{at}#{line}", pull_request::repo_url(base, &p.project, &p.repo)))
    }

    fn error(&self, e: String) -> ToolResult {
        self.header.error(e, self.url(1))
    }

    /// The part every answer carries: where the file is.
    fn part(&self) -> Value {
        let p = &self.place;
        // The commit the ref resolved to, where bb knows it without another read: a full hash as asked, or the
        // default branch's head when the call names no ref.
        let full = |c: &str| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit());
        let commit = match p.at.as_deref() {
            Some(at) => Some(at).filter(|a| full(a)).map(str::to_owned),
            None => self.branch_commit.clone().filter(|c| full(c)),
        };
        json!({"project": p.project, "repo": p.repo, "path": p.path, "at": p.at,
               "atLabel": p.at.as_deref().or(self.branch.as_deref()).unwrap_or("default branch"), "commit": commit})
    }

    fn binary(&mut self) -> ToolResult {
        let mut part = self.part();
        part["binary"] = json!(true);
        part["lines"] = json!([]);
        part["url"] = json!(self.url(1));
        let what = match &self.picture {
            Some(p) => picture_words(p),
            None => "a binary file, which Bitbucket shows on its own page".to_owned(),
        };
        if let Some(p) = self.picture.take() {
            part["picture"] = p;
        }
        let text = format!("Showing {} to the person: {what}.", self.place.name());
        self.header.result(text, json!({}), Vec::new(), ("file", part))
    }

    /// The view's data with every line plain, and the job that highlights it (none when cached or unknown).
    fn view(&mut self, cache: &HighlightCache) -> (Value, Option<HighlightJob>) {
        let page = self.lines.take().unwrap_or_default();
        let start = page.start + 1;
        let end = page.start + page.lines.len() as u64;
        let language = Language::detect(&self.place.path, page.lines.first().map(String::as_str));
        let mut lines: Vec<Value> = Vec::with_capacity(page.lines.len());
        let mut texts: Vec<String> = Vec::with_capacity(page.lines.len());
        for (i, text) in page.lines.into_iter().enumerate() {
            let mut line = json!({"n": start + i as u64});
            // Cut as it was read (its whole length kept), or here when the lines came whole.
            let (kept, whole) = window::cut(text, LINE_CHARS);
            if let Some(whole) = page.cut.get(&i).copied().or(whole) {
                line["cut"] = json!(whole);
            }
            line["s"] = json!(kept);
            texts.push(kept);
            lines.push(line);
        }
        let key =
            language.map(|l| HighlightCache::key(l.name(), self.templates, texts.iter().map(|t| (b'C', t.as_str()))));
        let cached = key.and_then(|k| cache.get(k));
        let mut part = self.part();
        part["start"] = json!(start);
        part["end"] = json!(end);
        part["last"] = json!(page.last);
        part["total"] = if page.last { json!(end) } else { Value::Null };
        part["language"] = json!(language.map(|l| l.name()));
        part["url"] = json!(self.url(start));
        part["binary"] = json!(false);
        part["lines"] = Value::Array(lines);
        part["blame"] = self.blame_value(start, end);
        if let Some(p) = self.picture.take() {
            part["picture"] = p;
        }
        if let Some(marks) = cached {
            apply(&mut part, marks);
        }
        let job = match (language, key) {
            (Some(l), Some(key)) if cached.is_none() && (self.templates || !l.is_template()) => {
                Some(HighlightJob::new(key, l, self.templates, texts.into_iter().map(|t| (b'C', t)).collect()))
            }
            (Some(l), _) if cached.is_none() && l.is_template() => {
                for line in part["lines"].as_array_mut().into_iter().flatten() {
                    line["p"] = json!(Plain::Template.as_str());
                }
                None
            }
            _ => None,
        };
        (part, job)
    }

    /// The blame of the carried lines, each entry clipped to them; `null` when not asked or not read.
    fn blame_value(&mut self, start: u64, end: u64) -> Value {
        match self.blame.take() {
            Some(Ok(entries)) => Value::Array(
                entries
                    .into_iter()
                    .filter_map(|b| {
                        let from = b.line.max(start);
                        let to = (b.line + b.spanned - 1).min(end);
                        (from <= to).then(|| {
                            json!({"from": from, "to": to, "commit": b.commit, "author": b.user, "name": b.author, "at": b.at})
                        })
                    })
                    .collect(),
            ),
            _ => Value::Null,
        }
    }

    fn finish(&mut self) -> ToolResult {
        let view = self.built.take().unwrap_or(Value::Null);
        let mut missing = Vec::new();
        if self.blame_asked && view["blame"].is_null() {
            missing.push("Blame: not read.".to_owned());
        }
        let (start, end) = (view["start"].as_u64().unwrap_or(1), view["end"].as_u64().unwrap_or(0));
        let which = if end < start {
            "no lines there".to_owned()
        } else if view["last"] == true && start == 1 {
            format!("all {end} lines")
        } else if view["last"] == true {
            format!("lines {start}-{end} of {end}")
        } else {
            format!("lines {start}-{end}")
        };
        let cut = if self.dropped > 0 {
            format!(
                " The window ends after line {end}: its lines past {} MiB of text are not carried; the file goes on.",
                limits::VIEW_FILE_BYTES >> 20
            )
        } else {
            String::new()
        };
        let text = format!("Showing {} to the person: {which}.{cut}", self.place.name());
        self.header.result(text, std::mem::take(&mut self.users), missing, ("file", view))
    }
}
