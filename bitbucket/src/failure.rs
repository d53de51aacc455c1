//! What a failed Bitbucket request means, in words a person can act on: ureq's error → a [`FetchError`].
//!
//! The kind decides what the session does (and whether [`bb_core::retry`] tries again); `may_have_arrived` is
//! true whenever the request may have been sent, so a write is never repeated blindly. Details never hold the
//! token, the password or the Authorization header: they are built from error kinds and the server's address,
//! and [`super::scrub`] removes any secret that still slipped in.

use std::io;

use bb_core::{FetchError, FetchErrorKind};
use rustls::{AlertDescription, CertificateError};
use ureq::Timeout;

use crate::options::BitbucketConfig;

/// Where the request was when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Connecting, sending, or waiting for the status and headers.
    Exchange,
    /// Reading the body of an answer whose status had arrived.
    Body,
}

/// ureq's error inside an I/O error from reading a body (its reader wraps one), or the I/O error itself.
pub fn unwrap_io(error: io::Error) -> ureq::Error {
    if error.get_ref().is_some_and(|inner| inner.is::<ureq::Error>()) {
        if let Some(inner) = error.into_inner().and_then(|inner| inner.downcast::<ureq::Error>().ok()) {
            return *inner;
        }
        return ureq::Error::Io(io::Error::other("the answer broke off"));
    }
    ureq::Error::Io(error)
}

/// Classifies `error`, seen in `phase` of a request to `config`'s server.
pub fn classify(error: &ureq::Error, phase: Phase, config: &BitbucketConfig) -> FetchError {
    let server = &config.base_url;
    let in_body = phase == Phase::Body;
    let (kind, detail, may_have_arrived) = match error {
        ureq::Error::Timeout(t) => timeout(*t, config),
        ureq::Error::HostNotFound => (
            FetchErrorKind::Unreachable,
            format!("the host of {server} could not be resolved; check BITBUCKET_URL"),
            false,
        ),
        ureq::Error::ConnectionFailed => {
            (FetchErrorKind::Unreachable, format!("could not connect to {server}; is it running and reachable?"), false)
        }
        ureq::Error::BodyExceedsLimit(limit) => (
            FetchErrorKind::BrokenResponse,
            format!("the answer from {server} is larger than bb accepts ({} MiB)", limit / (1024 * 1024)),
            true,
        ),
        ureq::Error::Rustls(e) => tls(e, config),
        ureq::Error::Tls(m) => (FetchErrorKind::Tls, format!("TLS with {server} failed: {m}"), false),
        ureq::Error::Pem(_) => (
            FetchErrorKind::Tls,
            "a certificate or key could not be read; check BB_CA_FILE and BB_CLIENT_CERT".into(),
            false,
        ),
        ureq::Error::Io(e) => io_error(e, phase, config),
        ureq::Error::Protocol(e) if in_body => {
            (FetchErrorKind::BrokenResponse, format!("the answer from {server} broke off ({e})"), true)
        }
        ureq::Error::Protocol(e) => {
            (FetchErrorKind::BrokenResponse, format!("{server} sent an answer that is not valid HTTP ({e})"), true)
        }
        ureq::Error::LargeResponseHeader(..) => {
            (FetchErrorKind::BrokenResponse, format!("{server} sent oversized response headers"), true)
        }
        ureq::Error::BodyStalled => {
            (FetchErrorKind::Timeout, format!("the answer from {server} stopped arriving before it was complete"), true)
        }
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => {
            (FetchErrorKind::Unreachable, "bb could not form a valid request URL for this path".into(), false)
        }
        ureq::Error::InvalidProxyUrl | ureq::Error::ConnectProxyFailed(_) => (
            FetchErrorKind::Unreachable,
            format!("the proxy refused or failed the connection to {server}; check HTTPS_PROXY and NO_PROXY"),
            false,
        ),
        other if in_body => {
            (FetchErrorKind::BrokenResponse, format!("the answer from {server} broke off ({other})"), true)
        }
        other => (FetchErrorKind::Unreachable, format!("the request to {server} failed ({other})"), true),
    };
    FetchError { kind, detail, may_have_arrived }
}

fn timeout(t: Timeout, config: &BitbucketConfig) -> (FetchErrorKind, String, bool) {
    let server = &config.base_url;
    let limit = format_duration(config.timeout);
    match t {
        Timeout::Resolve | Timeout::Connect => (
            FetchErrorKind::Timeout,
            format!(
                "could not connect to {server} within {}",
                format_duration(config.timeout.min(super::MAX_CONNECT_TIMEOUT))
            ),
            false,
        ),
        _ => (FetchErrorKind::Timeout, format!("{server} did not answer within {limit} (BB_REQUEST_TIMEOUT)"), true),
    }
}

fn io_error(e: &io::Error, phase: Phase, config: &BitbucketConfig) -> (FetchErrorKind, String, bool) {
    let server = &config.base_url;
    if let Some(rustls_error) = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        return tls(rustls_error, config);
    }
    match (e.kind(), phase) {
        (io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock, _) => timeout(Timeout::RecvResponse, config),
        (io::ErrorKind::ConnectionRefused, _) => {
            (FetchErrorKind::Unreachable, format!("{server} refused the connection; is it running?"), false)
        }
        (_, Phase::Body) => (
            FetchErrorKind::BrokenResponse,
            format!("the answer from {server} broke off before it was complete ({})", e.kind()),
            true,
        ),
        (kind, Phase::Exchange) => (
            FetchErrorKind::Unreachable,
            format!("the connection to {server} failed before an answer arrived ({kind})"),
            true,
        ),
    }
}

fn tls(e: &rustls::Error, config: &BitbucketConfig) -> (FetchErrorKind, String, bool) {
    let server = &config.base_url;
    let detail = match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "the certificate of {server} is signed by a CA bb does not trust; set BB_CA_FILE to that CA's certificate (PEM)"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!("the certificate of {server} is not valid for that host name; check BITBUCKET_URL"),
        rustls::Error::InvalidCertificate(CertificateError::Expired | CertificateError::ExpiredContext { .. }) => {
            format!("the certificate of {server} has expired")
        }
        rustls::Error::InvalidCertificate(other) => format!("the certificate of {server} was rejected ({other:?})"),
        rustls::Error::AlertReceived(AlertDescription::CertificateRequired) => match &config.client_identity {
            Some(_) => format!("{server} requires a client certificate and did not accept bb's"),
            None => format!("{server} requires a client certificate; set BB_CLIENT_CERT and BB_CLIENT_KEY"),
        },
        rustls::Error::AlertReceived(
            a @ (AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::AccessDenied),
        ) => match &config.client_identity {
            Some(id) => format!(
                "{server} refused bb's client certificate ({a:?}); check BB_CLIENT_CERT {}",
                id.cert_file.display()
            ),
            None => {
                format!("{server} refused the connection ({a:?}); it may require a client certificate (BB_CLIENT_CERT)")
            }
        },
        other => format!("TLS with {server} failed ({other})"),
    };
    (FetchErrorKind::Tls, detail, false)
}

fn format_duration(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 { format!("{}s", d.as_secs()) } else { format!("{}ms", d.as_millis()) }
}
