//! The benchmark's HTTPS client: HTTP/2 over rustls (ring), trusting only the kubeconfig's CA,
//! spread over a fixed number of connections.
//!
//! A hyper-util legacy client keeps one HTTP/2 connection per host, so a [`Client`] holds one
//! legacy client per connection and hands requests out round-robin. Servers cap the concurrent
//! streams of a connection (kube-apiserver allows 100 by default, the hub 250 like Go's
//! default), and one connection is one TCP stream and one TLS session: the throughput phases
//! and the 1,000 watchers use several.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::{connect::HttpConnector, Client as Legacy};
use hyper_util::rt::TokioExecutor;

use super::kubeconfig::{Auth, Target};

type Conn = Legacy<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client of one API server over `n` HTTP/2 connections.
#[derive(Clone)]
pub struct Client {
    conns: Arc<[Conn]>,
    next: Arc<AtomicUsize>,
    base: Arc<str>,
    authorization: Option<HeaderValue>,
    tls: Arc<rustls::ClientConfig>,
}

/// A response read to the end.
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: Bytes,
}

impl Reply {
    /// The body if the status is 2xx, else an error quoting the server's message.
    pub fn ok(self, what: &str) -> Result<Bytes> {
        if self.status.is_success() {
            return Ok(self.body);
        }
        Err(failure(what, self.status, &self.body))
    }
}

/// An error for a non-2xx answer, quoting the start of the server's message.
fn failure(what: &str, status: StatusCode, body: &[u8]) -> anyhow::Error {
    let text = String::from_utf8_lossy(body);
    let text: String = text.chars().take(300).collect();
    anyhow::anyhow!("{what}: HTTP {}: {text}", status.as_u16())
}

impl Client {
    /// A client of `target` with `connections` HTTP/2 connections (opened on first use).
    pub fn new(target: &Target, connections: usize) -> Result<Client> {
        let tls = Arc::new(tls_config(target)?);
        let authorization = match &target.auth {
            Auth::Token(t) => Some(
                HeaderValue::from_str(&format!("Bearer {t}"))
                    .context("the kubeconfig's token is not a valid HTTP header value")?,
            ),
            Auth::ClientCert { .. } => None,
        };
        let mut client = Client {
            conns: Arc::from(Vec::new()),
            next: Arc::new(AtomicUsize::new(0)),
            base: Arc::from(target.server.as_str()),
            authorization,
            tls,
        };
        client.conns = (0..connections.max(1)).map(|_| client.conn()).collect();
        Ok(client)
    }

    /// A client of the same server with its own `connections` connections.
    pub fn with_connections(&self, connections: usize) -> Client {
        let mut client = Client {
            conns: Arc::from(Vec::new()),
            next: Arc::new(AtomicUsize::new(0)),
            base: self.base.clone(),
            authorization: self.authorization.clone(),
            tls: self.tls.clone(),
        };
        client.conns = (0..connections.max(1)).map(|_| client.conn()).collect();
        client
    }

    /// A client of the same server as the bearer of `token`, with its own `connections`
    /// connections.
    pub fn with_token(&self, token: &str, connections: usize) -> Result<Client> {
        let mut client = self.with_connections(connections);
        client.authorization = Some(
            HeaderValue::from_str(&format!("Bearer {token}"))
                .context("the token is not a valid HTTP header value")?,
        );
        Ok(client)
    }

    /// How many connections requests are spread over.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// The server URL.
    pub fn server(&self) -> &str {
        &self.base
    }

