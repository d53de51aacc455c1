//! Which proxies bb believes (`--trusted-proxy`), and who a request that came through one is from.
//!
//! Behind a load balancer every person connects from the balancer's address, so the rules kept per
//! address (token checks, session and connection shares, login allowances) would count them all as
//! one. Only for a connection from a trusted proxy does bb read who the person is from what the proxy
//! says: a PROXY protocol v2 header (`proxy_header`), which names the connection's source, or
//! `X-Forwarded-For`, which names each request's. From anyone else neither is read: a client cannot
//! choose its own address (`docs/reference/proxies.md "Only a trusted proxy is believed"`).
//!
//! `X-Forwarded-For` is read from the right (`docs/reference/proxies.md "X-Forwarded-For"`): each proxy
//! appends the address it heard from, so the right-most address that is not a trusted proxy is the
//! last one a trusted proxy wrote, and everything left of it may be the client's own invention. A
//! header that cannot be read whole is not read at all: the request is the connection's.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use hyper::header::{HeaderMap, HeaderName};

use crate::peer::Peer;

/// The header each proxy appends the address it heard from to.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// The most hops an `X-Forwarded-For` may name (over all its lines); a longer one is not read.
pub(crate) const MAX_HOPS: usize = 32;

/// A network of trusted proxies: an address and how many of its leading bits name the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    bits: u8,
}

impl Cidr {
    /// Reads `10.0.0.0/8`, `fd00::/8`, or a bare address (all of its bits: /32, /128). A network
    /// whose address has bits set past its prefix (`10.0.0.1/8`) is refused, as likely a typo; an
    /// IPv4-mapped IPv6 network is kept as the IPv4 network it is, since connections from such
    /// addresses are counted as IPv4. The error is a sentence that names `value`.
    pub fn parse(value: &str) -> Result<Cidr, String> {
        let value = value.trim();
        let bad = || {
            format!(
                "`{value}` is not an address or network: use an IP address such as 10.0.0.5, or a network such as \
                 10.0.0.0/8 or fd00::/8"
            )
        };
        let (addr, bits) = match value.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (value, None),
        };
        let net: IpAddr = addr.parse().map_err(|_| bad())?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) && b.len() <= 3 => {
                b.parse::<u8>().ok().filter(|n| *n <= max).ok_or_else(|| {
                    format!("`{value}` has a prefix longer than the address: at most /{max} for this address")
                })?
            }
            Some(_) => return Err(bad()),
        };
        let cidr = match net {
            IpAddr::V6(v6) if bits >= 96 && v6.to_ipv4_mapped().is_some() => {
                Cidr { net: IpAddr::V4(v6.to_ipv4_mapped().unwrap_or(Ipv4Addr::UNSPECIFIED)), bits: bits - 96 }
            }
            _ => Cidr { net, bits },
        };
        if cidr.masked() != cidr.net {
            return Err(format!(
                "`{value}` has bits set past its prefix: the network is {}/{}",
                cidr.masked(),
                cidr.bits
            ));
        }
        Ok(cidr)
    }

    /// The network's address with the bits past the prefix cleared.
    fn masked(&self) -> IpAddr {
        match self.net {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask32(self.bits))),
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask128(self.bits))),
        }
    }

    /// Whether `ip` (already canonical: an IPv4-mapped address as IPv4) is in the network.
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => (u32::from(n) ^ u32::from(a)) & mask32(self.bits) == 0,
            (IpAddr::V6(n), IpAddr::V6(a)) => (u128::from(n) ^ u128::from(a)) & mask128(self.bits) == 0,
            _ => false,
        }
    }
}

fn mask32(bits: u8) -> u32 {
    u32::MAX.checked_shl(32 - u32::from(bits.min(32))).unwrap_or(0)
}

fn mask128(bits: u8) -> u128 {
    u128::MAX.checked_shl(128 - u32::from(bits.min(128))).unwrap_or(0)
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.net, self.bits)
    }
}

/// The proxies bb believes; empty (the default): none, every request is from the address that connects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    /// Proxies in these networks.
    pub fn new(networks: Vec<Cidr>) -> TrustedProxies {
        TrustedProxies(networks)
    }

    /// Whether none is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The networks, as `--trusted-proxy` reads them, joined by commas (for the log at start).
    pub fn words(&self) -> String {
        self.0.iter().map(Cidr::to_string).collect::<Vec<_>>().join(", ")
    }

    /// Whether a connection from `ip` comes from a trusted proxy.
    pub(crate) fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|c| c.contains(ip))
    }

    /// Who a request is from: the person `X-Forwarded-For` names when the connection's `source` (its
    /// TCP peer, or the source its proxy's PROXY header named) is a trusted proxy; else the source.
    pub(crate) fn peer_of(&self, source: IpAddr, headers: &HeaderMap) -> Peer {
        if !self.trusts(source) {
            return Peer::of_ip(source);
        }
        let lines = headers.get_all(X_FORWARDED_FOR).iter().map(|v| v.as_bytes());
        match hops(lines) {
            Some(hops) => Peer::of_ip(self.person(&hops).unwrap_or(source)),
            None => Peer::of_ip(source),
        }
    }

    /// The right-most hop that is not a trusted proxy; if every one is, the left-most.
    fn person(&self, hops: &[IpAddr]) -> Option<IpAddr> {
        hops.iter().rev().find(|ip| !self.trusts(**ip)).or_else(|| hops.first()).copied()
    }
}

