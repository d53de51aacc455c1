//! Configuration from flags and an injected environment: precedence, normalisation, redaction, each refusal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use bb_bitbucket::options::DEFAULT_TIMEOUT;
use bb_core::retry::RetryPolicy;
use std::collections::BTreeMap;

const CERTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/stack/certs");

fn cert(name: &str) -> String {
    format!("{CERTS}/{name}")
}

fn load_with(flags: &ConnectionFlags, vars: &[(&str, &str)]) -> Result<Option<BitbucketConfig>, String> {
    let env: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load(flags, &|k| env.get(k).cloned())
}

fn ok(vars: &[(&str, &str)]) -> BitbucketConfig {
    load_with(&ConnectionFlags::default(), vars).unwrap().expect("configured")
}

fn err(vars: &[(&str, &str)]) -> String {
    load_with(&ConnectionFlags::default(), vars).unwrap_err()
}

#[test]
fn without_a_url_bitbucket_is_simply_not_configured() {
    assert!(load_with(&ConnectionFlags::default(), &[]).unwrap().is_none());
    assert!(
        load_with(&ConnectionFlags::default(), &[("BITBUCKET_TOKEN", "t"), ("BITBUCKET_URL", " ")]).unwrap().is_none()
    );
}

#[test]
fn flags_win_over_the_environment() {
    let flags = ConnectionFlags {
        host: Some("https://flag.example/".into()),
        token: Some(Secret::new("flag-token")),
        rate_limit: None,
        ..Default::default()
    };
    let c = load_with(
        &flags,
        &[("BITBUCKET_URL", "https://env.example"), ("BITBUCKET_TOKEN", "env-token"), ("BITBUCKET_USER", "u")],
    )
    .unwrap()
    .unwrap();
    assert_eq!(c.base_url, "https://flag.example");
    assert_eq!(c.auth, Auth::Token(Secret::new("flag-token")));
    let only_host =
        ConnectionFlags { host: Some("http://h".into()), token: None, rate_limit: None, ..Default::default() };
    let c = load_with(&only_host, &[("BITBUCKET_TOKEN", "env-token")]).unwrap().unwrap();
    assert_eq!(c.auth, Auth::Token(Secret::new("env-token")));
}

#[test]
fn a_context_path_is_kept_and_trailing_slashes_are_dropped() {
    assert_eq!(ok(&[("BITBUCKET_URL", "https://host.example/bitbucket/")]).base_url, "https://host.example/bitbucket");
    assert_eq!(ok(&[("BITBUCKET_URL", "HTTPS://host.example:8443//")]).base_url, "https://host.example:8443");
}

#[test]
fn a_token_wins_over_basic_and_basic_needs_both_halves() {
    let c = ok(&[
        ("BITBUCKET_URL", "https://h"),
        ("BITBUCKET_TOKEN", "t"),
        ("BITBUCKET_USER", "u"),
        ("BITBUCKET_PASSWORD", "p"),
    ]);
    assert_eq!(c.auth, Auth::Token(Secret::new("t")));
    let c = ok(&[("BITBUCKET_URL", "https://h"), ("BITBUCKET_USER", "u"), ("BITBUCKET_PASSWORD", "p")]);
    assert_eq!(c.auth, Auth::Basic { user: "u".into(), password: Secret::new("p") });
    assert!(err(&[("BITBUCKET_URL", "https://h"), ("BITBUCKET_USER", "u")]).contains("BITBUCKET_PASSWORD is not"));
    assert!(err(&[("BITBUCKET_URL", "https://h"), ("BITBUCKET_PASSWORD", "p")]).contains("BITBUCKET_USER is not"));
    assert_eq!(ok(&[("BITBUCKET_URL", "https://h")]).auth, Auth::Anonymous);
}

