//! Which addresses bb never connects to for a client's document: the special-use blocks of RFC 6890's
//! registries (IANA's IPv4 and IPv6 Special-Purpose Address Registries, with the blocks added since:
//! RFC 7526's 6to4 relays, RFC 9637's 3fff::/20), and IPv6 addresses that carry an IPv4 address
//! (IPv4-mapped, NAT64's 64:ff9b::/96, 6to4's 2002::/16), judged by the address they carry. Sources:
//! docs/reference/oauth.md, "Client ID Metadata Documents".

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is special-use (RFC 6890's registries and those after it), or `None` for an address
/// on the Internet.
pub(crate) fn special_use(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => special_v4(ip),
        IpAddr::V6(ip) => special_v6(ip),
    }
}

/// IPv4's special-use blocks: network, prefix length, what it is.
const V4: &[(u32, u32, &str)] = &[
    (0x0000_0000, 8, "unspecified (\"this network\")"),
    (0x0a00_0000, 8, "private"),
    (0x6440_0000, 10, "shared address space (carrier-grade NAT)"),
    (0x7f00_0000, 8, "loopback"),
    (0xa9fe_0000, 16, "link-local"),
    (0xac10_0000, 12, "private"),
    (0xc000_0000, 24, "reserved for IETF protocols"),
    (0xc000_0200, 24, "for documentation"),
    (0xc058_6300, 24, "reserved (6to4 relays)"),
    (0xc0a8_0000, 16, "private"),
    (0xc612_0000, 15, "for benchmarking"),
    (0xc633_6400, 24, "for documentation"),
    (0xcb00_7100, 24, "for documentation"),
    (0xe000_0000, 4, "multicast"),
    (0xffff_ffff, 32, "broadcast"),
    (0xf000_0000, 4, "reserved"),
];

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4.iter().find(|&&(net, len, _)| bits >> (32 - len) == net >> (32 - len)).map(|&(_, _, why)| why)
}

/// IPv6's special-use blocks within global unicast (2000::/3): network, prefix length, what.
const V6: &[(u128, u32, &str)] = &[
    (0x2001_0000 << 96, 32, "a Teredo tunnel address"),
    (0x2001_0db8 << 96, 32, "for documentation"),
    (0x2001_0000 << 96, 23, "reserved for IETF protocols"),
    (0x3fff << 112, 20, "for documentation"),
];

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    let within = |net: u128, len: u32| bits >> (128 - len) == net >> (128 - len);
    // Addresses that carry an IPv4 address reach it: IPv4-mapped, NAT64's well-known prefix, 6to4.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4);
    }
    if within(0x0064_ff9b << 96, 96) {
        return special_v4(Ipv4Addr::from(bits as u32));
    }
    if within(0x2002 << 112, 16) {
        return special_v4(Ipv4Addr::from((bits >> 80) as u32));
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    if within(0xff00 << 112, 8) {
        return Some("multicast");
    }
    if within(0xfe80 << 112, 10) {
        return Some("link-local");
    }
    if within(0xfc00 << 112, 7) {
        return Some("unique-local");
    }
    if !within(0x2000 << 112, 3) {
        return Some("reserved");
    }
    V6.iter().find(|&&(net, len, _)| within(net, len)).map(|&(_, _, why)| why)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_internal_range_is_special_use() {
        let cases = [
            ("127.0.0.1", "loopback"),
            ("127.0.0.77", "loopback"),
            ("127.255.255.254", "loopback"),
            ("10.0.0.5", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("100.127.255.255", "carrier-grade NAT"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
            ("192.0.0.8", "IETF"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("192.88.99.1", "6to4"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("ff02::1", "multicast"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.1.2.3", "private"),
            ("::ffff:169.254.169.254", "link-local"),
            ("64:ff9b::a00:1", "private"),
            ("2002:7f00:1::", "loopback"),
            ("2002:c0a8:101::1", "private"),
            ("2001::1", "Teredo"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001:2::1", "IETF"),
            ("::127.0.0.1", "reserved"),
            ("100::1", "reserved"),
            ("fec0::1", "reserved"),
        ];
        for (ip, why) in cases {
            let said = special_use(ip.parse().unwrap());
            assert!(said.is_some_and(|s| s.contains(why)), "{ip}: {said:?}, not {why}");
        }
    }

    #[test]
    fn addresses_on_the_internet_are_not_special_use() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(special_use(ip.parse().unwrap()), None, "{ip}");
        }
    }
}
