//! A repository's files, read as a reviewer reads them: `get_file` (a window of a file's lines, numbered),
//! `list_files` (a folder, or every path under it, with an optional glob) and `blame_file` (who last
//! changed each line of a range, grouped by commit with its first message line).
//!
//! Requests are [`crate::reads::files`]'s: `get_file` 1 (`…/browse/{path}?at&start&limit`, Bitbucket pages
//! the lines, so the window is all that is read: a 200,000-line file costs its window); `list_files` 1
//! (`…/browse/{path}` for a folder, `…/files/{path}` for every path under it); `blame_file` 1
//! (`…/browse/{path}?blame&noContent&start&limit`), then one `…/commits/{id}` per commit named, for its
//! message, at most [`MESSAGES`]. [reference "Files, blame, search"]

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{flag, number, string};
use crate::bitbucket::model::Commit;
use crate::bitbucket::window::LineShare;
use crate::errors::{self, BitbucketError};
use crate::fetch::FetchOutcome;
use crate::glob::Glob;
use crate::limits;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::files::{self, Blame, Browsed, Place};
use crate::reads::refs;
use crate::text::{one_line, short, short_commit, when};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `get_file`.
pub const GET_SPEC: ToolSpec = ToolSpec {
    name: "get_file",
    title: "Get file",
    description: "A file's lines at a ref, numbered, one window at a time (default: lines 1-200 of the default branch).",
    input_schema: get_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start: start_get,
};

/// `list_files`.
pub const LIST_SPEC: ToolSpec = ToolSpec {
    name: "list_files",
    title: "List files",
    description: "A folder's entries at a ref, or with recursive every file path under it; glob filters (*.rs, src/**/test_*); paged.",
    input_schema: list_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start: start_list,
};

/// `blame_file`.
pub const BLAME_SPEC: ToolSpec = ToolSpec {
    name: "blame_file",
    title: "Blame file",
    description: "Who last changed each line of a file's range at a ref, grouped by commit with its message.",
    input_schema: blame_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Code),
    annotations: Annotations::READ,
    start: start_blame,
};

/// The longest line an answer carries whole; a longer one is cut, the cut said.
pub const LINE_CHARS: usize = 500;
/// The most bytes a `get_file` answer carries; past it the window ends early and says where to go on.
const ANSWER_BYTES: usize = 60_000;
/// Commits whose message `blame_file` reads.
pub const MESSAGES: usize = 12;
/// Most lines one `get_file` window asks for.
pub const WINDOW_MAX: u64 = 2_000;

fn path(required: bool) -> Value {
    let what = if required { "File path" } else { "Folder path (default: the root)" };
    json!({"type": "string", "minLength": usize::from(required), "description": what})
}

fn at() -> Value {
    json!({"type": "string", "description": "Branch, tag or commit (default: default branch)"})
}

fn window(default: u64, max: u64) -> (Value, Value) {
    (
        json!({"type": "integer", "minimum": 1, "default": 1, "description": "First line"}),
        json!({"type": "integer", "minimum": 1, "maximum": max, "default": default, "description": "Lines"}),
    )
}

fn get_schema() -> Value {
    let (first, count) = window(200, WINDOW_MAX);
    object(
        json!({"project": super::project(), "repo": super::repo(), "path": path(true), "at": at(),
               "start_line": first, "line_count": count}),
        &["project", "repo", "path"],
    )
}

fn list_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "path": path(false), "at": at(),
               "recursive": {"type": "boolean", "default": false, "description": "Every file path under it"},
               "glob": {"type": "string", "maxLength": 300, "description": "Only paths that match"},
               "start": super::start(), "limit": super::limit(100, 1000)}),
        &["project", "repo"],
    )
}

fn blame_schema() -> Value {
    let (first, count) = window(100, 1_000);
    object(
        json!({"project": super::project(), "repo": super::repo(), "path": path(true), "at": at(),
               "start_line": first, "line_count": count}),
        &["project", "repo", "path"],
    )
}

/// The place the arguments name; `Err` when the path names no file (only slashes).
fn place(args: &Map<String, Value>, file: bool) -> Result<Place, String> {
    let (project, repo) = crate::args::repository(args);
    let path = string(args, "path").unwrap_or("").trim_matches('/').to_owned();
    if file && path.is_empty() {
        return Err("`path` names no file: give the file's path from the repository's root, e.g. src/lib.rs.".into());
    }
    Ok(Place { project, repo, path, at: string(args, "at").map(str::to_owned) })
}

