//! The HTTPS listener: TLS (rustls), HTTP/1.1 and HTTP/2 (ALPN), graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::Api;

/// How long in-flight requests (including open watches) get to finish at shutdown.
const DRAIN: Duration = Duration::from_secs(5);

/// Serve `api` on `listener` with `tls` until `shutdown` completes, then drain connections.
pub async fn serve(
    api: Arc<Api>,
    listener: TcpListener,
    mut tls: rustls::ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // client-go multiplexes every request, watches included, over one HTTP/2 connection per
    // server; kube-apiserver allows 1,000 concurrent streams per connection, and so do we.
    builder.http2().max_concurrent_streams(1000);
    tokio::pin!(shutdown);
    loop {
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
        let acceptor = acceptor.clone();
        let api = api.clone();
        let builder = builder.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let stream =
                match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        tracing::debug!(%peer, error = %e, "TLS handshake failed");
                        return;
                    }
                    Err(_) => return,
                };
            let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let api = api.clone();
                async move {
                    Ok::<_, std::convert::Infallible>(
                        crate::handlers::handle(api, req.map(axum::body::Body::new)).await,
                    )
                }
            });
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), svc);
            if let Err(e) = watcher.watch(conn.into_owned()).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    tracing::info!("shutting down: draining connections");
    api.begin_shutdown();
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("drain timed out; closing remaining connections");
    }
    api.store.close().await;
    Ok(())
}