/// `ip`, with an IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The hops of `X-Forwarded-For`'s lines, joined in order; `None` when there is no line, or any hop
/// is not an address (an IP, or an IP and port as some proxies write it), or there are more than
/// [`MAX_HOPS`], or a line is not visible ASCII.
pub(crate) fn hops<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Option<Vec<IpAddr>> {
    let mut hops = Vec::new();
    for line in lines {
        let line = std::str::from_utf8(line).ok()?;
        if !line.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) {
            return None;
        }
        for hop in line.split(',') {
            if hops.len() == MAX_HOPS {
                return None;
            }
            hops.push(canonical(hop_address(hop.trim_matches([' ', '\t']))?));
        }
    }
    (!hops.is_empty()).then_some(hops)
}

/// One hop: `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, `192.0.2.1:4711` or `[2001:db8::1]:4711`.
fn hop_address(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(addr) = hop.parse::<SocketAddr>() {
        return Some(addr.ip());
    }
    hop.strip_prefix('[')?.strip_suffix(']')?.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use hyper::header::HeaderValue;

    fn trusted(list: &[&str]) -> TrustedProxies {
        TrustedProxies::new(list.iter().map(|c| Cidr::parse(c).unwrap()).collect())
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn from(proxies: &TrustedProxies, source: &str, xff: &[&[u8]]) -> String {
        let mut h = HeaderMap::new();
        for line in xff {
            h.append(X_FORWARDED_FOR, HeaderValue::from_bytes(line).unwrap());
        }
        proxies.peer_of(ip(source), &h).to_string()
    }

    #[test]
    fn a_network_is_an_address_with_a_prefix_or_a_bare_address_of_all_its_bits() {
        let c = |s: &str| Cidr::parse(s).map(|c| c.to_string());
        assert_eq!(c("10.0.0.0/8").unwrap(), "10.0.0.0/8");
        assert_eq!(c(" 127.0.0.1 ").unwrap(), "127.0.0.1/32");
        assert_eq!(c("fd00::/8").unwrap(), "fd00::/8");
        assert_eq!(c("::1").unwrap(), "::1/128");
        assert_eq!(c("0.0.0.0/0").unwrap(), "0.0.0.0/0");
        assert_eq!(c("::ffff:10.0.0.0/104").unwrap(), "10.0.0.0/8", "a mapped network is its IPv4 network");
        assert!(c("10.0.0.1/8").unwrap_err().contains("the network is 10.0.0.0/8"));
        assert!(c("10.0.0.0/33").unwrap_err().contains("at most /32"));
        assert!(c("fd00::/129").unwrap_err().contains("at most /128"));
        for bad in ["", "proxy.example", "10.0.0.0/", "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0/8", "[::1]", "1.2.3.4:80"]
        {
            assert!(c(bad).unwrap_err().contains("is not an address or network"), "{bad}");
        }
    }

    #[test]
    fn a_network_holds_the_addresses_under_its_prefix_and_a_mapped_address_as_its_ipv4() {
        let p = trusted(&["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]);
        assert!(p.trusts(ip("10.255.0.1")) && !p.trusts(ip("11.0.0.1")));
        assert!(p.trusts(ip("::ffff:10.1.2.3")), "a dual-stack listener's IPv4 peer");
        assert!(p.trusts(ip("2001:db8:ffff::1")) && !p.trusts(ip("2001:db9::1")));
        assert!(p.trusts(ip("192.0.2.7")) && !p.trusts(ip("192.0.2.8")));
        assert!(trusted(&["0.0.0.0/0"]).trusts(ip("203.0.113.1")) && !trusted(&["0.0.0.0/0"]).trusts(ip("::2")));
        assert!(!TrustedProxies::default().trusts(ip("127.0.0.1")));
    }

    #[test]
    fn from_a_trusted_proxy_the_person_is_the_right_most_hop_that_is_no_trusted_proxy() {
        let p = trusted(&["10.0.0.0/8"]);
        assert_eq!(from(&p, "10.0.0.1", &[b"203.0.113.9"]), "203.0.113.9");
        // A client that wrote its own header is the hop the proxy appended after it.
        assert_eq!(from(&p, "10.0.0.1", &[b"198.51.100.1, 203.0.113.9"]), "203.0.113.9");
        // Trusted proxies in the chain are skipped, from the right.
        assert_eq!(from(&p, "10.0.0.1", &[b"198.51.100.1, 203.0.113.9, 10.2.0.1,10.3.0.1"]), "203.0.113.9");
        // Every hop trusted: the left-most.
        assert_eq!(from(&p, "10.0.0.1", &[b"10.9.0.1, 10.2.0.1"]), "10.9.0.1");
        // Several lines are one list, in order.
        assert_eq!(from(&p, "10.0.0.1", &[b"198.51.100.1", b"203.0.113.9, 10.2.0.1"]), "203.0.113.9");
        // Ports and brackets as some proxies write them; IPv6 counted by its /64.
        assert_eq!(from(&p, "10.0.0.1", &[b"203.0.113.9:4711"]), "203.0.113.9");
        assert_eq!(from(&p, "10.0.0.1", &[b"[2001:db8:1:2::9]:4711"]), "2001:db8:1:2::/64");
        assert_eq!(from(&p, "10.0.0.1", &[b"[2001:db8:1:2::9]"]), "2001:db8:1:2::/64");
        assert_eq!(from(&p, "::ffff:10.0.0.1", &[b"::ffff:203.0.113.9"]), "203.0.113.9");
        // No header: the proxy itself (its health checks).
        assert_eq!(from(&p, "10.0.0.1", &[]), "10.0.0.1");
    }

    #[test]
    fn from_anyone_else_the_header_is_never_read() {
        let p = trusted(&["10.0.0.0/8"]);
        assert_eq!(from(&p, "192.0.2.1", &[b"203.0.113.9"]), "192.0.2.1");
        assert_eq!(from(&TrustedProxies::default(), "127.0.0.1", &[b"203.0.113.9"]), "127.0.0.1");
    }

    #[test]
    fn a_header_that_cannot_be_read_whole_is_not_read_at_all() {
        let p = trusted(&["10.0.0.0/8"]);
        let too_many = vec!["203.0.113.9"; MAX_HOPS + 1].join(",");
        let just_enough = vec!["203.0.113.9"; MAX_HOPS].join(",");
        assert_eq!(from(&p, "10.0.0.1", &[just_enough.as_bytes()]), "203.0.113.9");
        for bad in [
            too_many.as_bytes(),
            b"unknown",
            b"203.0.113.9,,10.2.0.1",
            b"",
            b" , ",
            b"203.0.113.9 10.2.0.1",
            b"_hidden, 203.0.113.9",
            b"203.0.113.9\xff",
            b"203.0.113.9:99999",
            b"[203.0.113.9]",
        ] {
            assert_eq!(from(&p, "10.0.0.1", &[b"198.51.100.1", bad]), "10.0.0.1", "{:?}", String::from_utf8_lossy(bad));
        }
        let split = [vec![b"203.0.113.9"; MAX_HOPS].as_slice(), &[b"203.0.113.9"]].concat();
        assert_eq!(hops(split.iter().map(|l| l.as_slice())), None, "the bound counts every line's hops");
    }

    proptest::proptest! {
        #![proptest_config(crate::proptest_config())]
        /// Whatever bytes the header lines hold, reading them returns, and any hops read are at most the bound.
        #[test]
        fn any_header_bytes_are_read_or_refused_never_a_panic(lines in proptest::collection::vec(
            proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80), 0..4)) {
            if let Some(h) = hops(lines.iter().map(Vec::as_slice)) {
                proptest::prop_assert!(!h.is_empty() && h.len() <= MAX_HOPS);
            }
        }

        /// Lines made of addresses, separators and junk: the person is a hop or the source, never a panic.
        #[test]
        fn any_chain_names_a_hop_or_the_source(parts in proptest::collection::vec(proptest::sample::select(vec![
            "10.0.0.1", "203.0.113.9", "[2001:db8::1]:80", "::ffff:10.1.1.1", ",", ", ", " ", "x", "\t", ":", "[", "]",
        ]), 0..40)) {
            let p = trusted(&["10.0.0.0/8"]);
            let line = parts.concat();
            let mut h = HeaderMap::new();
            if let Ok(v) = HeaderValue::from_str(&line) {
                h.append(X_FORWARDED_FOR, v);
            }
            let who = p.peer_of(ip("10.0.0.1"), &h).to_string();
            proptest::prop_assert!(["10.0.0.1", "203.0.113.9", "2001:db8::/64", "10.1.1.1"].contains(&who.as_str()), "{}", who);
        }
    }
}
