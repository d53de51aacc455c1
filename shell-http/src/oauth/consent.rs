//! The person's consent to a client, asked by bb before it sends them to Bitbucket
//! (docs/reference/oauth.md "Confused deputy and per-client consent").
//!
//! bb reaches Bitbucket with one client id, so Bitbucket's own consent page names only bb: anyone
//! may register a client with their own redirect URI and send a person bb's authorize link. bb
//! therefore asks the person itself, naming the client (as untrusted text) and, prominently, where
//! the login will send them back to. A consent is remembered in the browser: a cookie per client
//! and redirect URI, bound to the Bitbucket user who then logged in and sealed with bb's key, so it
//! is never taken for a client first seen, another redirect URI, or another person.
//!
//! The page holds no script and no markup from anyone else: every text is escaped, it may not be
//! framed, and its form carries a token bound to a cookie of the browser that asked (the same
//! browser must come back from Bitbucket too).

use ring::hmac;

use super::pkce;

/// The cookie that names the browser a login was begun in (random; bb keeps only its hash).
pub(crate) const BROWSER_COOKIE: &str = "bb_browser";

/// How long a remembered consent lasts.
pub(crate) const CONSENT_TTL_S: u64 = 30 * 24 * 60 * 60;

/// The Content-Security-Policy of bb's pages: nothing loads, nothing runs, nothing frames them.
pub(crate) const PAGE_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/// The name of the cookie that remembers a consent to `client_id` with `redirect_uri`.
pub(crate) fn cookie_name(client_id: &str, redirect_uri: &str) -> String {
    let digest = pkce::key_of(&format!("{client_id}\n{redirect_uri}"));
    format!("bb_consent_{}", &digest[..16])
}

fn tag(key: &[u8; 32], parts: &[&str]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    let mut ctx = hmac::Context::with_key(&key);
    for p in parts {
        ctx.update(p.as_bytes());
        ctx.update(b"\n");
    }
    pkce::base64url(ctx.sign().as_ref())
}

/// The value of a consent cookie: `user` consented to `client_id` with `redirect_uri` until `until_s`.
pub(crate) fn seal(key: &[u8; 32], client_id: &str, redirect_uri: &str, user: &str, until_s: u64) -> String {
    let until = until_s.to_string();
    let mac = tag(key, &["consent", client_id, redirect_uri, user, &until]);
    format!("{}.{until}.{mac}", pkce::base64url(user.as_bytes()))
}

/// The user a consent cookie's `value` names, if bb sealed it for `client_id` and `redirect_uri`
/// and it has not run out at `now_s`.
pub(crate) fn open(key: &[u8; 32], value: &str, client_id: &str, redirect_uri: &str, now_s: u64) -> Option<String> {
    let mut parts = value.splitn(3, '.');
    let (user, until, mac) = (parts.next()?, parts.next()?, parts.next()?);
    let user = String::from_utf8(decode_base64url(user)?).ok()?;
    let until_s: u64 = until.parse().ok()?;
    let expected = tag(key, &["consent", client_id, redirect_uri, &user, until]);
    (crate::secret::same_secret(mac.as_bytes(), expected.as_bytes()) && now_s < until_s).then_some(user)
}

/// The token the consent form carries for the login `login` begun in the browser `browser`.
pub(crate) fn form_token(key: &[u8; 32], login: &str, browser: &str) -> String {
    tag(key, &["form", login, browser])
}

/// The bytes of base64url text (RFC 4648 §5), read as the standard alphabet it maps onto.
fn decode_base64url(s: &str) -> Option<Vec<u8>> {
    if s.contains(['+', '/', '=']) {
        return None;
    }
    bb_core::base64_decode(&s.replace('-', "+").replace('_', "/"))
}

/// The cookies a request carries, by name (the first of a name wins), at most 64.
pub(crate) fn cookies(header_values: &[&str]) -> Vec<(String, String)> {
    header_values
        .iter()
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .take(64)
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// Where bb's login cookies are sent: the login's paths under bb's public URL (`/oauth`, or
/// `/bb/oauth` for `https://host/bb`), and `Secure` when that URL is https.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    path: String,
    secure: bool,
}

impl Scope {
    /// The scope of the login's cookies for bb's public URL.
    pub(crate) fn of(public_url: &str) -> Scope {
        let base = super::uri::parse(public_url).map(|p| p.rest.trim_end_matches('/').to_owned()).unwrap_or_default();
        Scope { path: format!("{base}/oauth"), secure: public_url.starts_with("https://") }
    }

    /// A `Set-Cookie` value: HttpOnly, sent on top-level navigations from other sites (Bitbucket
    /// sending the person back) but not on their forms (`SameSite=Lax`). `max_age_s` 0 removes it.
    pub(crate) fn set_cookie(&self, name: &str, value: &str, max_age_s: u64) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!("{name}={value}; Path={}; Max-Age={max_age_s}; HttpOnly; SameSite=Lax{secure}", self.path)
    }
}

/// What the consent page shows: all of it the client's word, except where bb says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ask {
    /// The client's name as it registered it (untrusted), or `None`.
    pub(crate) client_name: Option<String>,
    /// The client id (for a metadata document, its URL).
    pub(crate) client_id: String,
    /// The redirect URI the login will end at.
    pub(crate) redirect_uri: String,
    /// Where that sends the person (a host, this computer, an app).
    pub(crate) destination: String,
    /// What bb will be able to do in Bitbucket (from the scope it asks for).
    pub(crate) access: &'static str,
    /// The login this consent is for (bb's state towards Bitbucket).
    pub(crate) login: String,
    /// The form's token.
    pub(crate) token: String,
}

