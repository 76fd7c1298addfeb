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

use std::future::Future;

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
    let stamp = tower::util::MapRequestLayer::new(stamp);
    Ok(builder.with_layer(&stamp).build())
}

fn stamp(mut req: http::Request<kube::client::Body>) -> http::Request<kube::client::Body> {
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
}
