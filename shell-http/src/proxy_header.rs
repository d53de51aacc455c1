//! The PROXY protocol v2 header a trusted proxy may send first on a connection (haproxy's
//! `send-proxy-v2`), naming the source of the connection it relays: read only from a trusted proxy
//! (`proxies`), within the request head's deadline, and at most [`MAX_ADDRESS_BLOCK`] bytes past
//! its fixed part. The layout, and what a receiver must do with each value:
//! `docs/reference/proxies.md "PROXY protocol v2"`.
//!
//! ```text
//!   bytes 0..12   signature \r\n\r\n\0\r\nQUIT\n        anything else: not a header, the bytes are HTTP
//!   byte  12      version 2 (high 4 bits), command     LOCAL (0): the proxy's own connection, keep the TCP peer
//!                 (low 4 bits)                          PROXY (1): relayed, read the source; others: drop
//!   byte  13      family (high), transport (low)        INET or INET6 over STREAM: the source below;
//!                                                       UNSPEC, UNIX, DGRAM: keep the TCP peer; others: drop
//!   bytes 14..16  length of what follows (big-endian)   more than MAX_ADDRESS_BLOCK: drop
//!   then          source address, destination address, source port, destination port; then TLVs (skipped)
//! ```

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use smol::net::TcpStream;

/// The 12 bytes a v2 header begins with.
pub(crate) const SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// The most bytes accepted after the 16-byte fixed part (addresses and TLVs): an IPv6 address block is
/// 36, a UNIX one 216; a longer header is dropped rather than buffered.
pub(crate) const MAX_ADDRESS_BLOCK: usize = 512;

/// What the first bytes of a connection from a trusted proxy say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// They are not a v2 header: they are the connection's own bytes (HTTP).
    Absent,
    /// Not decided yet: at least this many bytes in all are needed.
    Need(usize),
    /// A whole header of `len` bytes; the source it names, or `None` to keep the TCP peer.
    Header { len: usize, source: Option<IpAddr> },
    /// A header that breaks the specification: the connection is dropped.
    Invalid(&'static str),
}

/// Reads the start of `bytes` (what arrived so far) as a v2 header.
pub(crate) fn parse(bytes: &[u8]) -> Parsed {
    let n = bytes.len().min(SIGNATURE.len());
    if bytes[..n] != SIGNATURE[..n] {
        return Parsed::Absent;
    }
    let Some(fixed) = bytes.get(..16) else { return Parsed::Need(16) };
    let (version, command) = (fixed[12] >> 4, fixed[12] & 0x0f);
    let (family, transport) = (fixed[13] >> 4, fixed[13] & 0x0f);
    let len = usize::from(u16::from_be_bytes([fixed[14], fixed[15]]));
    if version != 2 {
        return Parsed::Invalid("its version is not 2");
    }
    if command > 1 {
        return Parsed::Invalid("its command is neither LOCAL nor PROXY");
    }
    if family > 3 || transport > 2 {
        return Parsed::Invalid("its address family or transport is not one the specification defines");
    }
    if len > MAX_ADDRESS_BLOCK {
        return Parsed::Invalid("it is longer than bb reads");
    }
    let Some(block) = bytes.get(16..16 + len) else { return Parsed::Need(16 + len) };
    let source = match (command, family, transport) {
        // LOCAL: the proxy's own connection (a health check); the block is skipped whatever it says.
        (0, _, _) => None,
        (_, 1, 1) => match block.get(..12) {
            Some(a) => Some(IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3]))),
            None => return Parsed::Invalid("its IPv4 address block is short"),
        },
        (_, 2, 1) => match block.get(..36).and_then(|a| <[u8; 16]>::try_from(&a[..16]).ok()) {
            Some(a) => Some(IpAddr::V6(Ipv6Addr::from(a))),
            None => return Parsed::Invalid("its IPv6 address block is short"),
        },
        // UNSPEC, UNIX, datagrams: valid, but no address bb counts by; the TCP peer stands.
        _ => None,
    };
    Parsed::Header { len: 16 + len, source }
}

