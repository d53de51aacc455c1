//! The bounds on work in flight, written in one place for every crate that keeps one: how many
//! Bitbucket reads a session, the pool and the client have out, how many CPU jobs wait, how large a
//! message or an answer may be. The core keeps the first two; the drive and the shells read the rest
//! from here, so a reader changes a bound without hunting for it.
//!
//! A read passes three bounds on its way to Bitbucket, each for a reason of its own:
//!
//! ```text
//!   call ─▶ session's queue ──[READS_PER_SESSION]──▶ drive's read pool ──[READ_THREADS]──▶
//!           (core, crate::work)                      (threads, round robin per queue)
//!       ──▶ Bitbucket client ──[BITBUCKET_CONNECTIONS]──▶ Bitbucket
//!           (slots, round robin per queue)
//! ```
//!
//! The operator's HTTP admission limits (connections, sessions, per-peer and per-person shares, body
//! sizes, timeouts) are options, not constants: `bb_http::Limits`, set by `bb ai mcp serve`'s flags.
//! The caches' sizes live with them: `avatar_cache::MAX_CACHE_BYTES`, `highlight_cache::MAX_CACHE_BYTES`,
//! `commit_cache::MAX_ENTRIES`.

/// The most Bitbucket reads one session has handed to the shell at once; the rest wait in the
/// session, in order ([`crate::work`]). All the connections but one ([`BITBUCKET_CONNECTIONS`]): a
/// session alone sends a view's independent reads in one round (a cold card's first stage is seven, a
/// warm one's nine, and its avatars go as soon as the pull request names the people), while another
/// session's call always finds the last connection free (the client keeps it, per queue, as well).
pub const READS_PER_SESSION: usize = BITBUCKET_CONNECTIONS - 1;

/// The most messages one JSON-RPC batch may hold (2025-03-26 only); a larger batch is refused whole.
pub const MAX_BATCH: usize = 100;

/// The most bytes one batch's answers take together: an answer that would take them past it is left
/// out and said to be. Sized for a handful of views (a file view carries at most
/// [`VIEW_FILE_BYTES`] of lines; a diff view [`VIEW_DIFF_BYTES`]); the whole batch goes out in one
/// message, held until the client reads it.
pub const BATCH_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// The most Bitbucket requests one bb process has on the wire at once (the client's slots, served
/// round robin per session, or per person in per-person mode; one queue holds all but one of them).
/// A warm card reads nine things at once (its commit's Code Insights with the rest), a cold one seven
/// and then up to five avatars and its Code Insights, a diff view up to 20 files. 48 was chosen when a
/// warm card read six things at once: eight people's cards went out together in one round
/// (bench/roundtrip: with 24, the slowest of eight took two rounds, 2.0–2.1x its time alone); at nine,
/// eight warm cards together are 72 reads, and the last of them wait for a slot: the slowest of eight
/// takes two rounds, as every warm card did before it read its Code Insights in the first (at 50 ms a
/// request, 112 ms, where a warm card alone takes 56). What bounds bb's load on Bitbucket is each
/// user's rate limit, which bb keeps to (`--rate-limit`: a burst of 60 at most), not a count of
/// connections.
pub const BITBUCKET_CONNECTIONS: usize = 48;

/// The most threads Bitbucket requests block on: every connection in use, and as many more requests
/// waiting for a slot, for their rate limit's token or sleeping before a retry. Idle ones exit.
pub const READ_THREADS: usize = 64;

/// How long a refresh put off for a busy Bitbucket waits before it asks again, at least (each view
/// adds a share of as much again, so the views put off together do not come back together). A
/// refresh is put off when the refreshes going now leave its reads no room among the connections to
/// Bitbucket: when Bitbucket is slow and a thousand views ask, their reads would otherwise queue for
/// tens of seconds and the views' clients give up (issue 58: 475 refreshes timed out at 1,000 people
/// with 100 ms added to every Bitbucket answer). A model's read never is put off.
pub const REFRESH_PUT_OFF_MS: u64 = 5_000;

