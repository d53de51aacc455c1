//! Who a client is, for the limits one client may not exceed: its IP address, with an IPv6 address
//! counted by its /64 (one host is usually handed a whole /64, so counting single IPv6 addresses would
//! let it take a limit many times over) and an IPv4-mapped IPv6 address as the IPv4 address it is.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// The peer a connection or session counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Peer(IpAddr);

impl Peer {
    /// The peer of a connection from `addr`.
    pub(crate) fn of(addr: SocketAddr) -> Peer {
        Peer::of_ip(addr.ip())
    }

    /// The peer of the address `ip`: a connection's, or the one a trusted proxy names (`proxies`).
    pub(crate) fn of_ip(ip: IpAddr) -> Peer {
        match ip {
            IpAddr::V4(v4) => Peer(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Peer(IpAddr::V4(v4)),
                None => {
                    let s = v6.segments();
                    Peer(IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0)))
                }
            },
        }
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(a) => write!(f, "{a}"),
            IpAddr::V6(a) => write!(f, "{a}/64"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn peer(s: &str) -> Peer {
        Peer::of(s.parse().unwrap())
    }

    #[test]
    fn ipv6_addresses_of_one_64_are_one_peer_and_mapped_ipv4_is_its_ipv4() {
        assert_eq!(peer("[2001:db8:1:2:aaaa::1]:1"), peer("[2001:db8:1:2:bbbb::9]:2"));
        assert_ne!(peer("[2001:db8:1:2::1]:1"), peer("[2001:db8:1:3::1]:1"));
        assert_eq!(peer("[::ffff:10.0.0.1]:5"), peer("10.0.0.1:6"));
        assert_ne!(peer("10.0.0.1:5"), peer("10.0.0.2:5"));
        assert_eq!(peer("[2001:db8:1:2:aaaa::1]:1").to_string(), "2001:db8:1:2::/64");
        assert_eq!(peer("10.0.0.1:5").to_string(), "10.0.0.1");
    }
}