/// The first line (1-based) and how many lines the arguments ask for.
fn lines_asked(args: &Map<String, Value>, default: u64) -> (u64, u64) {
    (number(args, "start_line").unwrap_or(1).max(1), number(args, "line_count").unwrap_or(default).max(1))
}

fn start_get(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let place = match place(args, true) {
        Ok(p) => p,
        Err(e) => return Step::Done(ToolResult::error(e)),
    };
    let (first, count) = lines_asked(args, 200);
    let request = place.window_request(first - 1, count, WINDOW_SHARE);
    Step::wait(GetFile { place, first, count }, vec![(GetRead::Window, request)])
}

/// What a `get_file` window keeps of Bitbucket's answer as it is read: lines cut at [`LINE_CHARS`], and
/// no more line text than the answer can carry ([`ANSWER_BYTES`]); the lines past it are never held.
const WINDOW_SHARE: LineShare = LineShare { bytes: ANSWER_BYTES, line_chars: LINE_CHARS };

#[derive(Debug)]
struct GetFile {
    place: Place,
    first: u64,
    count: u64,
}

/// `get_file`'s reads: the window, then a binary file's bytes when its name says picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GetRead {
    Window,
    Raw,
}

impl Plan for GetFile {
    type Read = GetRead;

    fn on(&mut self, read: GetRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, GetRead>) -> Option<ToolResult> {
        let name = self.place.name();
        if read == GetRead::Raw {
            return Some(self.picture(&outcome));
        }
        Some(match files::browsed_within(&outcome, &self.place, WINDOW_SHARE) {
            Err(e) => ToolResult::error(e),
            Ok(Browsed::Lines(page)) => ToolResult::text(numbered(&name, &page, self.first, self.count)),
            Ok(Browsed::Folder(_)) => {
                ToolResult::error(format!("{name} is a folder, not a file: list_files lists it."))
            }
            // A picture's bytes are read (to the model's cap) and handed over as image content.
            Ok(Browsed::Binary) if crate::pictures::named(&self.place.path) => {
                f.fetch(GetRead::Raw, self.place.raw_request(crate::pictures::MODEL_BYTES));
                return None;
            }
            Ok(Browsed::Binary) => ToolResult::error(format!(
                "{name} is a binary file: bb reads text files and pictures (PNG, JPEG, GIF, WebP) only; Bitbucket's page shows it."
            )),
            Ok(Browsed::Other) => ToolResult::error(format!(
                "{name} is neither a text file nor a folder (a submodule, or an entry bb cannot read)."
            )),
        })
    }

    /// A window's room in the process's memory: what its read holds while Bitbucket's answer streams
    /// through it (the lines kept, one line being read) and the answer; a picture's bytes and their base64.
    fn room(&self) -> Option<u64> {
        Some(limits::WINDOW_ROOM.max(3 * crate::pictures::MODEL_BYTES as u64))
    }
}

impl GetFile {
    /// A picture's answer: one sentence and the image, or the sentence that says why the model gets none.
    fn picture(&self, outcome: &FetchOutcome) -> ToolResult {
        let name = self.place.name();
        let cap = crate::pictures::MODEL_BYTES;
        let raw = match files::raw(outcome, &self.place, cap) {
            Ok(r) => r,
            Err(e) => return ToolResult::error(e),
        };
        let Some(picture) = crate::pictures::of(&self.place.path, &raw.bytes) else {
            return ToolResult::error(format!(
                "{name} is a binary file that is no picture bb can read (PNG, JPEG, GIF, WebP); Bitbucket's page shows it."
            ));
        };
        if !raw.whole {
            return ToolResult::text(format!(
                "{name} is {}, larger than the {} bb hands the model; Bitbucket's page shows it.",
                picture.words(),
                crate::pictures::bytes_words(cap as u64)
            ));
        }
        let text = format!(
            "{name}: {} ({}); the picture follows.",
            picture.words(),
            crate::pictures::bytes_words(raw.bytes.len() as u64)
        );
        ToolResult {
            images: vec![(picture.mime.to_owned(), crate::encoding::base64(&raw.bytes))],
            ..ToolResult::text(text)
        }
    }
}

