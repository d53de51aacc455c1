//! A client id read strictly: RFC 3986's authority and the CIMD draft's rules for a client identifier
//! URL (§3: `https`, a host, a path, no username or password, no fragment, no `.` or `..` segment).
//! bb adds its own: the host is a full domain name, never an address (in any form a URL parser or
//! `inet_aton` reads as one) and never `localhost`. Sources: docs/reference/oauth.md, "Client ID
//! Metadata Documents".

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::special_use::special_use;

/// The longest client id read.
const MAX_URL: usize = 2048;

/// A client id as bb reads it: its host name, in lower case, and its port.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ClientIdUrl {
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl ClientIdUrl {
    /// Reads `url` strictly (RFC 3986's authority, the CIMD draft's rules), or says why not.
    pub(crate) fn parse(url: &str) -> Result<ClientIdUrl, String> {
        if url.len() > MAX_URL {
            return Err(format!("a client id must be at most {MAX_URL} characters long"));
        }
        let rest = url.strip_prefix("https://").ok_or("a client id must be an https:// URL")?;
        if url.contains('#') {
            return Err("a client id must not have a fragment (`#…`)".into());
        }
        if url.bytes().any(|b| b <= b' ' || b >= 0x7f || b == b'\\') {
            return Err("a client id must be printable ASCII, without spaces or backslashes".into());
        }
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        if authority.contains('@') {
            return Err("a client id must not carry a user name or password (`…@`)".into());
        }
        let host_end = match authority.strip_prefix('[') {
            Some(inside) => inside.find(']').map(|i| i + 2).ok_or("a client id's host is not a host name")?,
            None => authority.find(':').unwrap_or(authority.len()),
        };
        let (host, port) = authority.split_at(host_end);
        let port = match port.strip_prefix(':') {
            None if port.is_empty() => 443,
            Some(p) if (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u16>().ok().filter(|&p| p != 0).ok_or("a client id's port must be from 1 to 65535")?
            }
            _ => return Err("a client id's port must be from 1 to 65535".into()),
        };
        let host = check_host(host)?;
        if !tail.starts_with('/') {
            return Err(format!("a client id must have a path, such as https://{host}/client.json"));
        }
        let path = tail.split('?').next().unwrap_or_default();
        if path.split('/').any(is_dot_segment) {
            return Err("a client id must not have `.` or `..` path segments".into());
        }
        Ok(ClientIdUrl { host, port })
    }
}

/// `.` or `..`, also written with `%2e`.
fn is_dot_segment(segment: &str) -> bool {
    let s = segment.to_ascii_lowercase().replace("%2e", ".");
    s == "." || s == ".."
}

/// The host name bb may look up (lower case, as written), or why not: an address (in any of the
/// forms URL parsers and `inet_aton` read as one: `127.1`, `2130706433`, `0x7f.1`, `[::1]`),
/// `localhost` and its subdomains, a single label, or a name that is not one.
pub(crate) fn check_host(host: &str) -> Result<String, String> {
    let shown: String = host.chars().take(60).collect();
    if host.is_empty() {
        return Err("a client id must name a host".into());
    }
    if let Some(inside) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        let ip = inside.parse::<Ipv6Addr>().map_err(|_| format!("`{shown}` is not a host name"))?;
        return Err(address_refused(IpAddr::V6(ip)));
    }
    let lower = host.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!("`{shown}` is not a host name"));
    }
    if name.rsplit('.').next().is_some_and(is_ipv4_number) {
        return Err(match ipv4_loose(name) {
            Some(ip) => address_refused(IpAddr::V4(ip)),
            None => format!("`{shown}` is neither a host name nor an address"),
        });
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return Err(format!("the name {name} means this machine"));
    }
    if !name.contains('.') {
        return Err(format!("`{name}` is not a full domain name"));
    }
    Ok(lower)
}

/// Why a client id may not name `ip`.
fn address_refused(ip: IpAddr) -> String {
    match special_use(ip) {
        Some(why) => format!("the address {ip} is {why}"),
        None => format!("a client id must name its host, not the address {ip}"),
    }
}