/// Reads a v2 header from the start of `stream`, if it begins with one, within `deadline`: the stream
/// with any bytes read ahead put back, and the source the header named (`None`: no header, LOCAL, or
/// an address family bb does not count by). An error when the header is invalid or incomplete, or
/// does not arrive whole in time: the connection is then dropped.
pub(crate) async fn read(mut stream: TcpStream, deadline: Duration) -> io::Result<(Prefixed, Option<IpAddr>)> {
    let mut buf = Vec::with_capacity(64);
    let read = async {
        loop {
            match parse(&buf) {
                Parsed::Absent => return Ok(None),
                Parsed::Header { len, source } => {
                    buf.drain(..len);
                    return Ok(source);
                }
                Parsed::Invalid(why) => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a PROXY header: {why}")));
                }
                Parsed::Need(n) => {
                    // No further than the header: what follows it stays in the socket for hyper.
                    let mut chunk = [0u8; 16 + MAX_ADDRESS_BLOCK];
                    let want = n.saturating_sub(buf.len()).min(chunk.len());
                    let got = stream.read(&mut chunk[..want]).await?;
                    if got == 0 && buf.is_empty() {
                        return Ok(None);
                    }
                    if got == 0 {
                        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a PROXY header cut short"));
                    }
                    buf.extend_from_slice(&chunk[..got]);
                }
            }
        }
    };
    let source = smol::future::or(read, async {
        smol::Timer::after(deadline).await;
        Err(io::Error::new(io::ErrorKind::TimedOut, "no whole PROXY header within the header timeout"))
    })
    .await?;
    Ok((Prefixed { head: buf, at: 0, inner: stream }, source))
}

/// A connection's stream with the bytes read ahead of it (looking for a PROXY header) put back in front.
#[derive(Debug)]
pub(crate) struct Prefixed {
    head: Vec<u8>,
    at: usize,
    inner: TcpStream,
}

impl Prefixed {
    /// `stream`, nothing read ahead.
    pub(crate) fn plain(stream: TcpStream) -> Prefixed {
        Prefixed { head: Vec::new(), at: 0, inner: stream }
    }

    /// The socket, dropping what was read ahead.
    pub(crate) fn into_tcp(self) -> TcpStream {
        self.inner
    }
}

impl AsyncRead for Prefixed {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Some(left) = this.head.get(this.at..).filter(|l| !l.is_empty()) {
            let n = left.len().min(buf.len());
            buf[..n].copy_from_slice(&left[..n]);
            this.at += n;
            return Poll::Ready(Ok(n));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A v2 header: `ver_cmd`, `fam`, then `block` (its length written before it).
    fn header(ver_cmd: u8, fam: u8, block: &[u8]) -> Vec<u8> {
        let mut h = SIGNATURE.to_vec();
        h.extend_from_slice(&[ver_cmd, fam]);
        h.extend_from_slice(&u16::try_from(block.len()).unwrap().to_be_bytes());
        h.extend_from_slice(block);
        h
    }

    const V4: [u8; 12] = [203, 0, 113, 9, 10, 0, 0, 1, 0x12, 0x34, 0x1f, 0x90];

