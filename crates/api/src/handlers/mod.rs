//! Request dispatch: authenticate, authorize, route to discovery/OpenAPI/health or to the
//! object handlers.

pub mod discovery;
mod documents;
mod health;
mod json_path;
mod list_options;
pub(crate) mod objects;
mod request_timeout;
pub mod response;
mod table;
mod watch;

use std::sync::Arc;

use axum::body::Body;
use http::{Method, Request, Response};
use http_body_util::BodyExt;

use crate::error::ApiError;
use crate::request::{negotiate, Query, RequestInfo};
use crate::Api;

/// Everything a handler needs about the request.
pub struct Ctx {
    /// Parsed path.
    pub info: RequestInfo,
    /// Parsed query.
    pub query: Query,
    /// Requested response shape.
    pub want: crate::request::Want,
    /// The `Accept` header (a watch-list negotiates its own shape from it).
    pub accept: Option<String>,
    /// Content-Type of the body.
    pub content_type: Option<String>,
    /// User-Agent (default field manager).
    pub user_agent: Option<String>,
    /// Whether LISTs and watches leave out the objects' `metadata.managedFields`
    /// ([`flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER`]).
    pub omit_managed_fields: bool,
    /// Authenticated user.
    pub user: crate::auth::UserInfo,
    /// What the user's credential depends on: a watch ends when it stops being valid.
    pub credential: crate::access::Credential,
    /// The body bytes (empty for GET).
    pub body: bytes::Bytes,
}

impl Ctx {
    /// The field manager for this write: `fieldManager` or the user agent's program name.
    pub fn field_manager(&self) -> String {
        if let Some(m) = &self.query.field_manager {
            return m.clone();
        }
        let ua = self.user_agent.as_deref().unwrap_or("unknown");
        ua.split('/').next().unwrap_or("unknown").to_string()
    }
}

/// Serve one request.
pub async fn handle(api: Arc<Api>, req: Request<axum::body::Body>) -> Response<Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let started = std::time::Instant::now();
    let audit = api.config.audit.clone().map(|a| (a, audit_request(&req)));
    // What API Priority and Fairness classified the request as, once it knows who sent it.
    let mut flow = None;
    let mut seen = crate::audit::Seen::default();
    let resp = match route(&api, req, &mut flow, &mut seen, audit.as_ref()).await {
        Ok(r) => r,
        Err(e) => response::error(&e),
    };
    let mut resp = crate::flowcontrol::with_headers(resp, flow.as_ref());
    if resp.status() == http::StatusCode::TOO_MANY_REQUESTS {
        resp.headers_mut()
            .entry(http::header::RETRY_AFTER)
            .or_insert(http::HeaderValue::from_static("1"));
    }
    if let Some((audit, request)) = audit {
        if let Ok(v) = http::HeaderValue::from_str(&request.id) {
            resp.headers_mut().insert("audit-id", v);
        }
        resp = audit.record(&request, seen, resp).await;
    }
    api.metrics
        .observe(method.as_str(), resp.status().as_u16(), started.elapsed());
    tracing::debug!(
        %method,
        %path,
        code = resp.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        "request"
    );
    resp
}

/// The request's own facts for its audit event.
fn audit_request(req: &Request<Body>) -> crate::audit::Request {
    crate::audit::Request {
        id: uuid::Uuid::new_v4().to_string(),
        uri: req
            .uri()
            .path_and_query()
            .map_or_else(|| req.uri().path().to_owned(), |p| p.to_string()),
        source: req.extensions().get::<crate::audit::Peer>().map(|p| p.0),
        user_agent: header(req, http::header::USER_AGENT),
        received: chrono::Utc::now(),
    }
}

fn header(req: &Request<Body>, h: http::header::HeaderName) -> Option<String> {
    req.headers()
        .get(h)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

async fn route(
    api: &Arc<Api>,
    req: Request<Body>,
    flow: &mut Option<crate::flowcontrol::Matched>,
    seen: &mut crate::audit::Seen,
    audit: Option<&(Arc<crate::audit::Audit>, crate::audit::Request)>,
) -> Result<Response<Body>, ApiError> {
    let path = req.uri().path().to_string();
    request_timeout::check(&path, req.uri().query())?;
    if matches!(
        path.as_str(),
        "/healthz" | "/livez" | "/readyz" | "/version"
    ) {
        let (headers, method) = (req.headers().clone(), req.method().clone());
        *flow = crate::flowcontrol::classify_public(api, headers, &method, &path).await;
    }
    // Health and version are public, as in Kubernetes (system:public-info-viewer).
    if let Some(r) = health::serve(api, &path, req.uri().query()).await {
        return Ok(r);
    }
    if path == "/version" {
        return Ok(response::json(200, &crate::version_info()));
    }
    let accept = header(&req, http::header::ACCEPT);
    let content_type = header(&req, http::header::CONTENT_TYPE);
    let user_agent = header(&req, http::header::USER_AGENT);
    let omit_managed_fields = req
        .headers()
        .get(flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
    let authorization = req.headers().get(http::header::AUTHORIZATION).cloned();
    let query = Query::parse(req.uri().query())?;
    let crate::access::Authenticated { user, credential } = api
        .access
        .authenticate(&api.cache, authorization.as_ref())
        .await?;
    let user = api.access.impersonate(&api.cache, user, req.headers())?;
    let fence = crate::fence::parse(req.headers())?;
    let info = RequestInfo::parse(req.method(), &path, query.watch)
        .with_field_selector(query.field_selector.as_deref());
    *flow = api.flowcontrol.classify(&user, &info);
    if let Some((audit, request)) = audit {
        seen.verdict = Some(audit.received(request, &user, &info));
        seen.user = Some(user.clone());
        seen.info = Some(info.clone());
    }
    // Held while the request is handled.
    let _seat = api.flowcontrol.seat(flow.as_ref(), &user, &info).await?;
    api.access.authorize(&api.cache, &user, &info).await?;
    crate::fence::check(&api.cache, &info, fence.as_ref()).await?;

    if !info.is_resource_request {
        return discovery::serve_non_resource(api, &path, accept.as_deref());
    }
    let method = req.method().clone();
    let body = if matches!(
        method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    ) {
        let limited = http_body_util::Limited::new(req.into_body(), crate::request::body::MAX_BODY);
        match limited.collect().await {
            Ok(c) => c.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(crate::request::body::too_large())
            }
            Err(e) => {
                return Err(ApiError::bad_request(format!(
                    "the request body could not be read: {e}"
                )))
            }
        }
    } else {
        bytes::Bytes::new()
    };
    seen.body = body.clone();
    seen.content_type = content_type.clone();
    let ctx = Ctx {
        want: negotiate(accept.as_deref()),
        accept,
        info,
        query,
        content_type,
        user_agent,
        omit_managed_fields,
        user,
        credential,
        body,
    };
    objects::dispatch(api, ctx).await
}

#[cfg(test)]
mod tests;