/// Whether a label reads as a number to a URL parser (WHATWG's "ends in a number"): digits, or
/// `0x` and hex digits.
fn is_ipv4_number(label: &str) -> bool {
    match label.strip_prefix("0x") {
        Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// `s` read as `inet_aton` and WHATWG read an IPv4 address: one to four parts, each decimal,
/// octal (a leading `0`) or hex (`0x`), the last filling the bytes left.
fn ipv4_loose(s: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = s.split('.').map(ipv4_part).collect::<Option<_>>()?;
    let (last, init) = parts.split_last()?;
    if parts.len() > 4 || init.iter().any(|&p| p > 255) || *last >= 1u64 << (8 * (5 - parts.len())) {
        return None;
    }
    let high = init.iter().enumerate().fold(0u64, |v, (i, p)| v | p << (8 * (3 - i)));
    u32::try_from(high | last).ok().map(Ipv4Addr::from)
}

fn ipv4_part(p: &str) -> Option<u64> {
    let (digits, radix) = match p.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None if p.len() > 1 && p.starts_with('0') => (&p[1..], 8),
        None => (p, 10),
    };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    if digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_client_id_is_https_a_host_name_and_a_path() {
        assert_eq!(
            ClientIdUrl::parse("https://client.example.com/app.json"),
            Ok(ClientIdUrl { host: "client.example.com".into(), port: 443 })
        );
        assert_eq!(
            ClientIdUrl::parse("https://Client.Example.COM.:8443/a/b?v=1"),
            Ok(ClientIdUrl { host: "client.example.com.".into(), port: 8443 })
        );
        let refused = [
            ("http://client.example.com/app.json", "https://"),
            ("HTTPS://client.example.com/app.json", "https://"),
            ("https://user@client.example.com/app.json", "user name or password"),
            ("https://user:pw@client.example.com/app.json", "user name or password"),
            ("https://client.example.com@127.0.0.1/app.json", "user name or password"),
            ("https://client.example.com/app.json#x", "fragment"),
            ("https://client.example.com/app.json#", "fragment"),
            ("https:///app.json", "must name a host"),
            ("https://:443/app.json", "must name a host"),
            ("https://client.example.com", "must have a path"),
            ("https://client.example.com?x=1", "must have a path"),
            ("https://client.example.com/a/../app.json", "`..`"),
            ("https://client.example.com/./app.json", "`..`"),
            ("https://client.example.com/%2e%2E/app.json", "`..`"),
            ("https://client.example.com\\@127.0.0.1/", "backslashes"),
            ("https://client.example.com/a b", "spaces"),
            ("https://clïent.example.com/app.json", "ASCII"),
            ("https://client.example.com:0/app.json", "port"),
            ("https://client.example.com:65536/app.json", "port"),
            ("https://client.example.com:/app.json", "port"),
            ("https://client.example.com:x/app.json", "port"),
            ("https://client_x.example.com/app.json", "not a host name"),
            ("https://client..example.com/app.json", "not a host name"),
            ("https://-client.example.com/app.json", "not a host name"),
            ("https://client%2eexample.com/app.json", "not a host name"),
            ("https://[fe80::1%25eth0]/app.json", "not a host name"),
            ("https://LOCALHOST/app.json", "localhost"),
            ("https://localhost./app.json", "localhost"),
            ("https://evil.localhost/app.json", "localhost"),
            ("https://intranet/app.json", "full domain name"),
            ("https://[::1]/app.json", "the address ::1 is loopback"),
            ("https://[::ffff:7f00:1]:8080/app.json", "loopback"),
            ("https://[2606:4700::1111]/app.json", "not the address"),
        ];
        for (url, why) in refused {
            let said = ClientIdUrl::parse(url).unwrap_err();
            assert!(said.contains(why), "{url}: {said}");
        }
        assert!(ClientIdUrl::parse(&format!("https://client.example.com/{}", "a".repeat(MAX_URL))).is_err());
    }

    #[test]
    fn numeric_hosts_are_read_as_the_address_they_mean() {
        let cases = [
            ("127.1", "the address 127.0.0.1 is loopback"),
            ("2130706433", "the address 127.0.0.1 is loopback"),
            ("017700000001", "the address 127.0.0.1 is loopback"),
            ("0x7f.1", "the address 127.0.0.1 is loopback"),
            ("0X7F.0.0.1", "the address 127.0.0.1 is loopback"),
            ("0x7f000001", "the address 127.0.0.1 is loopback"),
            ("0177.0.0.1", "the address 127.0.0.1 is loopback"),
            ("127.0.0.1.", "the address 127.0.0.1 is loopback"),
            ("0", "the address 0.0.0.0 is unspecified (\"this network\")"),
            ("10.0.0.5", "the address 10.0.0.5 is private"),
            ("169.254.169.254", "the address 169.254.169.254 is link-local"),
            ("0xa9.0xfe.0xa9.0xfe", "the address 169.254.169.254 is link-local"),
            ("8.8.8.8", "a client id must name its host, not the address 8.8.8.8"),
            ("1.2.3.4.5", "`1.2.3.4.5` is neither a host name nor an address"),
            ("256.1.1.1", "`256.1.1.1` is neither a host name nor an address"),
            ("4294967296", "`4294967296` is neither a host name nor an address"),
            ("08.1.1.1", "`08.1.1.1` is neither a host name nor an address"),
            ("client.example.123", "`client.example.123` is neither a host name nor an address"),
        ];
        for (host, said) in cases {
            let got = ClientIdUrl::parse(&format!("https://{host}/app.json")).unwrap_err();
            assert_eq!(got, said, "{host}");
        }
        assert!(ClientIdUrl::parse("https://0x7f.example.com/app.json").is_ok(), "a name may start with a number");
        assert!(ClientIdUrl::parse("https://123.example.com/app.json").is_ok());
    }
}
