//! Newline-delimited framing with a bound: a line longer than the limit is skipped to its end
//! and reported, never buffered whole, so a client cannot make bb hold unbounded memory.

use smol::io::{AsyncRead, AsyncReadExt};

/// The longest line bb accepts by default ([`bb_core::limits::MAX_STDIO_LINE`]).
pub const MAX_LINE: usize = bb_core::limits::MAX_STDIO_LINE;

/// How much is read from the input at a time.
const CHUNK: usize = 64 * 1024;

/// One framed item from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its `\n` (a trailing `\r` is left for the JSON parser, which
    /// treats it as whitespace).
    Line(Vec<u8>),
    /// A line longer than the limit was skipped.
    Oversized,
}

/// Reads newline-delimited frames of at most `limit` bytes.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    limit: usize,
    /// Bytes read but not yet framed.
    pending: Vec<u8>,
    /// The buffer each read fills.
    chunk: Box<[u8]>,
    /// Where the unframed bytes in `pending` start.
    pos: usize,
    /// Whether the line being read has already gone over the limit (and is being skipped).
    skipping: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader over `inner` that refuses lines longer than `limit` bytes.
    pub fn new(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            limit,
            pending: Vec::new(),
            chunk: vec![0; CHUNK].into_boxed_slice(),
            pos: 0,
            skipping: false,
            eof: false,
        }
    }

    /// The next frame; `Ok(None)` at end of input. A last line without `\n` still counts.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        let mut scanned = self.pos;
        loop {
            if let Some(i) = self.pending[scanned..].iter().position(|&b| b == b'\n') {
                let end = scanned + i;
                let line = &self.pending[self.pos..end];
                let frame = if std::mem::take(&mut self.skipping) || line.len() > self.limit {
                    Frame::Oversized
                } else {
                    Frame::Line(line.to_vec())
                };
                self.pos = end + 1;
                return Ok(Some(frame));
            }
            // No newline in what is buffered: drop what was framed, then read more.
            self.pending.drain(..self.pos);
            self.pos = 0;
            if self.pending.len() > self.limit {
                // Too long already: forget it and skip to its newline.
                self.skipping = true;
                self.pending.clear();
            }
            scanned = self.pending.len();
            if self.eof {
                if std::mem::take(&mut self.skipping) {
                    return Ok(Some(Frame::Oversized));
                }
                if self.pending.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Frame::Line(std::mem::take(&mut self.pending))));
            }
            let n = self.inner.read(&mut self.chunk).await?;
            if n == 0 {
                self.eof = true;
            }
            self.pending.extend_from_slice(&self.chunk[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn frames(input: &[u8], limit: usize, capacity: usize) -> Vec<Frame> {
        smol::block_on(async {
            let mut lines = LineReader::new(Trickle { data: input, step: capacity }, limit);
            let mut out = Vec::new();
            while let Some(f) = lines.next().await.unwrap() {
                out.push(f);
            }
            out
        })
    }

    /// An input that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl AsyncRead for Trickle<'_> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut [u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            std::task::Poll::Ready(Ok(n))
        }
    }

    #[test]
    fn lines_are_split_on_newlines_and_a_last_line_without_one_counts() {
        assert_eq!(
            frames(b"a\nbc\n\nd", 10, 2),
            [Frame::Line(b"a".to_vec()), Frame::Line(b"bc".to_vec()), Frame::Line(vec![]), Frame::Line(b"d".to_vec())]
        );
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_and_the_next_one_is_read() {
        assert_eq!(frames(b"0123456789AB\nok\n", 10, 4), [Frame::Oversized, Frame::Line(b"ok".to_vec())]);
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_accepted() {
        assert_eq!(frames(b"0123456789\n", 10, 3), [Frame::Line(b"0123456789".to_vec())]);
    }

    #[test]
    fn an_oversized_last_line_without_newline_is_reported() {
        assert_eq!(frames(b"0123456789AB", 10, 5), [Frame::Oversized]);
    }
}