#[test]
fn no_secret_appears_in_debug_output() {
    let c = ok(&[
        ("BITBUCKET_URL", "https://h"),
        ("BITBUCKET_USER", "alice"),
        ("BITBUCKET_PASSWORD", "hunter2-password"),
        ("HTTPS_PROXY", "http://puser:proxy-secret@proxy:3128"),
        ("BB_CLIENT_CERT", &cert("client.pem")),
        ("BB_CLIENT_KEY", &cert("client.key")),
    ]);
    let shown = format!("{c:?}");
    assert!(!shown.contains("hunter2-password"), "{shown}");
    assert!(!shown.contains("proxy-secret"), "{shown}");
    assert!(shown.contains("alice") && shown.contains("<redacted>"), "{shown}");
    let flags = ConnectionFlags {
        host: None,
        token: Some(Secret::new("flag-token-value")),
        rate_limit: None,
        ..Default::default()
    };
    assert!(!format!("{flags:?}").contains("flag-token-value"));
    let t = ok(&[("BITBUCKET_URL", "https://h"), ("BITBUCKET_TOKEN", "tok-123456")]);
    assert!(!format!("{t:?}").contains("tok-123456"));
}

#[test]
fn a_url_that_is_not_http_is_refused_with_what_to_fix() {
    let e = err(&[("BITBUCKET_URL", "ftp://h")]);
    assert!(e.contains("only http and https"), "{e}");
    let e = err(&[("BITBUCKET_URL", "bitbucket.example.com")]);
    assert!(e.contains("BITBUCKET_URL") && e.contains("no http:// or https:// scheme"), "{e}");
    let e = err(&[("BITBUCKET_URL", "https://user:pw-secret@h")]);
    assert!(e.contains("must not hold credentials") && !e.contains("pw-secret"), "{e}");
    assert!(err(&[("BITBUCKET_URL", "https://h/x?y=1")]).contains("query"));
    assert!(err(&[("BITBUCKET_URL", "https:///bitbucket")]).contains("not a valid URL"));
    assert!(err(&[("BITBUCKET_URL", "https://")]).contains("BITBUCKET_URL"));
    let flags = ConnectionFlags { host: Some("nope".into()), token: None, rate_limit: None, ..Default::default() };
    assert!(load_with(&flags, &[]).unwrap_err().starts_with("--host"));
}

#[test]
fn the_ca_file_is_read_and_checked_at_start() {
    let c = ok(&[("BITBUCKET_URL", "https://h"), ("BB_CA_FILE", &cert("ca.pem"))]);
    assert_eq!(c.extra_roots.len(), 1);
    let e = err(&[("BITBUCKET_URL", "https://h"), ("BB_CA_FILE", "/no/such/ca.pem")]);
    assert!(e.starts_with("BB_CA_FILE /no/such/ca.pem: cannot be read"), "{e}");
    let e = err(&[("BITBUCKET_URL", "https://h"), ("BB_CA_FILE", &cert("ca.key"))]);
    assert!(e.contains("holds no certificate"), "{e}");
    let e = err(&[("BITBUCKET_URL", "https://h"), ("BB_CA_FILE", &cert("make-certs.sh"))]);
    assert!(e.contains("BB_CA_FILE") && e.contains("no certificate"), "{e}");
}

#[test]
fn the_client_certificate_and_key_must_both_be_given_and_match() {
    fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        [&[("BITBUCKET_URL", "https://h")][..], extra].concat()
    }
    let c = ok(&with(&[("BB_CLIENT_CERT", &cert("client.pem")), ("BB_CLIENT_KEY", &cert("client.key"))]));
    assert_eq!(c.client_identity.unwrap().chain.len(), 1);
    let e = err(&with(&[("BB_CLIENT_CERT", &cert("client.pem")), ("BB_CLIENT_KEY", &cert("server.key"))]));
    assert!(e.contains("is not the private key of the certificate"), "{e}");
    let e = err(&with(&[("BB_CLIENT_CERT", &cert("client.pem"))]));
    assert!(e.contains("BB_CLIENT_KEY is not"), "{e}");
    let e = err(&with(&[("BB_CLIENT_KEY", &cert("client.key"))]));
    assert!(e.contains("BB_CLIENT_CERT is not"), "{e}");
    let e = err(&with(&[("BB_CLIENT_CERT", &cert("client.pem")), ("BB_CLIENT_KEY", &cert("client.pem"))]));
    assert!(e.contains("no usable private key"), "{e}");
    let e = err(&with(&[("BB_CLIENT_CERT", "/missing.pem"), ("BB_CLIENT_KEY", &cert("client.key"))]));
    assert!(e.contains("BB_CLIENT_CERT /missing.pem: cannot be read"), "{e}");
}

