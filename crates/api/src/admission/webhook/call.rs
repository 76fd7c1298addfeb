//! One call of an admission webhook: an AdmissionReview v1 POSTed over HTTPS to its
//! `clientConfig.url`, trusting its `caBundle` (else the hub's own roots: none, so a webhook
//! without a caBundle must be served under a CA the request names), within its timeout.
//! A `service` reference names a Service inside a cluster, which the hub — it runs no pods and
//! has no cluster network — cannot reach: such a call fails, and the failure policy decides.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

/// POST `review` to the webhook `hook`; its AdmissionReview answer, or why the call failed
/// (worded as kube's `failed to call webhook: …`).
pub(crate) async fn call(hook: &Value, review: &Value) -> Result<Value, String> {
    let cc = &hook["clientConfig"];
    let Some(url) = cc["url"].as_str() else {
        let svc = &cc["service"];
        return Err(format!(
            "failed to call webhook: service \"{}/{}\" cannot be reached from the hub (it runs no cluster network); use clientConfig.url",
            svc["namespace"].as_str().unwrap_or(""),
            svc["name"].as_str().unwrap_or("")
        ));
    };
    let seconds = hook["timeoutSeconds"].as_u64().unwrap_or(10);
    let timeout = Duration::from_secs(seconds);
    // kube's client tells the webhook its deadline in the query, as every request with a
    // timeout does.
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = &format!("{url}{sep}timeout={seconds}s");
    match tokio::time::timeout(timeout, post(url, cc, review)).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("failed to call webhook: Post \"{url}\": {e}")),
        Err(_) => Err(format!(
            "failed to call webhook: Post \"{url}\": context deadline exceeded"
        )),
    }
}

fn tls_config(cc: &Value) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(b64) = cc["caBundle"].as_str().filter(|s| !s.is_empty()) {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("caBundle is not base64: {e}"))?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| format!("caBundle holds no PEM certificate: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("caBundle certificate refused: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

async fn post(url: &str, cc: &Value, review: &Value) -> Result<Value, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("invalid url: {e}"))?;
    let host = uri.host().ok_or("the url names no host")?.to_string();
    let port = uri.port_u16().unwrap_or(443);
    let tls = tokio_rustls::TlsConnector::from(Arc::new(tls_config(cc)?));
    let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port))
        .await
        .map_err(|e| format!("dial tcp {host}:{port}: {e}"))?;
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_string())
        .map_err(|e| format!("invalid host name: {e}"))?;
    let stream = tls
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls: {e}"))?;
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "webhook connection ended");
        }
    });
    let body = serde_json::to_vec(review).map_err(|e| e.to_string())?;
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let req = http::Request::post(path)
        .header(
            http::header::HOST,
            uri.authority().map_or(host.as_str(), |a| a.as_str()),
        )
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if !status.is_success() {
        return Err(format!(
            "the server responded with status {}",
            status.as_u16()
        ));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("the response is not an AdmissionReview: {e}"))
}
