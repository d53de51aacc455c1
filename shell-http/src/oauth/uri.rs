//! Redirect URIs and bb's public URL, read as RFC 3986 reads a URI: which a client may register,
//! whether the one it authorizes with is one it registered, and what the person is told of it.
//!
//! - The authority is `[userinfo@]host[:port]` (RFC 3986 §3.2): a URI with userinfo is refused, so
//!   `http://127.0.0.1:1@evil.example/cb` is a URI of `evil.example`, and is refused for carrying
//!   userinfo (docs/reference/oauth.md "Redirect URI authority and userinfo").
//! - Allowed: `https` with a host; `http` only on loopback (`127.0.0.1`, `[::1]`, `localhost`);
//!   a private-use scheme named by a reverse domain name (`com.example.app:/cb`), or one of the
//!   editors' own schemes real MCP clients register (docs/reference/oauth.md "Private-use URI
//!   scheme redirects"). Never a fragment, whitespace or a control character.
//! - A loopback IP literal's port is the client's to choose at each login (RFC 8252 §7.3): it is
//!   ignored when the URI is matched, and only then; `localhost` and every other host match exactly
//!   (docs/reference/oauth.md "Loopback redirect URIs").

/// The longest redirect URI a client may register (a record's bytes are bounded, not only its count).
pub(crate) const MAX_REDIRECT_URI: usize = 512;

/// Private-use schemes without a dot that MCP clients in wide use register ([assumed]: the editors'
/// own documentation names them; RFC 8252 §7.1 asks for reverse domain names).
const EDITOR_SCHEMES: [&str; 3] = ["cursor", "vscode", "vscode-insiders"];

/// A URI's parts (RFC 3986 §3), borrowed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts<'a> {
    /// The scheme, lower-cased by the caller's comparison (kept as written here).
    pub(crate) scheme: &'a str,
    /// The authority, when the URI has `//`.
    pub(crate) authority: Option<Authority<'a>>,
    /// The path, query included (`/cb?x=1`).
    pub(crate) rest: &'a str,
    /// Whether there is a fragment.
    pub(crate) fragment: bool,
}

/// An authority (RFC 3986 §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority<'a> {
    /// Whether it holds `userinfo@`.
    pub(crate) userinfo: bool,
    /// The host: a registered name, an IPv4 address, or an IP literal in brackets.
    pub(crate) host: &'a str,
    /// The port's digits, if given.
    pub(crate) port: Option<&'a str>,
}

/// Reads `uri`; `None` when it is not a URI with a scheme.
pub(crate) fn parse(uri: &str) -> Option<Parts<'_>> {
    let (scheme, after) = uri.split_once(':')?;
    let mut bytes = scheme.bytes();
    if !bytes.next()?.is_ascii_alphabetic() || !bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
        return None;
    }
    let (before_fragment, fragment) = match after.split_once('#') {
        Some((b, _)) => (b, true),
        None => (after, false),
    };
    let Some(hier) = before_fragment.strip_prefix("//") else {
        return Some(Parts { scheme, authority: None, rest: before_fragment, fragment });
    };
    let end = hier.find(['/', '?']).unwrap_or(hier.len());
    let (authority, rest) = hier.split_at(end);
    // The last `@` ends the userinfo (RFC 3986 §3.2.1: userinfo holds no `@`, a host holds none).
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((_, hp)) => (true, hp),
        None => (false, authority),
    };
    let (host, port) = if let Some(literal) = host_port.strip_prefix('[') {
        let close = literal.find(']')?;
        let host = &host_port[..close + 2];
        match &literal[close + 1..] {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':')?)),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if port.is_some_and(|p| !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 5) {
        return None;
    }
    Some(Parts { scheme, authority: Some(Authority { userinfo, host, port }), rest, fragment })
}

/// Whether `host` is a loopback IP literal (RFC 8252 §7.3): the only hosts whose port is ignored.
fn is_loopback_literal(host: &str) -> bool {
    host == "127.0.0.1" || host == "[::1]"
}

/// Whether `host` is loopback: an IP literal, or the name `localhost` (matched with its port).
pub(crate) fn is_loopback_host(host: &str) -> bool {
    is_loopback_literal(host) || host.eq_ignore_ascii_case("localhost")
}