#[test]
fn timeouts_take_units_or_plain_seconds() {
    let t = |v: &str| ok(&[("BITBUCKET_URL", "https://h"), ("BB_REQUEST_TIMEOUT", v)]).timeout;
    assert_eq!(t("30s"), Duration::from_secs(30));
    assert_eq!(t("500ms"), Duration::from_millis(500));
    assert_eq!(t("2m"), Duration::from_secs(120));
    assert_eq!(t("7"), Duration::from_secs(7));
    assert_eq!(t("1.5s"), Duration::from_millis(1500));
    assert_eq!(ok(&[("BITBUCKET_URL", "https://h")]).timeout, DEFAULT_TIMEOUT);
    for bad in ["0", "fast", "-3s", "10h", "50ms", "2h", "1e300", "-1e-300", "NaN", "inf", "18446744073709551615"] {
        let e = err(&[("BITBUCKET_URL", "https://h"), ("BB_REQUEST_TIMEOUT", bad)]);
        assert!(e.contains("BB_REQUEST_TIMEOUT") && e.contains("not a duration from 100ms to 1h"), "{bad}: {e}");
    }
}

#[test]
fn the_retry_count_is_bounded() {
    assert_eq!(ok(&[("BITBUCKET_URL", "https://h"), ("BB_RETRY_COUNT", "0")]).retry.retries, 0);
    assert_eq!(ok(&[("BITBUCKET_URL", "https://h")]).retry.retries, RetryPolicy::default().retries);
    for bad in ["11", "-1", "many", "NaN", "inf", "1e300", "1e-300", "18446744073709551615", "18446744073709551616"] {
        let e = err(&[("BITBUCKET_URL", "https://h"), ("BB_RETRY_COUNT", bad)]);
        assert!(e.contains("BB_RETRY_COUNT") && e.contains("from 0 to 10"), "{bad}: {e}");
    }
}

#[test]
fn the_proxy_follows_the_scheme_and_no_proxy_exempts_the_host() {
    let p = |vars: &[(&str, &str)]| ok(vars).proxy.map(|p| p.source);
    assert_eq!(
        p(&[("BITBUCKET_URL", "https://bb.corp.example"), ("https_proxy", "http://proxy:3128")]),
        Some("https_proxy")
    );
    assert_eq!(
        p(&[("BITBUCKET_URL", "https://bb.corp.example"), ("HTTPS_PROXY", "proxy:3128"), ("https_proxy", "x:1")]),
        Some("HTTPS_PROXY")
    );
    assert_eq!(p(&[("BITBUCKET_URL", "http://bb.corp.example"), ("HTTPS_PROXY", "http://proxy:3128")]), None);
    assert_eq!(
        p(&[("BITBUCKET_URL", "http://bb.corp.example"), ("HTTP_PROXY", "http://proxy:3128")]),
        Some("HTTP_PROXY")
    );
    for no in ["corp.example", ".corp.example", "*.corp.example", "other, bb.corp.example:443", "*"] {
        let vars =
            [("BITBUCKET_URL", "https://bb.corp.example"), ("HTTPS_PROXY", "http://proxy:3128"), ("NO_PROXY", no)];
        assert_eq!(p(&vars), None, "{no}");
    }
    let vars = [
        ("BITBUCKET_URL", "https://bb.corp.example"),
        ("HTTPS_PROXY", "http://proxy:3128"),
        ("no_proxy", "example.org,notcorp.example"),
    ];
    assert!(p(&vars).is_some());
    let e = err(&[("BITBUCKET_URL", "https://h"), ("HTTPS_PROXY", "ftp://u:proxy-pw@proxy")]);
    assert!(e.contains("HTTPS_PROXY") && e.contains("not a proxy URL") && !e.contains("proxy-pw"), "{e}");
}

#[test]
fn userinfo_is_redacted_from_urls() {
    assert_eq!(redact_userinfo("http://u:p@proxy:1/x@y"), "http://<redacted>@proxy:1/x@y");
    assert_eq!(redact_userinfo("u:p@proxy"), "<redacted>@proxy");
    assert_eq!(redact_userinfo("http://proxy"), "http://proxy");
}