/// A page of a file's lines as the model reads them: each numbered, a header that says which window it is
/// and how the file goes on, long lines cut with the cut said.
pub fn numbered(name: &str, page: &files::Lines, first: u64, asked: u64) -> String {
    let start = page.start + 1;
    if page.lines.is_empty() {
        return if first <= 1 {
            format!("{name} is empty.")
        } else {
            format!("{name} has fewer than {first} lines: ask from start_line=1.")
        };
    }
    // The window's last line: the lines kept and those the share dropped past its bytes.
    let end = start + page.lines.len() as u64 + page.dropped - 1;
    let width = end.to_string().len();
    let mut body = String::new();
    let mut shown_to = start - 1;
    let mut cut_lines = 0;
    for (i, text) in page.lines.iter().enumerate() {
        let n = start + i as u64;
        // Cut as it was read (its whole length kept), or here when the lines came whole.
        let (kept, here) = crate::bitbucket::window::cut(text.clone(), LINE_CHARS);
        let whole = page.cut.get(&i).copied().or(here);
        let line = match whole {
            None => format!("{n:>width$}\t{kept}\n"),
            Some(total) => format!("{n:>width$}\t{kept}… [line cut: {LINE_CHARS} of {total} characters shown]\n"),
        };
        if body.len() + line.len() > ANSWER_BYTES {
            break;
        }
        // Counted as shown: a cut line past the answer's bytes is not said to be cut.
        cut_lines += usize::from(whole.is_some());
        body.push_str(&line);
        shown_to = n;
    }
    let whole = page.last && shown_to == end;
    let head = if whole && start == 1 {
        format!("{name}: lines 1-{end} of {end} (the whole file).")
    } else if whole {
        format!("{name}: lines {start}-{end} of {end}.")
    } else {
        format!("{name}: lines {start}-{shown_to}; the file goes on.")
    };
    let mut out = head;
    if cut_lines > 0 {
        out.push_str(&format!(" {cut_lines} line(s) longer than {LINE_CHARS} characters are cut."));
    }
    out.push('\n');
    out.push_str(&body);
    if shown_to < end {
        out.push_str(&format!(
            "[window cut at {ANSWER_BYTES} bytes after line {shown_to}; more lines — start_line={}]",
            shown_to + 1
        ));
    } else if !page.last {
        out.push_str(&format!("More lines — start_line={}, line_count={asked}.", end + 1));
    } else {
        out.push_str("End of file.");
    }
    out
}

fn start_list(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let place = match place(args, false) {
        Ok(p) => p,
        Err(e) => return Step::Done(ToolResult::error(e)),
    };
    let recursive = flag(args, "recursive").unwrap_or(false);
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(100));
    let request = if recursive { place.files_request(start, limit) } else { place.browse_request(start, limit) };
    let glob = string(args, "glob").map(|g| (g.to_owned(), PathGlob::new(g)));
    Step::wait(ListFiles { place, recursive, glob }, vec![((), request)])
}

#[derive(Debug)]
struct ListFiles {
    place: Place,
    recursive: bool,
    /// The glob as the model wrote it, and compiled.
    glob: Option<(String, PathGlob)>,
}

impl Plan for ListFiles {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let name = self.place.name();
        // Each entry: its name relative to the folder and what the line says of it.
        let (entries, start, more): (Vec<(String, String)>, u64, String) = if self.recursive {
            match files::files(&outcome, &self.place) {
                Ok(page) => {
                    let more = page.more_line("paths");
                    (page.values.into_iter().map(|p| (p.clone(), p)).collect(), page.start, more)
                }
                Err(e) => return Some(ToolResult::error(e)),
            }
        } else {
            match files::browsed(&outcome, &self.place) {
                Ok(Browsed::Folder(page)) => {
                    let more = page.more_line("entries");
                    let entries = page
                        .values
                        .iter()
                        .map(|c| {
                            let n = c.name().to_owned();
                            let line = match c.kind.as_deref() {
                                Some("DIRECTORY") => format!("{n}/"),
                                Some("SUBMODULE") => format!("{n} (submodule)"),
                                _ => match c.size {
                                    Some(s) => format!("{n} ({s} bytes)"),
                                    None => n.clone(),
                                },
                            };
                            (n, line)
                        })
                        .collect();
                    (entries, page.start, more)
                }
                Ok(Browsed::Lines(_) | Browsed::Binary) => {
                    return Some(ToolResult::error(format!("{name} is a file, not a folder: get_file reads it.")));
                }
                Ok(Browsed::Other) => {
                    return Some(ToolResult::error(format!("{name} is not a folder bb can list (a submodule?).")));
                }
                Err(e) => return Some(ToolResult::error(e)),
            }
        };
        let on_page = entries.len();
        let shown: Vec<&str> = entries
            .iter()
            .filter(|(n, _)| self.glob.as_ref().is_none_or(|(_, g)| g.matches(n)))
            .map(|(_, line)| line.as_str())
            .collect();
        let what = if self.recursive { "Every file under" } else { "Entries of" };
        let mut head = format!("{what} {name}, from start={start}: {on_page} on this page");
        if let Some((g, _)) = &self.glob {
            head.push_str(&format!(", {} of them match {}", shown.len(), short(&one_line(g), 100)));
        }
        head.push('.');
        let mut out = vec![head];
        out.extend(shown.iter().map(|l| l.to_string()));
        out.push(more);
        Some(ToolResult::text(out.join("\n")))
    }
}