/// Escapes text for HTML: the page never holds another party's markup.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control and direction-changing characters are shown, never obeyed.
            c if c.is_control()
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("[U+{:04X}]", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#172b4d}\
main{max-width:34rem;margin:3rem auto;background:#fff;border-radius:6px;padding:1.5rem 2rem;box-shadow:0 1px 3px #0003}\
h1{font-size:1.25rem;margin:0 0 1rem}.to{font-size:1.15rem;font-weight:700;word-break:break-all;background:#fffae6;\
padding:.5rem .75rem;border-radius:4px}.small{color:#5e6c84;font-size:.85rem;word-break:break-all}\
button{font:inherit;padding:.45rem 1.1rem;border-radius:4px;border:1px solid #c1c7d0;background:#fff;margin-right:.5rem;cursor:pointer}\
button.allow{background:#0052cc;border-color:#0052cc;color:#fff}\
@media (prefers-color-scheme:dark){body{background:#1d2125;color:#c7d1db}main{background:#22272b}\
.to{background:#533f04;color:#f8e6a0}.small{color:#9fadbc}button{background:#22272b;color:#c7d1db;border-color:#454f59}\
button.allow{background:#579dff;border-color:#579dff;color:#1d2125}}";

/// The consent page: the client named as it named itself, the destination prominent, Allow and Deny.
pub(crate) fn page(ask: &Ask) -> String {
    let name = match &ask.client_name {
        Some(n) if !n.trim().is_empty() => format!("“{}”", escape(n)),
        _ => "An application without a name".to_owned(),
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">\
<title>Allow access to Bitbucket through bb?</title><style>{STYLE}</style></head><body><main>\
<h1>Allow {name} to use Bitbucket as you?</h1>\
<p>An application that calls itself {name} asks to {access} through bb, as you. \
bb has not checked that name: the application chose it.</p>\
<p>After you log in to Bitbucket, you will be sent to:</p><p class=\"to\">{destination}</p>\
<p class=\"small\">Redirect address: {redirect}<br>Client: {client}</p>\
<p>Allow it only if you started this login from your own AI client just now and you know that address.</p>\
<form method=\"post\" action=\"consent\">\
<input type=\"hidden\" name=\"login\" value=\"{login}\"><input type=\"hidden\" name=\"token\" value=\"{token}\">\
<button class=\"allow\" name=\"decision\" value=\"allow\" type=\"submit\">Allow</button>\
<button name=\"decision\" value=\"deny\" type=\"submit\">Deny</button></form></main></body></html>",
        access = ask.access,
        destination = escape(&ask.destination),
        redirect = escape(&ask.redirect_uri),
        client = escape(&ask.client_id),
        login = escape(&ask.login),
        token = escape(&ask.token),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];

    #[test]
    fn a_consent_cookie_opens_only_for_its_client_redirect_and_time() {
        let v = seal(&KEY, "c1", "http://127.0.0.1/cb", "carol", 1_000);
        assert_eq!(open(&KEY, &v, "c1", "http://127.0.0.1/cb", 999).as_deref(), Some("carol"));
        assert_eq!(open(&KEY, &v, "c2", "http://127.0.0.1/cb", 999), None, "another client");
        assert_eq!(open(&KEY, &v, "c1", "https://evil.example/cb", 999), None, "another redirect");
        assert_eq!(open(&KEY, &v, "c1", "http://127.0.0.1/cb", 1_000), None, "run out");
        assert_eq!(open(&[8; 32], &v, "c1", "http://127.0.0.1/cb", 999), None, "another key");
        let forged = v.replacen(&pkce::base64url(b"carol"), &pkce::base64url(b"dave"), 1);
        assert_eq!(open(&KEY, &forged, "c1", "http://127.0.0.1/cb", 999), None, "another user");
        assert_eq!(open(&KEY, "x.y", "c1", "http://127.0.0.1/cb", 0), None);
    }

    #[test]
    fn the_page_shows_the_clients_words_as_text_and_the_destination() {
        let ask = Ask {
            client_name: Some("<script>alert(1)</script>\u{202e}gro.evil".into()),
            client_id: "id\"><x".into(),
            redirect_uri: "https://evil.example/cb?a=<b>".into(),
            destination: "evil.example".into(),
            access: "read your repositories",
            login: "L".into(),
            token: "T".into(),
        };
        let html = page(&ask);
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;[U+202E]gro.evil"));
        assert!(html.contains("<p class=\"to\">evil.example</p>"));
        assert!(html.contains("id&quot;&gt;&lt;x"));
        assert!(!html.contains("<b>"));
    }

    #[test]
    fn the_cookies_go_to_the_login_paths_under_the_public_url() {
        assert_eq!(
            Scope::of("https://host.example/bb").set_cookie("a", "1", 5),
            "a=1; Path=/bb/oauth; Max-Age=5; HttpOnly; SameSite=Lax; Secure"
        );
        assert_eq!(
            Scope::of("http://127.0.0.1:8080").set_cookie("a", "", 0),
            "a=; Path=/oauth; Max-Age=0; HttpOnly; SameSite=Lax"
        );
    }

    #[test]
    fn cookies_are_read_by_name() {
        let c = cookies(&["a=1; bb_browser=xyz", "b = 2"]);
        assert_eq!(c.iter().find(|(k, _)| k == "bb_browser").map(|(_, v)| v.as_str()), Some("xyz"));
        assert_eq!(c.iter().find(|(k, _)| k == "b").map(|(_, v)| v.as_str()), Some("2"));
        assert_eq!(decode_base64url(&pkce::base64url(b"carol@example")).as_deref(), Some(&b"carol@example"[..]));
    }
}
