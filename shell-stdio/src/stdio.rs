//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout, one session, driven by a
//! [`Driver`].
//!
//! One task reads frames and feeds them to the loop; each Bitbucket request runs on the drive's
//! pool of read threads ([`bb_drive::Process::reads`]) and reports back to the loop through the same channel; the loop alone owns the
//! driver, so the core stays single-threaded and deterministic while requests run concurrently. A
//! slow tool call therefore never delays `ping` or any other answer.
//!
//! When stdin closes, the calls still in flight are answered before the loop ends (`printf
//! '…initialize…\n…tools/call…\n' | bb ai mcp serve` gets both answers), for at most
//! [`END_OF_INPUT_GRACE`]; then every request still running is cancelled.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bb_core::{FetchOutcome, Input, Level, ServerConfig, Ticket};
use bb_drive::{Bitbucket, Delivery, Driver, Logger, Process, Wake};
use smol::channel::{Receiver, Sender};
use smol::io::{AssertAsync, AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::lines::{Frame, LineReader};

/// How long bb keeps answering the calls in flight after stdin closes.
pub const END_OF_INPUT_GRACE: Duration = Duration::from_secs(10);

/// What the loop waits for.
enum Event {
    Frame(Frame),
    InputClosed,
    InputFailed(std::io::Error),
    Fetched(Ticket, FetchOutcome),
    /// A highlighting job done, or a call's deadline, from another thread.
    Wake(Wake),
}

/// Serves one session over `input` and `output` until `input` closes (or `output` fails), counting
/// in and taking room of `process` (the application's metrics and memory budget).
///
/// Lines longer than `max_line` bytes are answered with an error and skipped.
pub async fn serve<R, W>(
    input: R,
    output: W,
    config: ServerConfig,
    process: Process,
    bitbucket: Arc<dyn Bitbucket>,
    logger: Logger,
    max_line: usize,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // Bounded, so a client that floods stdin is slowed by backpressure rather than buffered.
    let (tx, rx) = smol::channel::bounded::<Event>(64);
    // The reader runs on this thread beside the loop: a message reaches the session without a
    // hand-off between threads.
    let local = smol::LocalExecutor::new();
    let reader = local.spawn(read_frames(input, tx.clone(), max_line));
    let driver = driver(config, process, bitbucket, logger, tx);
    let result = local.run(pump(rx, output, driver, max_line)).await;
    drop(reader);
    result
}

/// A driver whose finished Bitbucket requests come back to the loop as [`Event::Fetched`].
fn driver(
    config: ServerConfig,
    process: Process,
    bitbucket: Arc<dyn Bitbucket>,
    logger: Logger,
    tx: Sender<Event>,
) -> Driver {
    // Called on a blocking-pool thread, where waiting for room in the channel is fine.
    let woken = tx.clone();
    let on_fetched = move |ticket, outcome| drop(tx.send_blocking(Event::Fetched(ticket, outcome)));
    // Called on a CPU thread or the timer's: a send that waits for room is fine there too.
    Driver::new(config, process, bitbucket, logger, on_fetched)
        .on_wake(move |w| drop(woken.send_blocking(Event::Wake(w))))
}

/// The loop: takes events one at a time, feeds them to the driver, writes what it delivers. After
/// the end of input it goes on until every input fed has been answered (or the grace is over).
async fn pump<W: AsyncWrite + Unpin>(
    rx: Receiver<Event>,
    mut output: W,
    mut driver: Driver,
    max_line: usize,
) -> std::io::Result<()> {
    let mut out = Out::default();
    let session = driver.open(None, &mut out.sink());
    let mut tag: u64 = 0;
    // Set once stdin has closed: the time bb stops waiting for answers.
    let mut ending: Option<Instant> = None;
    let result = loop {
        if ending.is_some() && out.done == tag {
            break Ok(());
        }
        let event = match ending {
            None => rx.recv().await.ok(),
            Some(deadline) => {
                let timer = async {
                    smol::Timer::at(deadline).await;
                    None
                };
                smol::future::or(async { rx.recv().await.ok() }, timer).await
            }
        };
        let Some(event) = event else {
            driver.logger().log(
                Level::Warning,
                &format!(
                    "stdin closed; {} calls still unanswered after {}s are dropped",
                    tag - out.done,
                    END_OF_INPUT_GRACE.as_secs()
                ),
            );
            break Ok(());
        };
        match event {
            Event::Frame(Frame::Line(bytes)) => {
                tag += 1;
                driver.feed(Input::Message { session, bytes: &bytes, tag }, &mut out.sink());
            }
            Event::Frame(Frame::Oversized) => {
                tag += 1;
                driver.feed(Input::Oversized { session, limit: max_line, tag }, &mut out.sink());
            }
            Event::Fetched(ticket, outcome) => driver.feed(Input::Fetched { ticket, outcome }, &mut out.sink()),
            Event::Wake(w) => driver.wake(w, &mut out.sink()),
            Event::InputClosed => ending = Some(Instant::now() + END_OF_INPUT_GRACE),
            Event::InputFailed(e) => {
                driver.logger().log(Level::Error, &format!("reading stdin failed: {e}"));
                ending = Some(Instant::now() + END_OF_INPUT_GRACE);
            }
        }
        if let Err(e) = write(&mut output, &mut out.lines).await {
            break Err(e);
        }
    };
    // The client has gone: the session's requests still running are cancelled with it.
    driver.close(session, &mut |_| {});
    driver.logger().log(Level::Info, "stdin closed; bb stops");
    result
}

/// What the driver delivered: lines to write, and how many inputs have been answered in full.
#[derive(Default)]
struct Out {
    lines: Vec<u8>,
    done: u64,
}

impl Out {
    /// Appends each message delivered, newline-terminated, and counts each [`Delivery::Done`]: the
    /// client matches answers by id, so Done needs nothing on stdio.
    fn sink(&mut self) -> impl FnMut(Delivery) + '_ {
        |d| match d {
            Delivery::Send { message, .. } => {
                self.lines.extend_from_slice(&message);
                self.lines.push(b'\n');
            }
            Delivery::Done { .. } => self.done += 1,
        }
    }
}

