//! Building HTTP responses.

use axum::body::Body;
use bytes::Bytes;
use http::{header, Response, StatusCode};
use serde_json::Value;

use crate::error::ApiError;

/// A JSON response from bytes already encoded.
pub fn raw(code: u16, body: Bytes) -> Response<Body> {
    raw_typed(code, body, "application/json")
}

/// A response with an explicit content type.
pub fn raw_typed(code: u16, body: Bytes, content_type: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

/// A JSON response.
pub fn json(code: u16, v: &Value) -> Response<Body> {
    // Serializing a Value cannot fail (all keys are strings).
    raw(code, Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
}

/// An error as a Status object.
pub fn error(e: &ApiError) -> Response<Body> {
    json(e.code, &e.to_status())
}

/// Add `Warning:` headers (299 - "text") as kube-apiserver does for fieldValidation=Warn etc.
pub fn with_warnings(mut r: Response<Body>, warnings: &[String]) -> Response<Body> {
    for w in warnings {
        // warn-text is an RFC 7230 quoted-string: escape backslashes and quotes.
        let text = format!("299 - \"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(v) = header::HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}
