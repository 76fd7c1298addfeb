//! A small HTTPS client for the benchmark: HTTP/2 over rustls, bearer token, CA from the
//! kubeconfig.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::client::legacy::{connect::HttpConnector, Client as HyperClient};
use hyper_util::rt::TokioExecutor;

type Inner = HyperClient<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client of one API server.
#[derive(Clone)]
pub struct Client {
    inner: Inner,
    base: String,
    auth: String,
    target: std::sync::Arc<Target>,
}

/// What a kubeconfig says about its current cluster and user.
#[derive(Clone)]
pub struct Target {
    /// `https://host:port`.
    pub server: String,
    /// CA certificate (PEM).
    pub ca_pem: Vec<u8>,
    /// Bearer token.
    pub token: String,
}

/// Read the first cluster and user of a kubeconfig.
pub fn read_kubeconfig(path: &std::path::Path) -> Result<Target> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let server = v
        .pointer("/clusters/0/cluster/server")
        .and_then(|s| s.as_str())
        .context("kubeconfig has no clusters[0].cluster.server")?;
    let ca = v
        .pointer("/clusters/0/cluster/certificate-authority-data")
        .and_then(|s| s.as_str())
        .context("kubeconfig has no certificate-authority-data")?;
    let token = v
        .pointer("/users/0/user/token")
        .and_then(|s| s.as_str())
        .context("kubeconfig has no users[0].user.token")?;
    Ok(Target {
        server: server.trim_end_matches('/').to_string(),
        ca_pem: base64::engine::general_purpose::STANDARD
            .decode(ca)
            .context("certificate-authority-data is not base64")?,
        token: token.to_string(),
    })
}

impl Client {
    /// A client for `target`.
    pub fn new(target: &Target) -> Result<Client> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_pemfile::certs(&mut &target.ca_pem[..]) {
            roots
                .add(cert.context("reading the CA certificate")?)
                .context("adding the CA certificate")?;
        }
        let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http2()
            .build();
        let inner = HyperClient::builder(TokioExecutor::new())
            .http2_only(true)
            .build(https);
        Ok(Client {
            inner,
            base: target.server.clone(),
            auth: format!("Bearer {}", target.token),
            target: std::sync::Arc::new(target.clone()),
        })
    }

    /// Another client of the same server on its own connection (HTTP/2 caps the streams of one
    /// connection, and real clients spread over several).
    pub fn fresh(&self) -> Result<Client> {
        Client::new(&self.target)
    }

    /// Send one request; returns status, body and latency.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes, Duration)> {
        let started = Instant::now();
        let req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(Full::new(Bytes::from(body.unwrap_or_default())))?;
        let resp = self
            .inner
            .request(req)
            .await
            .with_context(|| format!("request to {path}"))?;
        let status = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .context("reading the response")?
            .to_bytes();
        Ok((status, bytes, started.elapsed()))
    }

    /// Send and require a 2xx.
    pub async fn ok(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(Bytes, Duration)> {
        let (status, bytes, took) = self.send(method, path, body).await?;
        if !(200..300).contains(&status) {
            bail!("{path}: HTTP {status}: {}", String::from_utf8_lossy(&bytes));
        }
        Ok((bytes, took))
    }

    /// Open a watch; returns the streaming body.
    pub async fn watch(&self, path: &str) -> Result<hyper::body::Incoming> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(format!("{}{path}", self.base))
            .header("authorization", &self.auth)
            .body(Full::new(Bytes::new()))?;
        let resp = self
            .inner
            .request(req)
            .await
            .with_context(|| format!("watch {path}"))?;
        if !resp.status().is_success() {
            bail!("watch {path}: HTTP {}", resp.status());
        }
        Ok(resp.into_body())
    }
}
