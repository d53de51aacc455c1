//! HTTPS against the stack's test CA, loaded the way a person configures bb (BB_CA_FILE, BB_CLIENT_CERT,
//! BB_CLIENT_KEY through `config::load`), and the errors that say which setting is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use bb::config::{self, BitbucketConfig, ConnectionFlags};
use bb_bitbucket::Client;
use bb_core::FetchErrorKind;
use bb_drive::{Bitbucket, Cancel};
use bb_stack::tls::{StackTls, test_cert_path};
use bb_stack::{RunningStack, Stack, StackConfig};
use io_support::*;
use std::collections::BTreeMap;

fn tls_stack(tls: StackTls) -> RunningStack {
    Stack::start(StackConfig { tls: Some(tls), ..Default::default() }).unwrap()
}

fn path(name: &str) -> String {
    test_cert_path(name).display().to_string()
}

/// bb's configuration for `stack` from an environment with these extra variables.
fn configured(stack: &RunningStack, vars: &[(&str, String)]) -> BitbucketConfig {
    let mut env: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    env.insert("BITBUCKET_URL".into(), stack.base_url.clone());
    env.insert("BITBUCKET_TOKEN".into(), stack.token.clone());
    env.insert("BB_RETRY_COUNT".into(), "0".into());
    config::load(&ConnectionFlags::default(), &|k| env.get(k).cloned()).unwrap().unwrap()
}

#[test]
fn https_works_with_the_stack_s_ca_in_bb_ca_file() {
    let stack = tls_stack(StackTls::test());
    assert!(stack.base_url.starts_with("https://127.0.0.1:"));
    let bb = Client::new(configured(&stack, &[("BB_CA_FILE", path("ca.pem"))])).unwrap();
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
}

#[test]
fn without_the_ca_the_server_is_not_trusted_and_the_error_says_what_to_set() {
    let stack = tls_stack(StackTls::test());
    let bb = Client::new(configured(&stack, &[])).unwrap();
    let e = failure(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::Tls, "{e:?}");
    assert!(e.detail.contains("does not trust") && e.detail.contains("BB_CA_FILE"), "{}", e.detail);
}

#[test]
fn a_required_client_certificate_is_presented_and_accepted() {
    let stack = tls_stack(StackTls::test_requiring_client_cert());
    let bb = Client::new(configured(
        &stack,
        &[
            ("BB_CA_FILE", path("ca.pem")),
            ("BB_CLIENT_CERT", path("client.pem")),
            ("BB_CLIENT_KEY", path("client.key")),
        ],
    ))
    .unwrap();
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
    assert_eq!(
        response(bb.fetch(get(PR1), None, &Cancel::new())).status,
        200,
        "a second request (pooled connection) works too"
    );
}

#[test]
fn without_a_client_certificate_the_error_says_one_is_required() {
    let stack = tls_stack(StackTls::test_requiring_client_cert());
    let bb = Client::new(configured(&stack, &[("BB_CA_FILE", path("ca.pem"))])).unwrap();
    let e = failure(bb.fetch(get(PR1), None, &Cancel::new()));
    assert!(matches!(e.kind, FetchErrorKind::Tls | FetchErrorKind::Unreachable), "{e:?}");
    assert!(e.detail.contains("client certificate"), "{}", e.detail);
}

#[test]
fn a_client_certificate_the_server_does_not_trust_is_refused() {
    // The server certificate is signed by the test CA but is no client certificate (its usage is serverAuth).
    let stack = tls_stack(StackTls::test_requiring_client_cert());
    let bb = Client::new(configured(
        &stack,
        &[
            ("BB_CA_FILE", path("ca.pem")),
            ("BB_CLIENT_CERT", path("server.pem")),
            ("BB_CLIENT_KEY", path("server.key")),
        ],
    ))
    .unwrap();
    let e = failure(bb.fetch(get(PR1), None, &Cancel::new()));
    assert!(matches!(e.kind, FetchErrorKind::Tls | FetchErrorKind::Unreachable), "{e:?}");
    assert!(e.detail.contains("client certificate"), "{}", e.detail);
}
