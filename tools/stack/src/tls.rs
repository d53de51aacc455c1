//! HTTPS for the stack: rustls (ring provider) over smol through futures-rustls, with the committed test
//! certificates of `certs/` (see `certs/make-certs.sh` for how they were made) or any PEM pair, and optionally a
//! required client certificate signed by a given CA.
//!
//! ```no_run
//! use bb_stack::{Stack, StackConfig, tls::StackTls};
//! let stack = Stack::start(StackConfig { tls: Some(StackTls::test_requiring_client_cert()), ..Default::default() })?;
//! assert!(stack.base_url.starts_with("https://127.0.0.1:"));
//! // A client trusts certs/ca.pem and presents certs/client.pem + certs/client.key.
//! # Ok::<(), String>(())
//! ```

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use futures_rustls::TlsAcceptor;
use futures_rustls::rustls::pki_types::pem::PemObject;
use futures_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use futures_rustls::rustls::server::WebPkiClientVerifier;
use futures_rustls::rustls::{RootCertStore, ServerConfig, crypto};

/// The test CA (PEM) that signs the test server and client certificates. TEST ONLY.
pub const TEST_CA_PEM: &str = include_str!("../certs/ca.pem");
/// The test server certificate, for `localhost` and `127.0.0.1`. TEST ONLY.
pub const TEST_SERVER_CERT_PEM: &str = include_str!("../certs/server.pem");
/// The test server certificate's private key. TEST ONLY.
pub const TEST_SERVER_KEY_PEM: &str = include_str!("../certs/server.key");
/// A client certificate the test CA signed. TEST ONLY.
pub const TEST_CLIENT_CERT_PEM: &str = include_str!("../certs/client.pem");
/// The test client certificate's private key. TEST ONLY.
pub const TEST_CLIENT_KEY_PEM: &str = include_str!("../certs/client.key");

/// The path of a committed test file (`ca.pem`, `server.pem`, `server.key`, `client.pem`, `client.key`), for
/// clients that want files (such as bb's `BB_CA_FILE`).
pub fn test_cert_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("certs").join(name)
}

/// How the stack serves HTTPS.
#[derive(Clone)]
pub struct StackTls {
    /// The server's certificate chain (PEM), leaf first.
    pub cert_chain_pem: String,
    /// The server's private key (PEM).
    pub key_pem: String,
    /// When set, every client must present a certificate signed by one of these CAs (PEM).
    pub client_ca_pem: Option<String>,
}

impl fmt::Debug for StackTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StackTls").field("requires_client_cert", &self.client_ca_pem.is_some()).finish_non_exhaustive()
    }
}

impl StackTls {
    /// HTTPS with the committed test certificate; no client certificate asked for.
    pub fn test() -> Self {
        StackTls {
            cert_chain_pem: TEST_SERVER_CERT_PEM.into(),
            key_pem: TEST_SERVER_KEY_PEM.into(),
            client_ca_pem: None,
        }
    }

    /// HTTPS with the committed test certificate, requiring a client certificate signed by the test CA.
    pub fn test_requiring_client_cert() -> Self {
        StackTls { client_ca_pem: Some(TEST_CA_PEM.into()), ..StackTls::test() }
    }

    /// Checks the PEM material and builds the acceptor.
    pub fn acceptor(&self) -> Result<TlsAcceptor, String> {
        let provider = Arc::new(crypto::ring::default_provider());
        let chain = certificates(&self.cert_chain_pem, "the server certificate")?;
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| format!("The server key is not a PEM private key: {e}"))?;
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup failed: {e}"))?;
        let builder = match &self.client_ca_pem {
            None => builder.with_no_client_auth(),
            Some(pem) => {
                let mut roots = RootCertStore::empty();
                for cert in certificates(pem, "the client CA")? {
                    roots.add(cert).map_err(|e| format!("The client CA cannot be used: {e}"))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| format!("The client CA cannot be used: {e}"))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(chain, key)
            .map_err(|e| format!("The server certificate and key cannot be used together: {e}"))?;
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

fn certificates(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what} is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what} holds no PEM certificate"));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_test_certificates_make_acceptors_with_and_without_client_auth() {
        assert!(StackTls::test().acceptor().is_ok());
        assert!(StackTls::test_requiring_client_cert().acceptor().is_ok());
    }

    #[test]
    fn a_key_that_is_not_the_certificates_is_refused() {
        let wrong = StackTls { key_pem: TEST_CLIENT_KEY_PEM.into(), ..StackTls::test() };
        let e = wrong.acceptor().err().unwrap_or_default();
        assert!(e.contains("cannot be used together"), "{e}");
    }
}
