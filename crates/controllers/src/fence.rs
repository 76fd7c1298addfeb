//! The controllers' side of fenced writes (the hub's side: `flotilla_api::fence`).
//!
//! A controller process works a shard only while it holds that shard's Lease. Work it does for
//! the shard runs inside [`under`], and every request the hub client made by [`client`] sends
//! from inside it carries `x-flotilla-fence: <lease>=<holder>`: should the process have lost
//! the lease meanwhile (a pause longer than the lease, a partition), the hub refuses its
//! writes with 409 Conflict instead of letting them race the new owner's.
//!
//! The fence travels in a task-local value rather than through every call: reconcilers and the
//! helpers they call stay as they are, and a request made outside any [`under`] (watches,
//! lease renewals) carries none.
//!
//! kube's `Client` runs its transport behind a `tower::buffer::Buffer`: a service's `call`
//! runs on the buffer's worker task, where no fence is set, and only the future it returns is
//! polled by the task that made the request. So [`Layer`] reads the fence, stamps the request
//! and hands it on inside that future. (A stamp in `call` never saw a fence: no fenced write
//! ever reached the hub before this.)

use std::future::Future;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::HeaderValue;
use kube::Client;

/// The header, as the hub reads it.
pub const HEADER: &str = "x-flotilla-fence";

tokio::task_local! {
    static FENCE: HeaderValue;
}

/// Run `work` with the hub client's writes fenced by `lease` held by `holder`.
pub async fn under<F: Future>(lease: &str, holder: &str, work: F) -> F::Output {
    match HeaderValue::from_str(&format!("{lease}={holder}")) {
        Ok(value) => FENCE.scope(value, work).await,
        // Lease names and identities are ASCII (names and labels): cannot happen in practice.
        Err(_) => work.await,
    }
}

/// The fence of the running task, if it runs inside [`under`].
pub fn current() -> Option<String> {
    FENCE
        .try_with(|v| v.to_str().unwrap_or_default().to_owned())
        .ok()
}

/// A hub client whose requests carry the fence of the task that sends them.
pub fn client(config: kube::Config) -> kube::Result<Client> {
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(builder.with_layer(&Layer).build())
}

type Request = http::Request<kube::client::Body>;

/// Puts the fence of the task awaiting each request on it, for a client built on any transport
/// (see the module's notes on why this happens in the response future). The transport goes
/// behind a buffer of its own, so each request's future can hand the stamped request on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layer;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S> tower::Layer<S> for Layer
where
    S: tower::Service<Request> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + Sync,
{
    type Service = Stamped<tower::buffer::Buffer<Request, S::Future>>;

    fn layer(&self, inner: S) -> Self::Service {
        Stamped {
            inner: tower::buffer::Buffer::new(inner, 1024),
        }
    }
}

/// As [`Layer`], for a transport that is cheap to clone and always ready (the hub's own API
/// called in process): each request's future takes a clone, no buffer task between.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneLayer;

impl<S> tower::Layer<S> for CloneLayer
where
    S: tower::Service<Request> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Service = Stamped<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Stamped { inner }
    }
}

/// The service of [`Layer`] and [`CloneLayer`].
#[derive(Clone, Debug)]
pub struct Stamped<S> {
    inner: S,
}

impl<S> tower::Service<Request> for Stamped<S>
where
    S: tower::Service<Request> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // The instance that was made ready goes with the request; a clone stays for the next.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move { ready.call(stamp(req)).await })
    }
}

fn stamp(mut req: Request) -> Request {
    if let Ok(value) = FENCE.try_with(HeaderValue::clone) {
        req.headers_mut().insert(HEADER, value);
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_fence_holds_inside_under_only() {
        assert_eq!(current(), None);
        let inside = under("flotilla-shard-3", "proc-a", async { current() }).await;
        assert_eq!(inside.as_deref(), Some("flotilla-shard-3=proc-a"));
        assert_eq!(current(), None);
        let req = http::Request::new(kube::client::Body::empty());
        assert!(stamp(req).headers().get(HEADER).is_none());
        let req = under("l", "h", async {
            stamp(http::Request::new(kube::client::Body::empty()))
        })
        .await;
        assert_eq!(req.headers()[HEADER], "l=h");
    }

    /// As behind kube's Buffer: `call` runs where no fence is set, the future where it is.
    #[tokio::test]
    async fn the_request_is_stamped_where_its_response_is_awaited() {
        use tower::{Layer as _, Service as _, ServiceExt as _};
        let seen = tower::service_fn(|req: Request| async move {
            Ok::<_, std::convert::Infallible>(req.headers().get(HEADER).cloned())
        });
        let mut svc = Layer.layer(seen);
        let pending = svc
            .ready()
            .await
            .unwrap()
            .call(http::Request::new(kube::client::Body::empty()));
        let header = under("flotilla-shard-1", "proc-b", pending).await.unwrap();
        assert_eq!(header.unwrap(), "flotilla-shard-1=proc-b");
        let outside = svc
            .ready()
            .await
            .unwrap()
            .call(http::Request::new(kube::client::Body::empty()));
        assert_eq!(outside.await.unwrap(), None);
    }

    /// Through a real kube Client (Buffer and all) the header reaches the transport.
    #[tokio::test]
    async fn a_kube_client_sends_the_fence_of_the_awaiting_task() {
        use tower::ServiceBuilder;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let transport = tower::service_fn(move |req: Request| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(req.headers().get(HEADER).cloned());
                let body = r#"{"kind":"Status","apiVersion":"v1","status":"Success"}"#;
                Ok::<_, std::convert::Infallible>(http::Response::new(kube::client::Body::from(
                    body.as_bytes().to_vec(),
                )))
            }
        });
        let client = Client::new(
            ServiceBuilder::new().layer(Layer).service(transport),
            "default",
        );
        let req = || http::Request::get("/version").body(Vec::new()).unwrap();
        let _ = under("flotilla-shard-2", "proc-c", client.request_text(req())).await;
        assert_eq!(rx.recv().await.unwrap().unwrap(), "flotilla-shard-2=proc-c");
        let _ = client.request_text(req()).await;
        assert_eq!(rx.recv().await.unwrap(), None);
    }
}