/// A `list_files` glob, compiled once for a page of paths.
#[derive(Debug)]
struct PathGlob {
    glob: Glob,
    /// A glob without `/` is matched against the path's last component too.
    last_too: bool,
}

impl PathGlob {
    fn new(glob: &str) -> PathGlob {
        PathGlob { glob: Glob::bytes(glob), last_too: !glob.contains('/') }
    }

    fn matches(&self, path: &str) -> bool {
        let last = path.rsplit('/').next().unwrap_or(path);
        // A glob that nothing of can match `/` never matches a path with one: only its last component is run.
        let whole = self.glob.crosses_slash() || !path.contains('/');
        (whole && self.glob.matches_bytes(path))
            || (self.last_too && last.len() < path.len() && self.glob.matches_bytes(last))
    }
}

/// Whether `path` matches `glob`: `*` any run of characters but `/`, `**` any run at all, `?` one character
/// but `/`. A glob without `/` is matched against the path's last component too (`*.rs` finds `src/a.rs`).
/// Linear in the path whatever the glob ([`crate::glob`]).
#[cfg(any(test, feature = "testing"))]
pub fn glob_match(glob: &str, path: &str) -> bool {
    PathGlob::new(glob).matches(path)
}

fn start_blame(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let place = match place(args, true) {
        Ok(p) => p,
        Err(e) => return Step::Done(ToolResult::error(e)),
    };
    let (first, count) = lines_asked(args, 100);
    let request = place.blame_request(first - 1, count);
    let plan = BlameFile { place, first, count, entries: None, asked: Vec::new(), messages: BTreeMap::new() };
    Step::wait(plan, vec![(BlameRead::Blame, request)])
}

/// The reads of `blame_file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlameRead {
    Blame,
    /// The commit at this index of those asked for.
    Commit(usize),
}

#[derive(Debug)]
struct BlameFile {
    place: Place,
    first: u64,
    count: u64,
    entries: Option<(Vec<Blame>, usize)>,
    /// The commits whose message was asked for, in order.
    asked: Vec<String>,
    /// Each commit's first message line, or why it was not read.
    messages: BTreeMap<String, Result<String, BitbucketError>>,
}

impl Plan for BlameFile {
    type Read = BlameRead;

