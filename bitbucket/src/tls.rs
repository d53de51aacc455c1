//! ureq's TLS settings from bb's configuration: rustls with the ring provider, the built-in (webpki) roots plus
//! `BB_CA_FILE`, and the client certificate when one is configured.
//!
//! Everything here was checked by bb's `config::load`: a key that does not match its certificate never
//! reaches ureq (which would otherwise panic while building its TLS configuration on first use).

use std::sync::Arc;

use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig, TlsProvider};

use crate::options::BitbucketConfig;

/// The TLS configuration of bb's agent.
pub fn tls_config(config: &BitbucketConfig) -> TlsConfig {
    // The built-in roots are borrowed from the binary (read only when a TLS connection is made),
    // not copied to the heap at start; `BB_CA_FILE`'s are owned by the configuration, so copied.
    let roots: Vec<Certificate<'static>> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|der: &'static rustls::pki_types::CertificateDer<'static>| Certificate::from_der(der.as_ref()))
        .chain(config.extra_roots.iter().map(|der| Certificate::from_der(der.as_ref()).to_owned()))
        .collect();
    let client_cert = config.client_identity.as_ref().and_then(|id| {
        let chain: Vec<Certificate<'static>> =
            id.chain.iter().map(|der| Certificate::from_der(der.as_ref()).to_owned()).collect();
        // ureq takes the key as PEM (its key kinds are not public); config::load parsed the same text.
        let key = PrivateKey::from_pem(&id.key_pem).ok()?;
        Some(ClientCert::new_with_certs(&chain, key))
    });
    TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .root_certs(RootCerts::Specific(Arc::new(roots)))
        .client_cert(client_cert)
        .build()
}
