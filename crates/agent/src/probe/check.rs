//! One probe of one endpoint: a TCP connection, or an HTTP(S) GET answered 2xx/3xx, from a
//! chosen source address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::networking::v1alpha1::ProbeProtocol;
use http_body_util::Empty;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpSocket, TcpStream};

/// What to probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The endpoint.
    pub addr: SocketAddr,
    /// TCP, HTTP or HTTPS.
    pub protocol: ProbeProtocol,
    /// HTTP(S): the path.
    pub path: String,
    /// How long the whole probe may take.
    pub timeout: Duration,
}

/// Runs one probe: `Ok(())` when the endpoint is up, else why not.
pub async fn probe(check: &Check, source: Option<IpAddr>) -> Result<(), String> {
    match tokio::time::timeout(check.timeout, attempt(check, source)).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {:?}", check.timeout)),
    }
}

async fn attempt(check: &Check, source: Option<IpAddr>) -> Result<(), String> {
    let stream = connect(check.addr, source).await?;
    match check.protocol {
        ProbeProtocol::Tcp => Ok(()),
        ProbeProtocol::Http => get(stream, check).await,
        ProbeProtocol::Https => {
            let tls = tokio_rustls::TlsConnector::from(Arc::new(insecure_client()));
            let name = rustls::pki_types::ServerName::IpAddress(check.addr.ip().into());
            let stream = tls
                .connect(name, stream)
                .await
                .map_err(|e| format!("TLS handshake: {e}"))?;
            get(stream, check).await
        }
    }
}

/// A TCP connection to `addr`, from `source` when given.
async fn connect(addr: SocketAddr, source: Option<IpAddr>) -> Result<TcpStream, String> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|e| format!("socket: {e}"))?;
    if let Some(ip) = source {
        socket
            .bind(SocketAddr::new(ip, 0))
            .map_err(|e| format!("binding the probe source {ip}: {e}"))?;
    }
    socket
        .connect(addr)
        .await
        .map_err(|e| format!("connecting to {addr}: {e}"))
}

/// `GET path` over `stream`: up when answered 2xx or 3xx.
async fn get<S>(stream: S, check: &Check) -> Result<(), String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake: {e}"))?;
    let conn = tokio::spawn(conn);
    let request = http::Request::get(check.path.as_str())
        .header(http::header::HOST, check.addr.to_string())
        .header(http::header::USER_AGENT, "flotilla-probe")
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("the path {:?}: {e}", check.path))?;
    let answer = sender.send_request(request).await;
    conn.abort();
    let status = answer
        .map_err(|e| format!("GET {}: {e}", check.path))?
        .status();
    if status.is_success() || status.is_redirection() {
        Ok(())
    } else {
        Err(format!("GET {} answered {status}", check.path))
    }
}

/// A TLS client that accepts any certificate: a health probe asks whether the endpoint
/// answers, not who it is (as kubelet's HTTPS probes do).
fn insecure_client() -> rustls::ClientConfig {
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{DigitallySignedStruct, SignatureScheme};

    #[derive(Debug)]
    struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

    impl ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _: &CertificateDer<'_>,
            _: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }
        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }
        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth()
}
