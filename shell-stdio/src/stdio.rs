//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout, and the driver loop that
//! pumps a session.
//!
//! One task reads frames and feeds them to the loop; each Bitbucket request runs on smol's
//! blocking pool and reports back to the loop; the loop alone owns the session, so the core stays
//! single-threaded and deterministic while requests run concurrently. A slow tool call therefore
//! never delays `ping` or any other answer. The loop ends when stdin closes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bb_core::{FetchOutcome, Input, Level, Output, Session, Ticket};
use smol::channel::{Receiver, Sender};
use smol::io::{AssertAsync, AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::fetch::Fetcher;
use crate::lines::{Frame, LineReader};
use crate::log::Logger;

/// What the loop waits for.
enum Event {
    Frame(Frame),
    InputClosed,
    InputFailed(std::io::Error),
    Fetched(Ticket, FetchOutcome),
}

/// The current wall-clock time in epoch milliseconds: the only clock bb-core ever sees.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Serves one session over `input` and `output` until `input` closes (or `output` fails).
///
/// Lines longer than `max_line` bytes are answered with an error and skipped.
pub async fn serve<R, W>(
    input: R,
    output: W,
    session: Session,
    fetcher: Arc<dyn Fetcher>,
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
    let result = local.run(pump(rx, tx, output, session, fetcher, logger, max_line)).await;
    drop(reader);
    result
}

/// The driver loop: takes events one at a time, hands them to the session, carries out its outputs.
async fn pump<W: AsyncWrite + Unpin>(
    rx: Receiver<Event>,
    tx: Sender<Event>,
    mut output: W,
    mut session: Session,
    fetcher: Arc<dyn Fetcher>,
    logger: Logger,
    max_line: usize,
) -> std::io::Result<()> {
    let mut fetches: HashMap<Ticket, smol::Task<()>> = HashMap::new();
    let mut tag: u64 = 0;
    let result = loop {
        let Ok(event) = rx.recv().await else { break Ok(()) };
        match event {
            Event::Frame(Frame::Line(bytes)) => {
                tag += 1;
                session.handle(Input::Message { bytes: &bytes, tag }, now_ms());
            }
            Event::Frame(Frame::Oversized) => {
                tag += 1;
                session.handle(Input::Oversized { limit: max_line, tag }, now_ms());
            }
            Event::Fetched(ticket, outcome) => {
                fetches.remove(&ticket);
                session.handle(Input::Fetched { ticket, outcome }, now_ms());
            }
            Event::InputClosed => break Ok(()),
            Event::InputFailed(e) => {
                logger.log(Level::Error, &format!("reading stdin failed: {e}"));
                break Ok(());
            }
        }
        if let Err(e) = drain(&mut session, &mut output, &mut fetches, &fetcher, &tx, &logger).await {
            break Err(e);
        }
    };
    // Requests still running are dropped with their session: the client has gone.
    drop(fetches);
    logger.log(Level::Info, "stdin closed; bb stops");
    result
}

/// Carries out everything the session asked for, then flushes the answers.
async fn drain<W: AsyncWrite + Unpin>(
    session: &mut Session,
    output: &mut W,
    fetches: &mut HashMap<Ticket, smol::Task<()>>,
    fetcher: &Arc<dyn Fetcher>,
    tx: &Sender<Event>,
    logger: &Logger,
) -> std::io::Result<()> {
    let mut wrote = false;
    while let Some(out) = session.poll_output() {
        match out {
            Output::Send { mut message, .. } => {
                message.push(b'\n');
                output.write_all(&message).await?;
                wrote = true;
            }
            Output::Fetch { ticket, request } => {
                let fetcher = Arc::clone(fetcher);
                let tx = tx.clone();
                let task = smol::spawn(async move {
                    let outcome = smol::unblock(move || fetcher.fetch(request)).await;
                    // The loop may have ended; then nobody needs the outcome.
                    let _ = tx.send(Event::Fetched(ticket, outcome)).await;
                });
                fetches.insert(ticket, task);
            }
            Output::CancelFetch(ticket) => {
                // Dropping the task stops waiting; a request already sent finishes unseen.
                fetches.remove(&ticket);
            }
            Output::Log { level, message } => logger.log(level, &message),
        }
    }
    if wrote {
        output.flush().await?;
    }
    Ok(())
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
/// between threads. Otherwise (a terminal, whose mode bb must not change, or a regular file, which
/// cannot be polled), stdin is read by a thread of its own and stdout written directly.
pub fn serve_stdio(
    session: Session,
    fetcher: Arc<dyn Fetcher>,
    logger: Logger,
    max_line: usize,
) -> std::io::Result<()> {
    if let Some((input, output)) = polled_stdio() {
        return smol::block_on(serve(input, output, session, fetcher, logger, max_line));
    }
    let (tx, rx) = smol::channel::bounded::<Event>(64);
    let reader_tx = tx.clone();
    std::thread::Builder::new().name("bb-stdin".into()).spawn(move || {
        smol::block_on(read_frames(AssertAsync::new(std::io::stdin().lock()), reader_tx, max_line));
    })?;
    let stdout = AssertAsync::new(std::io::stdout().lock());
    smol::block_on(pump(rx, tx, stdout, session, fetcher, logger, max_line))
}

/// stdin and stdout as pollable, unbuffered files (duplicated descriptors), when neither is a
/// terminal and both can be polled.
fn polled_stdio() -> Option<(smol::Async<std::fs::File>, smol::Async<std::fs::File>)> {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    if std::io::stdin().is_terminal() || std::io::stdout().is_terminal() {
        return None;
    }
    let input = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let output = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().ok()?);
    Some((smol::Async::new(input).ok()?, smol::Async::new(output).ok()?))
}
