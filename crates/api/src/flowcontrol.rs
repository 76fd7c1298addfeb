//! API Priority and Fairness, the part that decides rather than queues: the FlowSchemas and
//! PriorityLevelConfigurations of flowcontrol.apiserver.k8s.io/v1, kept as kube-apiserver keeps
//! them, and every request classified against them.
//!
//! - [`bootstrap`]: the mandatory objects (`exempt`, `catch-all`) and the suggested ones.
//! - [`defaults`] and [`validation`]: what admission does to these kinds, as in Kubernetes.
//! - [`classify`]: the [`Classifier`], a snapshot of the schemas in matching order.
//! - [`printer`]: their `kubectl get` cells.
//! - `controller`: the configuration loop. It creates missing configuration objects (at start and
//!   every minute; mandatory ones at once when deleted), restores their specs as Kubernetes'
//!   ensurer does, keeps each schema's `Dangling` condition, and swaps in a new [`Classifier`]
//!   whenever the objects change, so classifying a request reads no storage.
//!
//! - [`dispatch`]: seats and fair queuing (`--max-requests-inflight`,
//!   `--max-mutating-requests-inflight`): a request waits in its flow's queue (priority level
//!   and user) and flows take turns, so a flooding user cannot starve the others.
//!
//! Each response carries `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`
//! of what its request matched ([`FlowControl::classify`], [`with_headers`]).

pub mod bootstrap;
pub mod classify;
mod controller;
pub mod defaults;
pub mod dispatch;
pub mod printer;
pub mod validation;

use std::sync::Arc;

use axum::body::Body;
use http::{HeaderValue, Response};
use parking_lot::RwLock;
use serde_json::Value;

use crate::auth::UserInfo;
use crate::request::RequestInfo;
use crate::Api;

pub use classify::{Classifier, Matched};

/// The API group.
pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";
/// The response header naming the matched FlowSchema's uid.
pub const FLOW_SCHEMA_UID_HEADER: &str = "X-Kubernetes-PF-FlowSchema-UID";
/// The response header naming the matched PriorityLevelConfiguration's uid.
pub const PRIORITY_LEVEL_UID_HEADER: &str = "X-Kubernetes-PF-PriorityLevel-UID";

/// The classifier every request reads, swapped whole when the configuration changes, and the
/// seats requests are served in.
pub struct FlowControl {
    current: RwLock<Arc<Classifier>>,
    reads: Arc<dispatch::Pool>,
    writes: Arc<dispatch::Pool>,
}

impl Default for FlowControl {
    /// kube-apiserver's defaults: 400 reads and 200 writes at once.
    fn default() -> Self {
        FlowControl::with_limits(400, 200)
    }
}

impl std::fmt::Debug for FlowControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowControl").finish_non_exhaustive()
    }
}

// === impl FlowControl ===

impl FlowControl {
    /// At most `reads` read-only and `writes` mutating requests served at once (0: no limit).
    pub fn with_limits(reads: usize, writes: usize) -> Self {
        FlowControl {
            current: RwLock::default(),
            reads: dispatch::Pool::new(reads),
            writes: dispatch::Pool::new(writes),
        }
    }

    /// A seat for `user`'s request `info`, which matched `matched` (`None`: a watch or a public
    /// path, served without one); `exempt` requests take none. A 429 when it cannot have one.
    pub async fn seat(
        &self,
        matched: Option<&Matched>,
        user: &UserInfo,
        info: &RequestInfo,
    ) -> Result<Option<dispatch::Seat>, crate::error::ApiError> {
        let Some(m) = matched.filter(|m| &*m.priority_level != "exempt") else {
            return Ok(None);
        };
        let pool = match info.verb.as_str() {
            "create" | "update" | "patch" | "delete" | "deletecollection" => &self.writes,
            _ => &self.reads,
        };
        let flow = (m.priority_level.clone(), user.name.clone());
        pool.acquire(flow).await.map(Some)
    }

