//! The HTTPS listener: TLS (rustls), HTTP/1.1 and HTTP/2 (ALPN), graceful shutdown, and the
//! bounds that keep unauthenticated clients from holding the hub's memory and connections.
//!
//! Before a request is authenticated, a client can only hold what this module gives it: one of
//! [`Limits::max_connections`] slots (more connections wait in the kernel's listen backlog until
//! one closes), for at most the TLS handshake timeout, then [`Limits::header_read_timeout`] to
//! send its first request's whole headers, and [`IDLE_TIMEOUT`] between requests (a later
//! HTTP/1.1 request's headers included); an HTTP/2 connection
//! carries at most [`Limits::http2_max_streams`] requests at once. These are kube-apiserver's
//! `ReadHeaderTimeout` (32 s), `IdleTimeout` (90 s) and `--http2-max-streams-per-connection`,
//! plus a connection limit Go's server does not have.

mod idle;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use self::idle::Activity;
use crate::Api;

/// How long in-flight requests (including open watches) get to finish at shutdown.
const DRAIN: Duration = Duration::from_secs(5);

/// The longest a TLS handshake may take (shorter if [`Limits::header_read_timeout`] is).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection with no request in flight is closed after this long (kube-apiserver's
/// `IdleTimeout`, which matches client-go's idle-connection timeout).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// A connection told to close gets this long to say goodbye (HTTP/2 GOAWAY) before it is cut.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// What one client may hold of the listener.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once; more wait, unanswered, until one closes.
    pub max_connections: usize,
    /// How long a client has to send whole request headers after the TLS handshake, for its
    /// first request. Later HTTP/1.1 requests have [`IDLE_TIMEOUT`] from the previous response
    /// to arrive whole (hyper cannot time headers from their first byte).
    pub header_read_timeout: Duration,
    /// Requests (streams) one HTTP/2 connection may have open at once.
    pub http2_max_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(32),
            http2_max_streams: 250,
        }
    }
}

/// Which API serves a request: the hub has one; `flotilla sim` one per simulated member
/// cluster, each under its own path prefix.
pub trait Router: Send + Sync + 'static {
    /// The API that serves `req`, with its URI rewritten to the paths that API serves; or the
    /// response to give instead (e.g. 404 for a request no API serves).
    fn route(
        &self,
        req: &mut hyper::Request<axum::body::Body>,
    ) -> Result<Arc<Api>, Box<hyper::Response<axum::body::Body>>>;
    /// Every API served: told when shutdown begins, their stores closed after the drain.
    fn apis(&self) -> Vec<Arc<Api>>;
    /// The API whose metrics count open connections, if one does.
    fn front(&self) -> Option<Arc<Api>>;
}

/// One API serving every request.
struct One(Arc<Api>);

impl Router for One {
    fn route(
        &self,
        _: &mut hyper::Request<axum::body::Body>,
    ) -> Result<Arc<Api>, Box<hyper::Response<axum::body::Body>>> {
        Ok(self.0.clone())
    }
    fn apis(&self) -> Vec<Arc<Api>> {
        vec![self.0.clone()]
    }
    fn front(&self) -> Option<Arc<Api>> {
        Some(self.0.clone())
    }
}

/// Serve `api` on `listener` with `tls` until `shutdown` completes, then drain connections.
pub async fn serve(
    api: Arc<Api>,
    listener: TcpListener,
    tls: rustls::ServerConfig,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_routed(Arc::new(One(api)), listener, tls, limits, shutdown).await
}