#[test]
fn the_rate_limit_is_bitbuckets_default_unless_set_and_off_spends_nothing() {
    let env = |k: &str| (k == "BITBUCKET_URL").then(|| "https://h".to_owned());
    let with = |r: Option<&str>| {
        let flags = ConnectionFlags { rate_limit: r.map(str::to_owned), ..ConnectionFlags::default() };
        load(&flags, &env)
    };
    assert_eq!(with(None).unwrap().unwrap().rate_limit, Some(RateLimit::BITBUCKET_DEFAULT));
    assert_eq!(
        with(Some("120/2.5")).unwrap().unwrap().rate_limit,
        Some(RateLimit { capacity: 120.0, refill_per_s: 2.5 })
    );
    assert_eq!(with(Some("off")).unwrap().unwrap().rate_limit, None);
    assert!(with(Some("60")).unwrap_err().contains("SIZE/RATE"));
}

#[test]
fn the_setting_reads_size_slash_rate() {
    assert_eq!(RateLimit::parse("60/5"), Ok(RateLimit::BITBUCKET_DEFAULT));
    assert_eq!(RateLimit::parse(" 120 / 2.5 "), Ok(RateLimit { capacity: 120.0, refill_per_s: 2.5 }));
    assert_eq!(RateLimit::parse("1/0.001"), Ok(RateLimit { capacity: 1.0, refill_per_s: 0.001 }));
    assert_eq!(RateLimit::parse("1000000/10000"), Ok(RateLimit { capacity: 1e6, refill_per_s: 1e4 }));
    for bad in ["60", "/5", "a/b", "", "/", "60/", "60/5/5"] {
        assert!(RateLimit::parse(bad).unwrap_err().contains("is not SIZE/RATE"), "{bad}");
    }
}

#[test]
fn a_rate_outside_its_sane_range_is_refused_with_the_range() {
    // `2/1e-300` was accepted, and bb aborted on its third request (a wait of 1e300 s).
    for bad in
        ["2/1e-300", "60/0", "60/-1", "60/nan", "60/NaN", "60/inf", "60/-inf", "60/1e300", "60/0.0009", "60/10001"]
    {
        let e = RateLimit::parse(bad).unwrap_err();
        assert!(e.contains("--rate-limit") && e.contains("from 0.001 to 10,000 requests a second"), "{bad}: {e}");
    }
    for bad in ["0/5", "-1/5", "nan/5", "inf/5", "0.5/1", "1.5/1", "1000001/5", "1e300/5", "18446744073709551615/5"] {
        let e = RateLimit::parse(bad).unwrap_err();
        assert!(e.contains("--rate-limit") && e.contains("from 1 to 1,000,000"), "{bad}: {e}");
    }
}

#[test]
fn a_rate_store_is_a_redis_url_checked_at_start_and_its_password_a_secret() {
    let flags = |url: &str| ConnectionFlags {
        host: Some("https://h".into()),
        rate_store: Some(Secret::new(url)),
        replicas: Some(3),
        ..Default::default()
    };
    let env = |name: &str| (name == "BB_RATE_STORE_PASSWORD").then(|| "env-pw".to_owned());
    let c = load(&flags("redis://:url-pw@127.0.0.1:6379/1"), &env).unwrap().unwrap();
    assert_eq!(c.replicas, 3);
    let store = c.rate_store.as_ref().unwrap();
    assert_eq!(store.password.as_ref().map(Secret::expose), Some("env-pw"));
    let debug = format!("{c:?}");
    assert!(!debug.contains("url-pw") && !debug.contains("env-pw"), "{debug}");
    let scrubbed = bb_bitbucket::secrets(&c).scrub("a url-pw b env-pw").into_owned();
    assert!(!scrubbed.contains("url-pw") && !scrubbed.contains("env-pw"), "{scrubbed}");
    let e = load(&flags("valkey.internal:6379"), &env).unwrap_err();
    assert!(e.starts_with("--rate-store `valkey.internal:6379` is not a Valkey or Redis URL"), "{e}");
    let unconfigured = ConnectionFlags { host: None, ..flags("valkey.internal:6379") };
    assert!(load(&unconfigured, &env).is_err(), "checked whether Bitbucket is configured or not");
    assert_eq!(
        load(&ConnectionFlags { host: Some("https://h".into()), ..Default::default() }, &env)
            .unwrap()
            .unwrap()
            .replicas,
        1
    );
}
