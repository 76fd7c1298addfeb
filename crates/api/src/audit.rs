//! Auditing as kube-apiserver's: a `Policy` (`--audit-policy-file`) decides per request how much
//! is logged, and each logged request becomes one `audit.k8s.io/v1` `Event` line in the log
//! (`--audit-log-path`): who (user, groups, source address, user agent), what (verb, URI,
//! object reference), the answer's code and, at level Request / RequestResponse, the bodies.
//! Every response carries the event's id in its `Audit-ID` header.
//!
//! Stages, as kube-apiserver's: `RequestReceived` once the request is authenticated (before it
//! is authorized and handled, so a request that never finishes is still on record; without its
//! body or answer), `ResponseComplete` once answered; a watch gets `ResponseStarted` when its
//! stream starts and `ResponseComplete` when the stream ends (its client gone or the watch
//! closed). A policy's `omitStages` leaves any of them out.

mod log;
pub mod policy;
#[cfg(test)]
mod tests;

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use http::Response;
use serde_json::{json, Value};

pub use log::Rotation;
use policy::{Level, Policy, Stage};

use crate::auth::UserInfo;
use crate::request::RequestInfo;

/// Largest response body kept for a RequestResponse event; a larger one is logged without it.
const MAX_RESPONSE: usize = 3 * 1024 * 1024;

/// The audit policy and log.
pub struct Audit {
    policy: Policy,
    sink: log::Sink,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Audit")
    }
}

/// The client's address, as the server puts it in each request's extensions.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub IpAddr);

/// What the request handling learned that an event needs, filled in as it goes.
#[derive(Default)]
pub struct Seen {
    /// The authenticated (and impersonated) user.
    pub user: Option<UserInfo>,
    /// The parsed request.
    pub info: Option<RequestInfo>,
    /// What the policy said of it (judged once, at `RequestReceived`).
    pub verdict: Option<policy::Verdict>,
    /// The request body, once read.
    pub body: Bytes,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
}

/// The request's own facts, known before it is handled.
pub struct Request {
    /// The event's id (also the `Audit-ID` response header).
    pub id: String,
    /// Path and query.
    pub uri: String,
    /// The client's address.
    pub source: Option<IpAddr>,
    /// `User-Agent`.
    pub user_agent: Option<String>,
    /// When it arrived.
    pub received: chrono::DateTime<chrono::Utc>,
}

impl Audit {
    /// Read the policy file and open the log; errors say which file and what is wrong.
    pub fn open(policy: &Path, log: &Path, rotation: Rotation) -> Result<Audit, String> {
        let text = std::fs::read_to_string(policy)
            .map_err(|e| format!("reading the audit policy {}: {e}", policy.display()))?;
        let policy_parsed = Policy::parse(&text)
            .map_err(|e| format!("the audit policy {}: {e}", policy.display()))?;
        let sink = log::Sink::open(log, rotation)
            .map_err(|e| format!("opening the audit log {}: {e}", log.display()))?;
        Ok(Audit {
            policy: policy_parsed,
            sink,
        })
    }

    /// Log the `RequestReceived` stage of `request`, made by `user`, as the policy says;
    /// returns what it says, for [`Audit::record`].
    pub fn received(
        &self,
        request: &Request,
        user: &UserInfo,
        info: &RequestInfo,
    ) -> policy::Verdict {
        let verdict = self.policy.judge(user, info);
        if verdict.level != Level::None && !verdict.omit_stages.contains(&Stage::RequestReceived) {
            let mut event = event(&verdict, request, user, info, Stage::RequestReceived);
            if info.is_resource_request {
                event["objectRef"] = object_ref(info, None);
            }
            self.write(&event);
        }
        verdict
    }

    fn write(&self, event: &Value) {
        match serde_json::to_vec(event) {
            Ok(line) => self.sink.send(line),
            Err(e) => tracing::error!(error = %e, "encoding an audit event"),
        }
    }