    fn conn(&self) -> Conn {
        let mut http = HttpConnector::new();
        // Go's net/http (client-go) disables Nagle too; without it a small request can wait
        // for the server's delayed ACK and add tens of milliseconds.
        http.set_nodelay(true);
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(10)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*self.tls).clone())
            .https_only()
            .enable_http2()
            .wrap_connector(http);
        Legacy::builder(TokioExecutor::new())
            .http2_only(true)
            .build(https)
    }

    fn request(&self, method: Method, path: &str, body: Bytes) -> Result<Request<Full<Bytes>>> {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(ACCEPT, "application/json")
            .header(
                USER_AGENT,
                concat!("flotilla-bench/", env!("CARGO_PKG_VERSION")),
            );
        if !body.is_empty() {
            req = req.header(CONTENT_TYPE, "application/json");
        }
        if let Some(auth) = &self.authorization {
            req = req.header(AUTHORIZATION, auth.clone());
        }
        req.body(Full::new(body))
            .with_context(|| format!("building a request for {path}"))
    }

    fn pick(&self) -> &Conn {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
        &self.conns[i]
    }

    /// Send one request and read the whole response.
    pub async fn send(&self, method: Method, path: &str, body: Bytes) -> Result<Reply> {
        let req = self.request(method, path, body)?;
        let resp = self
            .pick()
            .request(req)
            .await
            .with_context(|| format!("request to {}{path}", self.base))?;
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .with_context(|| format!("reading the response of {path}"))?
            .to_bytes();
        Ok(Reply { status, body })
    }

    /// `GET path`, requiring a 2xx.
    pub async fn get(&self, path: &str) -> Result<Bytes> {
        self.send(Method::GET, path, Bytes::new())
            .await?
            .ok(&format!("GET {path}"))
    }

    /// `POST path` with a JSON body, requiring a 2xx.
    pub async fn post(&self, path: &str, body: Bytes) -> Result<Bytes> {
        self.send(Method::POST, path, body)
            .await?
            .ok(&format!("POST {path}"))
    }

    /// Open a watch (or any streaming GET); returns the body to read as it arrives.
    pub async fn stream(&self, path: &str) -> Result<hyper::body::Incoming> {
        let req = self.request(Method::GET, path, Bytes::new())?;
        let resp = self
            .pick()
            .request(req)
            .await
            .with_context(|| format!("opening {}{path}", self.base))?;
        let status = resp.status();
        let body = resp.into_body();
        if !status.is_success() {
            let text = body.collect().await.map(|b| b.to_bytes());
            let text = text.unwrap_or_default();
            return Err(failure(&format!("GET {path}"), status, &text));
        }
        Ok(body)
    }

    /// Wait until `GET /readyz` answers 200, calling `alive` between tries (to stop waiting
    /// for a server process that has died).
    pub async fn wait_ready(
        &self,
        timeout: Duration,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            alive()?;
            let last = match tokio::time::timeout(Duration::from_secs(5), self.get("/readyz")).await
            {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(e)) => format!("{e:#}"),
                Err(_) => "no answer within 5 s".to_string(),
            };
            if Instant::now() > deadline {
                bail!(
                    "{} is not ready after {} s (last: {last}); is it running, and does the \
                     kubeconfig point at it?",
                    self.base,
                    timeout.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// rustls with the ring provider, trusting only the kubeconfig's CA.
fn tls_config(target: &Target) -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut &target.ca_pem[..]) {
        roots
            .add(cert.context("the kubeconfig's CA is not valid PEM")?)
            .context("the kubeconfig's CA certificate is not usable")?;
    }
    if roots.is_empty() {
        bail!("the kubeconfig's certificate authority holds no PEM certificate");
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("configuring TLS")?
    .with_root_certificates(roots);
    match &target.auth {
        Auth::Token(_) => Ok(builder.with_no_client_auth()),
        Auth::ClientCert { cert_pem, key_pem } => {
            let certs = rustls_pemfile::certs(&mut &cert_pem[..])
                .collect::<Result<Vec<_>, _>>()
                .context("the client certificate is not valid PEM")?;
            let key = rustls_pemfile::private_key(&mut &key_pem[..])
                .context("the client key is not valid PEM")?
                .context("the client key holds no private key")?;
            builder
                .with_client_auth_cert(certs, key)
                .context("the client certificate and key do not fit together")
        }
    }
}
