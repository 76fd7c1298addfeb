//! Clients that carry all their requests over one HTTP/2 connection per server.
//!
//! kube-rs speaks HTTP/1.1 only, so every watch holds a TLS connection of its own: an agent
//! (Works, exports, health reports, its Lease, its token) kept six to eight connections open to
//! the hub, and a thousand of them exhausted the hub's connection limit before all had joined.
//! client-go multiplexes over HTTP/2; these clients do the same: TLS offers `h2` first (ALPN)
//! and falls back to HTTP/1.1 for a server without it. A connection is checked with HTTP/2
//! pings while it is idle, so a dead server is noticed without a read timeout that would cut
//! long watches.

use std::time::Duration;

use flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::ConfigExt;
use kube::{Client, Config};
use tower::{BoxError, ServiceBuilder};

/// How often an HTTP/2 connection is pinged, and how long an answer may take before the
/// connection counts as dead (its requests fail and are retried on a new one).
const KEEPALIVE: (Duration, Duration) = (Duration::from_secs(30), Duration::from_secs(20));

/// TLS sessions kept for resumption.
const SESSIONS: usize = 4;

/// What these clients call themselves unless their configuration says otherwise. A server
/// names the field manager of a write that gives none by the part before the `/` (as
/// kube-apiserver does), so a Work's status shows `flotilla-agent`, not `unknown`.
pub const USER_AGENT: &str = concat!("flotilla-agent/", env!("CARGO_PKG_VERSION"));

/// A client for `config`'s server (TLS as `config` says: CA, client certificate, token,
/// server name) multiplexing its requests over HTTP/2 when the server offers it.
pub fn multiplexed(mut config: Config) -> kube::Result<Client> {
    if !config
        .headers
        .iter()
        .any(|(name, _)| name == http::header::USER_AGENT)
    {
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static(USER_AGENT),
        ));
    }
    // The agent keeps no object's managedFields (a flotilla hub, or a simulated member, then
    // sends none in LISTs and watches; a kube-apiserver ignores the header).
    config.headers.push((
        http::HeaderName::from_static(OMIT_MANAGED_FIELDS_HEADER),
        http::HeaderValue::from_static("true"),
    ));
    let mut tls = config.rustls_client_config()?;
    // One server, so a few sessions to resume are plenty; rustls' default keeps room for 256
    // (15 KB a client, which a hub with a thousand push members pays a thousand times).
    tls.resumption = rustls::client::Resumption::in_memory_sessions(SESSIONS);
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(config.connect_timeout);
    http.set_nodelay(true);
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    let builder = match &config.tls_server_name {
        Some(name) => {
            let name = name.clone().try_into().map_err(|e| {
                kube::Error::Service(format!("tls-server-name {name:?}: {e}").into())
            })?;
            builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => builder,
    };
    let https = builder.enable_http1().enable_http2().wrap_connector(http);
    let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .http2_keep_alive_interval(KEEPALIVE.0)
        .http2_keep_alive_timeout(KEEPALIVE.1)
        .http2_keep_alive_while_idle(true)
        .build(https);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(client);
    Ok(Client::new(service, config.default_namespace))
}