    /// Log `request` as the policy says, given what handling it `seen` and its `response`
    /// (read whole when the level wants its body, and given back the same).
    pub async fn record(
        self: &Arc<Self>,
        request: &Request,
        seen: Seen,
        response: Response<Body>,
    ) -> Response<Body> {
        let (Some(user), Some(info), Some(verdict)) = (seen.user, seen.info, seen.verdict) else {
            return response;
        };
        if verdict.level == Level::None {
            return response;
        }
        let watch = info.verb == "watch";
        let stage = if watch {
            Stage::ResponseStarted
        } else {
            Stage::ResponseComplete
        };
        if verdict.omit_stages.contains(&stage) {
            return response;
        }
        let code = response.status().as_u16();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Read whole when the level logs it, and for a failure (a small Status), whose reason
        // and message go in responseStatus at every level.
        let whole = (verdict.level == Level::RequestResponse && !watch) || code >= 400;
        let (response, body) = if whole {
            let (parts, body) = response.into_parts();
            match axum::body::to_bytes(body, MAX_RESPONSE).await {
                Ok(b) => (Response::from_parts(parts, Body::from(b.clone())), Some(b)),
                Err(_) => (Response::from_parts(parts, Body::empty()), None),
            }
        } else {
            (response, None)
        };
        let strip = |v: Value| {
            if verdict.omit_managed_fields {
                without_managed_fields(v)
            } else {
                v
            }
        };
        let mut event = event(&verdict, request, &user, &info, stage);
        event["responseStatus"] = json!({"metadata": {}, "code": code});
        // The request body, decoded once: for a create's name and for `requestObject`.
        let needs_body =
            verdict.level >= Level::Request || (info.is_resource_request && info.name.is_none());
        let request_object = needs_body
            .then(|| decode(seen.content_type.as_deref(), &seen.body))
            .flatten();
        if info.is_resource_request {
            event["objectRef"] = object_ref(&info, request_object.as_ref());
        }
        if verdict.level >= Level::Request {
            if let Some(v) = request_object {
                event["requestObject"] = strip(v);
            }
        }
        if let Some(v) = body
            .as_deref()
            .and_then(|b| decode(content_type.as_deref(), b))
        {
            if code >= 400 {
                event["responseStatus"] = status_of(&v, code);
            }
            if verdict.level == Level::RequestResponse {
                event["responseObject"] = strip(v);
            }
        }
        self.write(&event);
        if watch && !verdict.omit_stages.contains(&Stage::ResponseComplete) {
            return self.on_end(response, event);
        }
        response
    }

    /// `response` (a watch's stream) logging `started` again as `ResponseComplete` once the
    /// stream ends or its client goes.
    fn on_end(self: &Arc<Self>, response: Response<Body>, started: Value) -> Response<Body> {
        let ended = Ended {
            audit: Arc::clone(self),
            event: started,
        };
        let (parts, body) = response.into_parts();
        let stream = body.into_data_stream().map(move |chunk| {
            ended.keep();
            chunk
        });
        Response::from_parts(parts, Body::from_stream(stream))
    }
}

/// Writes a watch's `ResponseComplete` event when dropped with its stream.
struct Ended {
    audit: Arc<Audit>,
    event: Value,
}

impl Ended {
    /// Used by the stream that owns it, so that the stream's end is this one's.
    fn keep(&self) {}
}

impl Drop for Ended {
    fn drop(&mut self) {
        self.event["stage"] = json!(format!("{:?}", Stage::ResponseComplete));
        self.event["stageTimestamp"] = json!(micros(chrono::Utc::now()));
        self.audit.write(&self.event);
    }
}

/// The fields every stage's event has.
fn event(
    verdict: &policy::Verdict,
    request: &Request,
    user: &UserInfo,
    info: &RequestInfo,
    stage: Stage,
) -> Value {
    let mut event = json!({
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": format!("{:?}", verdict.level),
        "auditID": request.id,
        "stage": format!("{stage:?}"),
        "requestURI": request.uri,
        "verb": info.verb,
        "user": user,
        "sourceIPs": request.source.map(|ip| vec![ip.to_string()]).unwrap_or_default(),
        "requestReceivedTimestamp": micros(request.received),
        "stageTimestamp": micros(chrono::Utc::now()),
    });
    if let Some(ua) = &request.user_agent {
        event["userAgent"] = json!(ua);
    }
    event
}

/// The event's `objectRef`; a create names its object in its body (`request_object`), as
/// kube-apiserver's event shows it.
fn object_ref(info: &RequestInfo, request_object: Option<&Value>) -> Value {
    let mut object = json!({
        "resource": info.resource,
        "apiVersion": info.version,
    });
    if !info.group.is_empty() {
        object["apiGroup"] = json!(info.group);
    }
    if let Some(ns) = info.namespace.as_ref().filter(|_| info.namespaced_path) {
        object["namespace"] = json!(ns);
    }
    let named = info.name.clone().or_else(|| {
        request_object
            .and_then(|o| o.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(name) = named {
        object["name"] = json!(name);
    }
    if let Some(sub) = &info.subresource {
        object["subresource"] = json!(sub);
    }
    object
}

/// The event's `responseStatus` from a failed request's Status body.
fn status_of(body: &Value, code: u16) -> Value {
    let mut s = json!({"metadata": {}, "code": code});
    for k in ["status", "message", "reason"] {
        if let Some(v) = body.get(k) {
            s[k] = v.clone();
        }
    }
    s
}

/// A body of `content_type` (JSON, YAML, protobuf, the patch types) as JSON; `None` when empty
/// or undecodable.
fn decode(content_type: Option<&str>, body: &[u8]) -> Option<Value> {
    if body.is_empty() {
        return None;
    }
    let format = crate::request::body::BodyFormat::from_content_type(content_type).ok()?;
    crate::request::body::decode_body(format, body).ok()
}

fn without_managed_fields(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(meta) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
        }
    }
    v
}

/// RFC 3339 with microseconds, as kube-apiserver's `MicroTime`.
fn micros(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}