/// Writes the lines delivered so far and flushes them.
async fn write<W: AsyncWrite + Unpin>(output: &mut W, lines: &mut Vec<u8>) -> std::io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    output.write_all(lines).await?;
    lines.clear();
    output.flush().await
}

async fn read_frames<R: AsyncRead + Unpin>(input: R, tx: Sender<Event>, max_line: usize) {
    let mut lines = LineReader::new(input, max_line);
    loop {
        let event = match lines.next().await {
            Ok(Some(frame)) => Event::Frame(frame),
            Ok(None) => Event::InputClosed,
            Err(e) => Event::InputFailed(e),
        };
        let last = !matches!(event, Event::Frame(_));
        if tx.send(event).await.is_err() || last {
            return;
        }
    }
}

/// Runs `bb ai mcp serve` on the process's stdin and stdout.
///
/// When both are pipes or sockets (as an MCP client starts bb), they are driven by the event loop
/// on this one thread: a message goes from the client to the session and back without a hand-off
/// between threads. Otherwise (a terminal, whose mode bb must not change, or a regular file or `/dev/null`, which
/// cannot be polled), stdin is read by a thread of its own and stdout written directly.
pub fn serve_stdio(
    config: ServerConfig,
    process: Process,
    bitbucket: Arc<dyn Bitbucket>,
    logger: Logger,
    max_line: usize,
) -> std::io::Result<()> {
    if let Some((input, output)) = polled_stdio() {
        return smol::block_on(serve(input, output, config, process, bitbucket, logger, max_line));
    }
    let (tx, rx) = smol::channel::bounded::<Event>(64);
    let reader_tx = tx.clone();
    std::thread::Builder::new().name("bb-stdin".into()).spawn(move || {
        smol::block_on(read_frames(AssertAsync::new(std::io::stdin().lock()), reader_tx, max_line));
    })?;
    let stdout = AssertAsync::new(std::io::stdout().lock());
    smol::block_on(pump(rx, stdout, driver(config, process, bitbucket, logger, tx), max_line))
}

/// stdin and stdout as pollable, unbuffered files (duplicated descriptors), when both are pipes or
/// sockets. Both are checked before either is touched: making one non-blocking changes the open file
/// it shares with the other processes that hold it, and a stdin left non-blocking after a fallback to
/// the reading thread failed its first read with "Resource temporarily unavailable" (stdout to
/// `/dev/null` or a file, which epoll refuses).
fn polled_stdio() -> Option<(smol::Async<std::fs::File>, smol::Async<std::fs::File>)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let input = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let output = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().ok()?);
    let pollable = |f: &std::fs::File| f.metadata().is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
    if !pollable(&input) || !pollable(&output) {
        return None;
    }
    Some((smol::Async::new(input).ok()?, smol::Async::new(output).ok()?))
}