    fn on(&mut self, read: BlameRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, BlameRead>) -> Option<ToolResult> {
        match read {
            BlameRead::Blame => {
                let entries = match files::blame(&outcome, &self.place) {
                    Ok(e) => e,
                    Err(e) => return Some(ToolResult::error(e)),
                };
                for b in &entries.0 {
                    if self.asked.len() < MESSAGES && !self.messages.contains_key(&b.commit) {
                        self.messages.insert(b.commit.clone(), Err(BitbucketError::Failed("not read".into())));
                        let r = refs::commit_request(&self.place.project, &self.place.repo, &b.commit);
                        f.fetch(BlameRead::Commit(self.asked.len()), r);
                        self.asked.push(b.commit.clone());
                    }
                }
                self.entries = Some(entries);
            }
            BlameRead::Commit(i) => {
                let id = self.asked.get(i).cloned().unwrap_or_default();
                let subject = errors::json::<Commit>(&outcome, self.place.subject(), None)
                    .map(|c| short(c.message.as_deref().unwrap_or("").lines().next().unwrap_or(""), 120));
                self.messages.insert(id, subject);
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        Some(ToolResult::text(self.render()))
    }
}

impl BlameFile {
    fn render(&self) -> String {
        let name = self.place.name();
        let (entries, unreadable) = match &self.entries {
            Some((e, u)) => (&e[..], *u),
            None => (&[][..], 0),
        };
        let last_asked = self.first + self.count - 1;
        // Each commit's lines within the window, in the order the commits first appear.
        let mut order: Vec<&Blame> = Vec::new();
        let mut spans: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
        let mut last_line = 0;
        for b in entries {
            let from = b.line.max(self.first);
            let to = (b.line + b.spanned - 1).min(last_asked);
            if from > to {
                continue;
            }
            last_line = last_line.max(to);
            let list = spans.entry(&b.commit).or_default();
            if list.is_empty() {
                order.push(b);
            }
            match list.last_mut() {
                Some(l) if l.1 + 1 == from => l.1 = to,
                _ => list.push((from, to)),
            }
        }
        if order.is_empty() {
            return if self.first <= 1 {
                format!("{name}: no lines to blame (an empty file).")
            } else {
                format!("{name} has no line {}: ask from start_line=1.", self.first)
            };
        }
        let mut out = vec![format!(
            "Blame of {name}, lines {}-{last_line}: {} commit(s), first seen first.",
            self.first,
            order.len()
        )];
        for b in order {
            let ranges: Vec<String> = spans[b.commit.as_str()]
                .iter()
                .map(|(a, z)| if a == z { a.to_string() } else { format!("{a}-{z}") })
                .collect();
            let subject = match self.messages.get(&b.commit) {
                Some(Ok(s)) => format!(" \"{s}\""),
                Some(Err(_)) | None => String::new(),
            };
            out.push(format!(
                "{} {} {}{subject}: lines {}",
                short_commit(Some(&b.commit)),
                when(b.at),
                short(&one_line(&b.author), 60),
                ranges.join(", ")
            ));
        }
        if spans.len() > self.asked.len() {
            out.push(format!("Messages read for the first {} commits; get_commit reads the others.", self.asked.len()));
        }
        if unreadable > 0 {
            out.push(format!("{unreadable} blame entr(ies) Bitbucket sent could not be read and are left out."));
        }
        if last_line >= last_asked {
            out.push(format!("More lines may follow — start_line={}.", last_asked + 1));
        }
        out.join("\n")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_glob_costs_at_most_its_length_times_the_paths_in_steps() {
        // A long segment and a `/` (where a one-segment star stops and a backtracking `**` starts again).
        let ends_b = format!("{}/xb", "a".repeat(3_800));
        let ends_slash = format!("{}/", "a".repeat(3_800));
        let cases = [("***b", &ends_b, true), ("**/*b", &ends_b, true), ("***b", &ends_slash, false)];
        let hostile = "**a*".repeat(70);
        for (glob, path, matches) in cases.into_iter().chain([(hostile.as_str(), &ends_b, false)]) {
            let before = crate::glob::steps();
            assert_eq!(glob_match(glob, path), matches, "{glob}");
            let spent = crate::glob::steps() - before;
            let bound = 2 * (glob.len() as u64 + 1) * (path.len() as u64 + 1);
            assert!(spent <= bound, "{glob}: {spent} steps, more than {bound}");
        }
    }

    #[test]
    fn globs_match_as_a_shell_and_a_gitignore_do() {
        assert!(glob_match("*.rs", "src/lib.rs"));
        assert!(glob_match("src/*.rs", "src/lib.rs"));
        assert!(!glob_match("src/*.rs", "src/a/lib.rs"));
        assert!(glob_match("src/**/*.rs", "src/a/b/lib.rs"));
        assert!(glob_match("src/**/*.rs", "src/lib.rs"));
        assert!(glob_match("test_?.py", "tests/test_a.py"));
        assert!(!glob_match("*.ts", "src/lib.rs"));
        // A hostile glob ends quickly.
        let long = "a".repeat(5_000);
        assert!(!glob_match(&"*a".repeat(100), &format!("{long}b")));
    }

    #[test]
    fn a_window_is_numbered_says_where_it_is_and_how_to_go_on() {
        let page = files::Lines {
            lines: vec!["fn a() {}".into(), "x".repeat(600)],
            start: 9,
            last: false,
            ..Default::default()
        };
        let out = numbered("src/a.rs at main in BB/api", &page, 10, 2);
        assert!(out.starts_with("src/a.rs at main in BB/api: lines 10-11; the file goes on. 1 line(s)"), "{out}");
        assert!(out.contains("10\tfn a() {}\n"));
        assert!(out.contains("[line cut: 500 of 600 characters shown]"));
        assert!(out.ends_with("More lines — start_line=12, line_count=2."));
        let whole = files::Lines { lines: vec!["a".into(), "b".into()], start: 0, last: true, ..Default::default() };
        assert!(numbered("f", &whole, 1, 200).starts_with("f: lines 1-2 of 2 (the whole file)."));
        let past = files::Lines { lines: vec![], start: 500, last: true, ..Default::default() };
        assert_eq!(numbered("f", &past, 501, 200), "f has fewer than 501 lines: ask from start_line=1.");
    }
}