    /// What `user`'s request `info` matches. Watches are not classified, as kube-apiserver
    /// leaves long-running requests out of priority and fairness.
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<Matched> {
        if info.verb == "watch" {
            return None;
        }
        self.current.read().classify(user, info).cloned()
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Classifier> {
        self.current.read().clone()
    }

    fn replace(&self, c: Classifier) {
        *self.current.write() = Arc::new(c);
    }
}

/// Start the configuration loop.
pub fn start(api: &Arc<Api>) {
    tokio::spawn(controller::run(api.clone()));
}

/// What a request to a public path (`/healthz`, `/version`) is classified as: the hub answers
/// these before authentication, so the sender is who its credential (and any impersonation it
/// may do) says when it has a good one, and the anonymous user otherwise (as kube-apiserver,
/// which authenticates first, sees it).
pub async fn classify_public(
    api: &Api,
    headers: http::HeaderMap,
    method: &http::Method,
    path: &str,
) -> Option<Matched> {
    let authorization = headers.get(http::header::AUTHORIZATION);
    let user = match authorization {
        Some(_) => match api.access.authenticate(&api.cache, authorization).await {
            Ok(a) => {
                let impersonated = api.access.impersonate(&api.cache, a.user.clone(), &headers);
                impersonated.unwrap_or(a.user)
            }
            Err(_) => UserInfo::anonymous(),
        },
        None => UserInfo::anonymous(),
    };
    let info = RequestInfo::parse(method, path, false);
    api.flowcontrol.classify(&user, &info)
}

/// `resp` with the headers naming what its request matched.
pub fn with_headers(mut resp: Response<Body>, matched: Option<&Matched>) -> Response<Body> {
    let Some(m) = matched else {
        return resp;
    };
    for (name, value) in [
        (FLOW_SCHEMA_UID_HEADER, &m.flow_schema_uid),
        (PRIORITY_LEVEL_UID_HEADER, &m.priority_level_uid),
    ] {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(name, v);
        }
    }
    resp
}

/// The server's concurrency limit the nominal seats are shares of (kube-apiserver's default
/// `--max-requests-inflight` 400 plus `--max-mutating-requests-inflight` 200).
const SERVER_CONCURRENCY_LIMIT: i64 = 600;

/// `metrics` (Prometheus text) with `apiserver_flowcontrol_nominal_limit_seats` per priority
/// level added before its end, as kube-apiserver reports it: the server's concurrency limit
/// shared out by nominal concurrency shares, rounded up.
pub fn with_metrics(api: &Api, metrics: String) -> String {
    let snapshot = api.flowcontrol.snapshot();
    let levels = snapshot.levels();
    if levels.is_empty() {
        return metrics;
    }
    let mut lines = String::from(
        "# HELP apiserver_flowcontrol_nominal_limit_seats Nominal number of execution seats configured for each priority level\n\
         # TYPE apiserver_flowcontrol_nominal_limit_seats gauge\n",
    );
    for (name, seats) in nominal_seats(levels) {
        lines.push_str(&format!(
            "apiserver_flowcontrol_nominal_limit_seats{{priority_level={name:?}}} {seats}\n"
        ));
    }
    match metrics.rfind("# EOF") {
        Some(at) => format!("{}{lines}{}", &metrics[..at], &metrics[at..]),
        None => metrics + &lines,
    }
}

/// Each level's share of [`SERVER_CONCURRENCY_LIMIT`] by nominal concurrency shares, rounded up.
fn nominal_seats(levels: &[(String, Option<i32>)]) -> Vec<(&str, i64)> {
    let total: i64 = levels.iter().map(|(_, s)| i64::from(s.unwrap_or(0))).sum();
    levels
        .iter()
        .map(|(name, shares)| {
            let shares = i64::from(shares.unwrap_or(0));
            let seats = match total {
                0 => 0,
                t => (SERVER_CONCURRENCY_LIMIT * shares + t - 1) / t,
            };
            (name.as_str(), seats)
        })
        .collect()
}

/// Do two specs say the same, as Kubernetes' semantic equality sees decoded objects: a field
/// left out, null, false, zero-length or empty is the same as absent.
pub fn specs_equal(a: &Value, b: &Value) -> bool {
    normalized(a) == normalized(b)
}

fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), normalized(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests;
