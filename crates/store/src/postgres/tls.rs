//! TLS to PostgreSQL through rustls (ring), configured from the URL's libpq parameters (see
//! [`super::url`]). Files are read once, at open, so a wrong path fails the start with one
//! message naming the setting and the server, not every later reconnect.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::url::{Roots, SslMode, TlsSettings};
use crate::{Error, Result};

/// The connector for `settings`; `host` labels errors.
pub(super) fn connector(settings: &TlsSettings, host: &str) -> Result<MakeRustlsConnect> {
    let fail =
        |what: String, source: Box<dyn std::error::Error + Send + Sync>| Error::PostgresTls {
            host: host.to_owned(),
            what,
            source: Arc::from(source),
        };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = match &settings.roots {
        Some(roots) => Some(Arc::new(load_roots(roots).map_err(|(w, e)| fail(w, e))?)),
        None => None,
    };
    let verifier = Verifier {
        roots,
        check_name: settings.mode == SslMode::VerifyFull,
        algorithms: provider.signature_verification_algorithms,
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail("choosing TLS versions".into(), Box::new(e)))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let mut config = match &settings.client {
        Some((cert, key)) => {
            let chain = read_certs(cert, "sslcert").map_err(|(w, e)| fail(w, e))?;
            let key = read_key(key).map_err(|(w, e)| fail(w, e))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| fail("sslcert and sslkey do not make a pair".into(), Box::new(e)))?
        }
        None => builder.with_no_client_auth(),
    };
    // What PostgreSQL 17 expects (and requires for sslnegotiation=direct); older servers
    // ignore it.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(MakeRustlsConnect::new(config))
}

type Failure = (String, Box<dyn std::error::Error + Send + Sync>);

fn load_roots(roots: &Roots) -> Result<RootCertStore, Failure> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            for cert in read_certs(path, "sslrootcert")? {
                store.add(cert).map_err(|e| {
                    let what = format!(
                        "sslrootcert {} holds an unusable certificate",
                        path.display()
                    );
                    (what, Box::new(e) as _)
                })?;
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let detail = found
                    .errors
                    .first()
                    .map_or_else(|| "none found".to_owned(), ToString::to_string);
                let what = "no system root certificates to verify the server with (install \
                            ca-certificates, or give sslrootcert=PATH)"
                    .to_owned();
                return Err((what, detail.into()));
            }
        }
    }
    Ok(store)
}

fn read_certs(path: &Path, setting: &str) -> Result<Vec<CertificateDer<'static>>, Failure> {
    let what = |how: &str| format!("{setting} {} {how}", path.display());
    let pem = std::fs::read(path).map_err(|e| (what("cannot be read"), Box::new(e) as _))?;
    let certs = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| (what("is not PEM"), Box::new(e) as _))?;
    if certs.is_empty() {
        return Err((
            what("holds no certificate"),
            "no BEGIN CERTIFICATE block".into(),
        ));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, Failure> {
    let what = |how: &str| format!("sslkey {} {how}", path.display());
    let pem = std::fs::read(path).map_err(|e| (what("cannot be read"), Box::new(e) as _))?;
    match rustls_pemfile::private_key(&mut pem.as_slice()) {
        Ok(Some(key)) => Ok(key),
        Ok(None) => Err((what("holds no private key"), "no PRIVATE KEY block".into())),
        Err(e) => Err((what("is not PEM"), Box::new(e))),
    }
}

/// Checks the server's certificate as the URL's sslmode says: not at all (`prefer`, `require`
/// without sslrootcert), its chain (`verify-ca`, or any mode with sslrootcert), or its chain and
/// name (`verify-full`). Handshake signatures are always checked, so the server at least holds
/// the key of the certificate it shows.
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<RootCertStore>>,
    check_name: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        let cert = ParsedCertificate::try_from(end_entity)?;
        verify_server_cert_signed_by_trust_anchor(
            &cert,
            roots,
            intermediates,
            now,
            self.algorithms.all,
        )?;
        if self.check_name {
            verify_server_name(&cert, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
