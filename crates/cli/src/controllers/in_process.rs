//! The hub client of the controllers and push workers `serve` runs in its own process: each
//! request goes straight to the API server's handler, as an HTTP request would after TLS and
//! parsing, with the same authentication, authorization, admission and flow control (the
//! credential of the controllers' kubeconfig rides in its Authorization header).
//!
//! Through the listener, kube-rs speaks HTTP/1.1: every open watch held a connection of its
//! own, with TLS state and buffers at both of its ends in this one process, and every request
//! was encrypted and decrypted once each way. With a thousand Push members (a Works watch, a
//! heartbeat and a prober each) that was most of an idle hub's memory and CPU.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use anyhow::{Context, Result};
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderValue, Request, Response};
use secrecy::ExposeSecret;

use super::run::HubConfig;

/// A [`tower::Service`] that serves kube-rs' requests with `api`'s handler, adding `headers`
/// (the credential and the controller identity) to each.
#[derive(Clone)]
pub struct InProcess {
    api: Arc<flotilla_api::Api>,
    headers: Arc<HeaderMap>,
}

impl tower::Service<Request<kube::client::Body>> for InProcess {
    type Response = Response<axum::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let mut req = req.map(axum::body::Body::new);
        for (name, value) in self.headers.iter() {
            req.headers_mut()
                .entry(name)
                .or_insert_with(|| value.clone());
        }
        let api = self.api.clone();
        Box::pin(async move { Ok(flotilla_api::handlers::handle(api, req).await) })
    }
}

/// A hub client served by `api` in this process, authenticated with the bearer token of the
/// controllers' kubeconfig, naming their identity and carrying the running task's fence
/// ([`flotilla_controllers::fence`]).
pub(super) fn client(api: Arc<flotilla_api::Api>, hub: &HubConfig) -> Result<kube::Client> {
    let token = hub
        .file
        .auth_infos
        .iter()
        .find_map(|a| a.auth_info.as_ref()?.token.clone())
        .with_context(|| format!("{} holds no bearer token", hub.path.display()))?;
    let mut headers = HeaderMap::new();
    let bearer = format!("Bearer {}", token.expose_secret());
    headers.insert(
        http::header::AUTHORIZATION,
        HeaderValue::from_str(&bearer).context("the kubeconfig's token is no header value")?,
    );
    headers.insert(super::run::IDENTITY_HEADER, hub.identity.clone());
    headers.insert(
        http::header::USER_AGENT,
        HeaderValue::from_static(super::run::USER_AGENT),
    );
    // The controllers and push workers keep no object's managedFields.
    headers.insert(
        flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER,
        HeaderValue::from_static("true"),
    );
    let service = tower::ServiceBuilder::new()
        .layer(flotilla_controllers::fence::CloneLayer)
        .service(InProcess {
            api,
            headers: Arc::new(headers),
        });
    Ok(kube::Client::new(service, "default"))
}

#[cfg(test)]
mod tests;