/// [`serve`] with each request served by the API `router` picks.
pub async fn serve_routed(
    router: Arc<dyn Router>,
    listener: TcpListener,
    mut tls: rustls::ServerConfig,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper starts its header timer when it waits for a request's head, not at the head's
    // first byte as Go's server does: on a kept-alive HTTP/1.1 connection it runs through the
    // idle time between requests. Set to the header timeout, it closed connections idle for
    // 32 s that clients' pools keep for 90 s (kube-rs', client-go's), and a request sent on one
    // as the hub closed it was reset. So hyper's timer is the idle bound; the first request's
    // headers are bounded by `header_read_timeout` through `Activity::expired`.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout.max(IDLE_TIMEOUT));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.http2_max_streams);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop, stopped) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        // A free slot before the next accept: past the limit, connections wait in the backlog.
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break, // the semaphore is never closed
            },
            _ = &mut shutdown => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = tcp.set_nodelay(true);
        let conn = Connection {
            router: router.clone(),
            acceptor: acceptor.clone(),
            builder: builder.clone(),
            limits: limits.clone(),
            peer,
            _slot: slot,
        };
        connections.spawn(conn.serve(tcp, stopped.clone()));
        // Forget finished connections as we go, so the set holds only open ones.
        while connections.try_join_next().is_some() {}
    }
    tracing::info!("shutting down: draining connections");
    let apis = router.apis();
    for api in &apis {
        api.begin_shutdown();
    }
    let _ = stop.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(DRAIN, drained).await.is_err() {
        tracing::info!("drain timed out; closing remaining connections");
        connections.shutdown().await;
    }
    for api in apis {
        api.store.close().await;
    }
    Ok(())
}

/// One accepted connection and what it needs to be served.
struct Connection {
    router: Arc<dyn Router>,
    acceptor: TlsAcceptor,
    builder: auto::Builder<TokioExecutor>,
    limits: Limits,
    peer: std::net::SocketAddr,
    /// Held while the connection is open: its place among `max_connections`.
    _slot: OwnedSemaphorePermit,
}

impl Connection {
    async fn serve(self, tcp: TcpStream, mut stopped: watch::Receiver<bool>) {
        let peer = self.peer;
        let front = self.router.front();
        if let Some(api) = &front {
            api.metrics.connections.inc();
        }
        let _open = scopeguard(move || {
            if let Some(api) = front {
                api.metrics.connections.dec();
            }
        });
        let handshake = HANDSHAKE_TIMEOUT.min(self.limits.header_read_timeout);
        let stream = match tokio::time::timeout(handshake, self.acceptor.accept(tcp)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                tracing::debug!(%peer, error = %e, "TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::debug!(%peer, "TLS handshake timed out");
                return;
            }
        };
        let activity = Arc::new(Activity::default());
        let router = self.router.clone();
        let requests = activity.clone();
        let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            let mut req = req.map(axum::body::Body::new);
            req.extensions_mut().insert(crate::audit::Peer(peer.ip()));
            let api = router.route(&mut req);
            // In flight until its response body is done (a watch streams for minutes).
            let busy = requests.begin();
            // The handler's future is boxed and so freed once it has answered: hyper keeps the
            // service's future in each stream's task until the response body ends, and the
            // handler's (every route's state) is kilobytes, which a thousand agents' open
            // watches held for nothing (50 MB of an idle hub's heap at 1,000 members).
            async move {
                let resp = match api {
                    Ok(api) => Box::pin(crate::handlers::handle(api, req)).await,
                    Err(resp) => *resp,
                };
                Ok::<_, std::convert::Infallible>(resp.map(|body| {
                    axum::body::Body::new(body.map_frame(move |frame| {
                        let _ = &busy;
                        frame
                    }))
                }))
            }
        });
        let conn = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(stream), svc);
        tokio::pin!(conn);
        let idle = activity.expired(self.limits.header_read_timeout, IDLE_TIMEOUT);
        tokio::pin!(idle);
        let mut closing = false;
        let result = loop {
            tokio::select! {
                result = conn.as_mut() => break result,
                _ = stopped.changed(), if !closing => {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                }
                _ = &mut idle, if !closing => {
                    tracing::debug!(%peer, "closing a connection that sent no request in time");
                    conn.as_mut().graceful_shutdown();
                    // A client that ignores GOAWAY does not keep its slot.
                    match tokio::time::timeout(CLOSE_GRACE, conn.as_mut()).await {
                        Ok(result) => break result,
                        Err(_) => return,
                    }
                }
            }
        };
        if let Err(e) = result {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
    }
}

/// Runs `f` when dropped.
fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    Guard(Some(f))
}