/// Why a client may not register `uri` as a redirect URI; `None` when it may.
pub(crate) fn refused_redirect(uri: &str) -> Option<&'static str> {
    if uri.len() > MAX_REDIRECT_URI {
        return Some("it is longer than 512 bytes");
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("it holds whitespace or a control character");
    }
    // RFC 3986 §2: a URI holds only these characters. A browser reads a backslash as a slash, so
    // `https://evil.example\.claude.ai/cb` would be shown as one host and lead to another.
    if !uri.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b)) {
        return Some("it holds a character a URI may not hold");
    }
    let Some(p) = parse(uri) else { return Some("it is not an absolute URI") };
    if p.fragment {
        return Some("it has a fragment");
    }
    if p.authority.as_ref().is_some_and(|a| a.userinfo) {
        return Some("it names a user before its host (userinfo)");
    }
    let scheme = p.scheme.to_ascii_lowercase();
    match (scheme.as_str(), &p.authority) {
        (_, Some(a)) if a.host.contains('%') => Some("its host is percent-encoded"),
        ("https", Some(a)) if !a.host.is_empty() => None,
        ("https", _) => Some("it names no host"),
        ("http", Some(a)) if is_loopback_host(a.host) => None,
        ("http", _) => Some("http is allowed only on this computer (127.0.0.1, [::1] or localhost)"),
        (s, _) if s.contains('.') || EDITOR_SCHEMES.contains(&s) => {
            if p.rest.is_empty() && p.authority.is_none() {
                Some("it has nothing after its scheme")
            } else {
                None
            }
        }
        _ => Some("its scheme is not https, loopback http, or an app's own reverse-domain scheme"),
    }
}

/// Whether `requested` (from an authorization request) is `registered`: the same string, or, for a
/// loopback IP literal over http, the same but for the port (RFC 8252 §7.3).
pub(crate) fn redirect_matches(registered: &str, requested: &str) -> bool {
    if registered == requested {
        return true;
    }
    let (Some(a), Some(b)) = (parse(registered), parse(requested)) else { return false };
    match (&a.authority, &b.authority) {
        (Some(x), Some(y)) => {
            a.scheme.eq_ignore_ascii_case("http")
                && b.scheme.eq_ignore_ascii_case("http")
                && !a.fragment
                && !b.fragment
                && !x.userinfo
                && !y.userinfo
                && is_loopback_literal(x.host)
                && x.host == y.host
                && a.rest == b.rest
        }
        _ => false,
    }
}

/// How the person is told where a redirect URI sends them: its host (and port) for a web or
/// loopback address, else its scheme (an app on their computer).
pub(crate) fn destination(uri: &str) -> String {
    match parse(uri) {
        Some(Parts { authority: Some(a), scheme, .. }) if scheme.eq_ignore_ascii_case("https") => match a.port {
            Some(port) => format!("{}:{port}", a.host),
            None => a.host.to_owned(),
        },
        Some(Parts { authority: Some(a), scheme, .. }) if scheme.eq_ignore_ascii_case("http") => match a.port {
            Some(port) => format!("this computer ({}, port {port})", a.host),
            None => format!("this computer ({})", a.host),
        },
        Some(p) => format!("the app that handles {}: links", p.scheme),
        None => "an unknown address".to_owned(),
    }
}

/// Checks bb's public URL (`--public-url`): `https`, or `http` on loopback; a host, no userinfo,
/// query or fragment; returned without a trailing slash.
pub(crate) fn check_public_url(url: &str) -> Result<String, String> {
    let url = url.trim().trim_end_matches('/');
    let plain = || format!("--public-url `{url}` must be a plain URL such as https://bb.example.com");
    let p = parse(url).ok_or_else(plain)?;
    let Some(a) = &p.authority else { return Err(plain()) };
    if a.userinfo || a.host.is_empty() || p.fragment || p.rest.contains('?') || url.contains(char::is_whitespace) {
        return Err(plain());
    }
    match p.scheme {
        "https" => Ok(url.to_owned()),
        "http" if is_loopback_host(a.host) => Ok(url.to_owned()),
        _ => Err(format!("--public-url `{url}` must be an https:// URL (http:// only for 127.0.0.1 or localhost)")),
    }
}

