//! How a smol byte stream (async-net's `TcpStream`, or a TLS stream over it) reads and writes as hyper's
//! `Read` and `Write`.

use hyper::rt::ReadBufCursor;
use smol::io::{AsyncRead, AsyncWrite};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A smol byte stream (a `TcpStream`) as hyper's `Read` + `Write`.
#[derive(Debug)]
pub struct SmolIo<T>(pub T);

impl<T: AsyncRead + Unpin> hyper::rt::Read for SmolIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        // The cursor's uninitialised memory is only reachable with unsafe code, which the workspace
        // denies: read into this thread's buffer (zeroed once, not on every read) and copy.
        READ_BUF.with_borrow_mut(|tmp| {
            let want = buf.remaining().min(tmp.len());
            match Pin::new(&mut self.0).poll_read(cx, &mut tmp[..want]) {
                Poll::Ready(Ok(n)) => {
                    buf.put_slice(&tmp[..n]);
                    Poll::Ready(Ok(()))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            }
        })
    }
}

thread_local! {
    /// Where [`SmolIo`] reads before copying into hyper's buffer: one per thread, since a read
    /// never awaits while it holds it.
    static READ_BUF: std::cell::RefCell<Box<[u8]>> = std::cell::RefCell::new(vec![0u8; 16 * 1024].into_boxed_slice());
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for SmolIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    /// Vectored: hyper then writes a response's head and its body with one `writev`, rather than
    /// copying the body behind the head first (a 20 KB tool list copied once more per request).
    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_close(cx)
    }
}