    fn v6_block() -> Vec<u8> {
        let mut b = "2001:db8::9".parse::<Ipv6Addr>().unwrap().octets().to_vec();
        b.extend_from_slice(&"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets());
        b.extend_from_slice(&[0x12, 0x34, 0x1f, 0x90]);
        b
    }

    #[test]
    fn a_proxy_command_over_tcp_names_its_source_and_the_bytes_after_it_are_the_connections() {
        let mut bytes = header(0x21, 0x11, &V4);
        bytes.extend_from_slice(b"GET / HTTP/1.1\r\n");
        assert_eq!(parse(&bytes), Parsed::Header { len: 28, source: Some("203.0.113.9".parse().unwrap()) });
        assert_eq!(
            parse(&header(0x21, 0x21, &v6_block())),
            Parsed::Header { len: 52, source: Some("2001:db8::9".parse().unwrap()) }
        );
        // TLVs after the addresses are skipped.
        let mut with_tlvs = V4.to_vec();
        with_tlvs.extend_from_slice(&[0x04, 0x00, 0x03, 0, 0, 0, 0x05, 0x00, 0x01, 7]);
        assert_eq!(
            parse(&header(0x21, 0x11, &with_tlvs)),
            Parsed::Header { len: 38, source: Some("203.0.113.9".parse().unwrap()) }
        );
    }

    #[test]
    fn local_unspec_unix_and_datagrams_keep_the_tcp_peer() {
        assert_eq!(parse(&header(0x20, 0x00, &[])), Parsed::Header { len: 16, source: None });
        assert_eq!(
            parse(&header(0x20, 0x11, &V4)),
            Parsed::Header { len: 28, source: None },
            "LOCAL ignores the block"
        );
        assert_eq!(parse(&header(0x20, 0x11, &[])), Parsed::Header { len: 16, source: None });
        assert_eq!(parse(&header(0x21, 0x00, &[])), Parsed::Header { len: 16, source: None });
        assert_eq!(parse(&header(0x21, 0x31, &[0; 216])), Parsed::Header { len: 232, source: None });
        assert_eq!(parse(&header(0x21, 0x12, &V4)), Parsed::Header { len: 28, source: None });
    }

    #[test]
    fn anything_but_the_signature_is_the_connections_own_bytes() {
        assert_eq!(parse(b"GET / HTTP/1.1\r\n"), Parsed::Absent);
        assert_eq!(parse(b"\r\n\r\nGET"), Parsed::Absent);
        assert_eq!(parse(b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), Parsed::Absent, "version 1 is not read");
        assert_eq!(parse(b""), Parsed::Need(16));
        assert_eq!(parse(b"\r\n\r\n\0"), Parsed::Need(16));
    }

    #[test]
    fn a_truncated_header_waits_for_the_rest_and_a_broken_one_is_refused() {
        let whole = header(0x21, 0x21, &v6_block());
        for cut in 0..whole.len() {
            let p = parse(&whole[..cut]);
            assert!(matches!(p, Parsed::Need(n) if n > cut && n <= whole.len()), "{cut}: {p:?}");
        }
        assert!(matches!(parse(&header(0x11, 0x11, &V4)), Parsed::Invalid(_)), "version 1 in binary");
        assert!(matches!(parse(&header(0x31, 0x11, &V4)), Parsed::Invalid(_)), "version 3");
        assert!(matches!(parse(&header(0x22, 0x11, &V4)), Parsed::Invalid(_)), "command 2");
        assert!(matches!(parse(&header(0x21, 0x41, &V4)), Parsed::Invalid(_)), "family 4");
        assert!(matches!(parse(&header(0x21, 0x13, &V4)), Parsed::Invalid(_)), "transport 3");
        assert!(matches!(parse(&header(0x21, 0x11, &V4[..11])), Parsed::Invalid(_)), "a short IPv4 block");
        assert!(matches!(parse(&header(0x21, 0x21, &V4)), Parsed::Invalid(_)), "a short IPv6 block");
        let longest = header(0x21, 0x11, &[0; MAX_ADDRESS_BLOCK]);
        assert!(matches!(parse(&longest), Parsed::Header { len, .. } if len == 16 + MAX_ADDRESS_BLOCK));
        // Too long is refused from the fixed part alone, before any of the block is read.
        let too_long = header(0x21, 0x11, &[0; MAX_ADDRESS_BLOCK + 1]);
        assert!(matches!(parse(&too_long[..16]), Parsed::Invalid(_)));
        let mut max = SIGNATURE.to_vec();
        max.extend_from_slice(&[0x21, 0x11, 0xff, 0xff]);
        assert!(matches!(parse(&max), Parsed::Invalid(_)));
    }

    proptest::proptest! {
        #![proptest_config(crate::proptest_config())]
        /// Any bytes: parsing returns, a header's length is within what arrived and the bound, and a
        /// need is for more than arrived.
        #[test]
        fn any_bytes_are_parsed_or_refused_never_a_panic(tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
                                                         signed in proptest::prelude::any::<bool>()) {
            let bytes = if signed { [SIGNATURE.as_slice(), &tail].concat() } else { tail };
            match parse(&bytes) {
                Parsed::Header { len, .. } => proptest::prop_assert!(len <= bytes.len() && len <= 16 + MAX_ADDRESS_BLOCK),
                Parsed::Need(n) => proptest::prop_assert!(n > bytes.len() && n <= 16 + MAX_ADDRESS_BLOCK),
                Parsed::Absent => proptest::prop_assert!(!bytes.starts_with(&SIGNATURE[..bytes.len().min(12)]) ),
                Parsed::Invalid(_) => {}
            }
        }

        /// Headers made of the fields' likely values, cut anywhere: never a panic.
        #[test]
        fn any_header_cut_anywhere_is_parsed_or_refused(ver_cmd in proptest::sample::select(vec![0x20u8, 0x21, 0x22, 0x11, 0x2f]),
                                                        fam in proptest::sample::select(vec![0x00u8, 0x11, 0x12, 0x21, 0x22, 0x31, 0x32, 0x44]),
                                                        block in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
                                                        cut in 0usize..400) {
            let h = header(ver_cmd, fam, &block);
            let _ = parse(&h[..cut.min(h.len())]);
        }
    }
}
