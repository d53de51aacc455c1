//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout, one session, driven by a
//! [`Driver`].
//!
//! One task reads frames and feeds them to the loop; each Bitbucket request runs on smol's
//! blocking pool and reports back to the loop through the same channel; the loop alone owns the
//! driver, so the core stays single-threaded and deterministic while requests run concurrently. A
//! slow tool call therefore never delays `ping` or any other answer. The loop ends when stdin
//! closes, and every request still running is cancelled.

use std::sync::Arc;

use bb_core::{FetchOutcome, Input, Level, ServerConfig, Ticket};
use bb_drive::{Bitbucket, Delivery, Driver, Logger};
use smol::channel::{Receiver, Sender};
use smol::io::{AssertAsync, AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::lines::{Frame, LineReader};

/// What the loop waits for.
enum Event {
    Frame(Frame),
    InputClosed,
    InputFailed(std::io::Error),
    Fetched(Ticket, FetchOutcome),
}

/// Serves one session over `input` and `output` until `input` closes (or `output` fails).
///
/// Lines longer than `max_line` bytes are answered with an error and skipped.
pub async fn serve<R, W>(
    input: R,
    output: W,
    config: ServerConfig,
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
    let driver = driver(config, bitbucket, logger, tx);
    let result = local.run(pump(rx, output, driver, max_line)).await;
    drop(reader);
    result
}

/// A driver whose finished Bitbucket requests come back to the loop as [`Event::Fetched`].
fn driver(config: ServerConfig, bitbucket: Arc<dyn Bitbucket>, logger: Logger, tx: Sender<Event>) -> Driver {
    // Called on a blocking-pool thread, where waiting for room in the channel is fine.
    let on_fetched = move |ticket, outcome| drop(tx.send_blocking(Event::Fetched(ticket, outcome)));
    Driver::new(config, bitbucket, logger, on_fetched)
}

/// The loop: takes events one at a time, feeds them to the driver, writes what it delivers.
async fn pump<W: AsyncWrite + Unpin>(
    rx: Receiver<Event>,
    mut output: W,
    mut driver: Driver,
    max_line: usize,
) -> std::io::Result<()> {
    let mut lines: Vec<u8> = Vec::new();
    let session = driver.open(None, &mut append_to(&mut lines));
    let mut tag: u64 = 0;
    let result = loop {
        let Ok(event) = rx.recv().await else { break Ok(()) };
        match event {
            Event::Frame(Frame::Line(bytes)) => {
                tag += 1;
                driver.feed(Input::Message { session, bytes: &bytes, tag }, &mut append_to(&mut lines));
            }
            Event::Frame(Frame::Oversized) => {
                tag += 1;
                driver.feed(Input::Oversized { session, limit: max_line, tag }, &mut append_to(&mut lines));
            }
            Event::Fetched(ticket, outcome) => {
                driver.feed(Input::Fetched { ticket, outcome }, &mut append_to(&mut lines))
            }
            Event::InputClosed => break Ok(()),
            Event::InputFailed(e) => {
                driver.logger().log(Level::Error, &format!("reading stdin failed: {e}"));
                break Ok(());
            }
        }
        if let Err(e) = write(&mut output, &mut lines).await {
            break Err(e);
        }
    };
    // The client has gone: the session's requests still running are cancelled with it.
    driver.close(session, &mut |_| {});
    driver.logger().log(Level::Info, "stdin closed; bb stops");
    result
}

/// Appends each message delivered to `lines`, newline-terminated. Done needs nothing on stdio: the
/// client matches answers by id.
fn append_to(lines: &mut Vec<u8>) -> impl FnMut(Delivery) + '_ {
    |d| {
        if let Delivery::Send { message, .. } = d {
            lines.extend_from_slice(&message);
            lines.push(b'\n');
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
/// between threads. Otherwise (a terminal, whose mode bb must not change, or a regular file, which
/// cannot be polled), stdin is read by a thread of its own and stdout written directly.
pub fn serve_stdio(
    config: ServerConfig,
    bitbucket: Arc<dyn Bitbucket>,
    logger: Logger,
    max_line: usize,
) -> std::io::Result<()> {
    if let Some((input, output)) = polled_stdio() {
        return smol::block_on(serve(input, output, config, bitbucket, logger, max_line));
    }
    let (tx, rx) = smol::channel::bounded::<Event>(64);
    let reader_tx = tx.clone();
    std::thread::Builder::new().name("bb-stdin".into()).spawn(move || {
        smol::block_on(read_frames(AssertAsync::new(std::io::stdin().lock()), reader_tx, max_line));
    })?;
    let stdout = AssertAsync::new(std::io::stdout().lock());
    smol::block_on(pump(rx, stdout, driver(config, bitbucket, logger, tx), max_line))
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