/// The most highlighting jobs waiting for one of the CPU threads, all sessions together; past it a
/// call's job is not run and the call answers plain at its deadline (its lines are highlighted by a
/// later read). Jobs wait in one queue per person (per session without per-person tokens) and the
/// threads take them in turn, as the read threads take reads; a job whose call has answered, was
/// cancelled or passed its deadline is dropped before it starts.
pub const QUEUED_JOBS: usize = 256;

/// The most highlighting jobs one queue (a person's, or a session's) has waiting.
pub const QUEUED_JOBS_PER_QUEUE: usize = 64;

/// After how long a highlighting job counts as stuck (a grammar that loops): a file's highlighting
/// takes milliseconds to a second or two (10,000 lines a second).
pub const JOB_STUCK_AFTER_MS: u64 = 20_000;

/// How many stuck jobs may each add a CPU thread for the others; past it highlighting waits for a
/// thread (calls answer plain at their deadline) rather than give more cores to loops.
pub const MOST_STUCK_JOBS: usize = 2;

/// Lines of diff one view carries, all its files together: each of its (at most 20) files gets an
/// equal share, at least [`FILE_DIFF_LINES`], and the lines past it are skipped as the answer is read
/// (never held) and counted ("N more lines in Bitbucket"). A person does not read more in a chat, and
/// a view's memory and answer stay a few megabytes whatever the pull request.
pub const VIEW_DIFF_LINES: usize = 20_000;
/// Bytes of line text one view carries, all its files together, shared as the lines are.
pub const VIEW_DIFF_BYTES: usize = 2 * 1024 * 1024;
/// Comment threads one threads view carries at most, newest activity first; the view says how many it left out.
pub const VIEW_THREADS: usize = 100;
/// Bytes of view data one threads view's threads take at most (their text, replies and lines), as a diff view's
/// lines are bounded: a thread past it is left out, and the view says so.
pub const VIEW_THREADS_BYTES: usize = 512 * 1024;
/// Diff lines drawn above a line comment in the threads view: the commented line and those leading to it.
pub const THREAD_DIFF_LINES: usize = 5;
/// The least share of lines one file of a view gets.
pub const FILE_DIFF_LINES: usize = 1_000;
/// The least share of line text one file of a view gets.
pub const FILE_DIFF_BYTES: usize = 100 * 1024;

/// The memory one bb process sets aside for large calls (diff and compare views, diffs for the model)
/// by default (`--memory-budget`): sized for a small container. A large call asks for its room
/// ([`VIEW_ROOM`] for a view) before any of its reads go out; past the budget it waits, in turn with other
/// persons' calls, for one to end; past [`LARGE_CALLS_WAITING`] waiting it is refused at once with a
/// sentence that says bb is busy. Batches are counted call by call.
pub const MEMORY_BUDGET: u64 = 256 * 1024 * 1024;

/// The room one diff or compare view asks for: its share of lines decoded, its view data, its
/// highlighting and its answer (measured at about 30 MiB for 20 files of 1,000 lines; bench/memory).
pub const VIEW_ROOM: u64 = 32 * 1024 * 1024;

/// The room one file window asks for (`get_file`): its read keeps at most the answer's 60 KB of lines
/// as Bitbucket's answer streams through it ([`crate::bitbucket::window`]), with one line being read,
/// the read's buffer and the answer. A line of many megabytes is held once while it is read, then cut.
pub const WINDOW_ROOM: u64 = 1024 * 1024;

/// Bytes of line text one file view carries (`show` kind `file`): the lines past it are skipped as
/// the answer is read, never held, and the view ends early, saying the file goes on.
pub const VIEW_FILE_BYTES: usize = 2 * 1024 * 1024;

/// The most large calls waiting for room in one process; past it a large call is refused at once.
pub const LARGE_CALLS_WAITING: usize = 64;

/// The largest Bitbucket answer bb reads; a larger one is a failed read (32 MiB).
pub const MAX_ANSWER_BYTES: u64 = 32 * 1024 * 1024;

/// The longest message line bb accepts on stdio (16 MiB); a longer one is skipped to its end unread.
pub const MAX_STDIO_LINE: usize = 16 * 1024 * 1024;