/// The origin of an absolute URL (`scheme://authority`), as a browser sends it in `Origin`.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let p = parse(url)?;
    let a = p.authority?;
    Some(match a.port {
        Some(port) => format!("{}://{}:{port}", p.scheme.to_ascii_lowercase(), a.host.to_ascii_lowercase()),
        None => format!("{}://{}", p.scheme.to_ascii_lowercase(), a.host.to_ascii_lowercase()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authority_with_userinfo_names_the_host_after_it() {
        let p = parse("http://127.0.0.1:1@evil.example/cb").unwrap_or_else(|| unreachable!());
        let a = p.authority.unwrap_or_else(|| unreachable!());
        assert!(a.userinfo);
        assert_eq!(a.host, "evil.example");
        assert_eq!(parse("http://[::1]:80/cb").and_then(|p| p.authority).map(|a| a.host), Some("[::1]"));
        assert_eq!(parse("http://h:x/cb"), None, "a port is digits");
    }

    #[test]
    fn a_loopback_lookalike_with_userinfo_is_refused() {
        for bad in [
            "http://127.0.0.1:1@evil.example/cb",
            "http://localhost:80@evil.example/cb",
            "https://user:pw@a.example/cb",
            "http://[::1]@evil.example/cb",
        ] {
            assert!(refused_redirect(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn only_https_loopback_http_and_an_apps_own_schemes_register() {
        for good in [
            "https://a.example/cb",
            "http://127.0.0.1/callback",
            "http://127.0.0.1:54321/callback",
            "http://[::1]:8080/cb",
            "http://localhost:33418/cb",
            "com.example.app:/oauth2redirect",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "vscode://vscode.github-authentication/did-authenticate",
        ] {
            assert_eq!(refused_redirect(good), None, "{good}");
        }
        for bad in [
            "vbscript:x",
            "blob:https://x/y",
            "javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "http://evil.example/cb",
            "http://127.0.0.2/cb",
            "https://a.example/cb#frag",
            "https:///cb",
            "nope",
            "myapp:/cb",
            "https://evil.example\\.claude.ai/cb",
            "https://evil%2eexample/cb",
            "https://claude.ai\u{2044}evil.example/cb",
            "https://a.example/cb?x=\"<script>",
        ] {
            assert!(refused_redirect(bad).is_some(), "{bad}");
        }
        assert!(refused_redirect(&format!("https://a.example/{}", "x".repeat(600))).is_some());
    }

    #[test]
    fn a_loopback_ip_literal_matches_on_any_port_and_nothing_else_does() {
        assert!(redirect_matches("http://127.0.0.1/callback", "http://127.0.0.1:54321/callback"));
        assert!(redirect_matches("http://127.0.0.1:1/callback", "http://127.0.0.1:2/callback"));
        assert!(redirect_matches("http://[::1]/cb", "http://[::1]:9/cb"));
        assert!(!redirect_matches("http://127.0.0.1/callback", "http://127.0.0.1:5/other"), "the path is exact");
        assert!(!redirect_matches("http://localhost/cb", "http://localhost:5/cb"), "localhost matches exactly");
        assert!(!redirect_matches("https://a.example/cb", "https://a.example:444/cb"));
        assert!(!redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:1@evil.example/cb"));
        assert!(!redirect_matches("http://127.0.0.1/cb", "https://127.0.0.1:5/cb"), "the scheme is exact");
    }

    #[test]
    fn the_public_url_is_https_or_loopback_http_and_plain() {
        assert_eq!(check_public_url("https://bb.example.com/").as_deref(), Ok("https://bb.example.com"));
        assert_eq!(check_public_url("http://127.0.0.1:8080").as_deref(), Ok("http://127.0.0.1:8080"));
        assert_eq!(check_public_url("http://localhost:8080/bb").as_deref(), Ok("http://localhost:8080/bb"));
        for bad in [
            "http://bb.example.com",
            "https://bb.example.com/?x",
            "https://bb.example.com/#x",
            "http://127.0.0.1:1@evil.example",
            "https://u@bb.example.com",
            "ftp://bb.example.com",
        ] {
            assert!(check_public_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_person_is_told_where_a_redirect_sends_them() {
        assert_eq!(destination("https://evil.example/cb"), "evil.example");
        assert_eq!(destination("https://good.example:8443/cb"), "good.example:8443");
        assert_eq!(destination("http://127.0.0.1:5/cb"), "this computer (127.0.0.1, port 5)");
        assert_eq!(destination("cursor://x/cb"), "the app that handles cursor: links");
        assert_eq!(origin_of("https://BB.example.com/x").as_deref(), Some("https://bb.example.com"));
    }
}
