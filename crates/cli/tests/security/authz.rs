//! Authorization: paths, RBAC escalation, named reads and watches, create authorized as create.
//!
//! Each case acts as a service account holding a token from `kubectl create token` (scoped by
//! the RoleBindings the admin gives it) and speaks raw HTTP through [`Caller`], so the tests see
//! status codes and `Status` objects exactly as the hub sends them.
//!
//! - [`paths`]: a cluster-scoped resource under `namespaces/{ns}/` is a 404, never served.
//! - [`escalation`]: Roles, ClusterRoles and their bindings grant only what the writer holds
//!   (or may `escalate` / `bind`).
//! - [`named`]: a watch or list about one name streams that name only.
//! - [`create`]: an object is created only by a create, at the URL's name and namespace.

mod create;
mod escalation;
mod named;
mod paths;

use http_body_util::BodyExt;
use hyper::{Method, Request};
use kube::client::Body;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{json, Value};

use crate::common::Hub;

/// `application/apply-patch+yaml`: server-side apply (JSON is YAML).
pub(super) const APPLY: &str = "application/apply-patch+yaml";
/// `application/merge-patch+json`.
pub(super) const MERGE: &str = "application/merge-patch+json";
/// `application/json-patch+json`.
pub(super) const JSON_PATCH: &str = "application/json-patch+json";
/// `application/json`.
pub(super) const JSON: &str = "application/json";

/// What the hub answered.
#[derive(Debug)]
pub(super) struct Reply {
    /// The HTTP status code.
    pub code: u16,
    /// The body, parsed (`Null` when it is not JSON).
    pub body: Value,
}

impl Reply {
    /// The `Status` reason (`Forbidden`, `NotFound`, ...), or "" for an object.
    pub fn reason(&self) -> &str {
        self.body["reason"].as_str().unwrap_or("")
    }

    /// The `Status` message, or "".
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }
}

/// Someone calling the hub with one bearer token (the admin's when none is given), over the TLS
/// settings of the hub's admin kubeconfig.
pub(super) struct Caller {
    client: kube::Client,
}

impl Caller {
    /// A caller presenting `token`, or the admin token.
    pub async fn new(hub: &Hub, token: Option<&str>) -> Caller {
        let kc = Kubeconfig::read_from(&hub.kubeconfig).expect("read the admin kubeconfig");
        let mut cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .expect("a client config");
        if let Some(t) = token {
            cfg.auth_info = serde_json::from_value(json!({ "token": t })).expect("auth info");
        }
        Caller {
            client: kube::Client::try_from(cfg).expect("a client"),
        }
    }

    /// Send `method path` with `body` of `content_type`; the reply, whatever its code.
    pub async fn call(&self, method: Method, path: &str, body: Option<(&str, &Value)>) -> Reply {
        let mut req = Request::builder().method(method.clone()).uri(path);
        let bytes = match body {
            Some((content_type, v)) => {
                req = req.header("content-type", content_type);
                serde_json::to_vec(v).expect("JSON")
            }
            None => Vec::new(),
        };
        let req = req.body(Body::from(bytes)).expect("a request");
        let resp = self
            .client
            .send(req)
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let code = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        Reply {
            code,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// GET.
    pub async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, None).await
    }

    /// POST a JSON object.
    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.call(Method::POST, path, Some((JSON, body))).await
    }

    /// PUT a JSON object.
    pub async fn put(&self, path: &str, body: &Value) -> Reply {
        self.call(Method::PUT, path, Some((JSON, body))).await
    }

    /// PATCH with `content_type`.
    pub async fn patch(&self, path: &str, content_type: &str, body: &Value) -> Reply {
        self.call(Method::PATCH, path, Some((content_type, body)))
            .await
    }

    /// Server-side apply `body` at `path` as field manager `authz-test`, taking over fields
    /// others own (`--force-conflicts`), so that only authorization can refuse it.
    pub async fn apply(&self, path: &str, body: &Value) -> Reply {
        let path = format!("{path}?fieldManager=authz-test&force=true");
        self.patch(&path, APPLY, body).await
    }

    /// A watch (`path` carries its query, which should end it with `timeoutSeconds`) read to its
    /// end: each event as (type, object name), or the error reply when it did not start.
    pub async fn watch(&self, path: &str) -> Result<Vec<(String, String)>, Reply> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(path)
            .body(Body::empty())
            .expect("a request");
        let resp = self.client.send(req).await.expect("the watch request");
        let code = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        if code != 200 {
            let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(Reply { code, body });
        }
        let text = String::from_utf8_lossy(&bytes);
        Ok(text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let ev: Value = serde_json::from_str(l).expect("a JSON watch event");
                let name = ev["object"]["metadata"]["name"].as_str().unwrap_or("");
                (
                    ev["type"].as_str().unwrap_or("").to_string(),
                    name.to_string(),
                )
            })
            .collect())
    }
}

/// The names of `list`'s items.
pub(super) fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Service account `sa` in `ns` (created here), bound in `ns` by a RoleBinding named `sa` to
/// `role` (`clusterrole:NAME` or `role:NAME`); returns a token for it.
pub(super) fn account(hub: &Hub, ns: &str, sa: &str, role: &str) -> String {
    hub.ok(&["create", "serviceaccount", sa, "-n", ns]);
    bind(hub, ns, sa, ns, sa, role);
    token(hub, ns, sa)
}

/// A RoleBinding `name` in `ns` of `role` (`clusterrole:NAME` or `role:NAME`) to service account
/// `sa_ns/sa`, created by the admin.
pub(super) fn bind(hub: &Hub, ns: &str, name: &str, sa_ns: &str, sa: &str, role: &str) {
    let (kind, role) = role.split_once(':').expect("clusterrole:NAME or role:NAME");
    let role_flag = format!("--{kind}={role}");
    let subject = format!("--serviceaccount={sa_ns}:{sa}");
    hub.ok(&[
        "create",
        "rolebinding",
        name,
        "-n",
        ns,
        &role_flag,
        &subject,
    ]);
}

/// A fresh token for service account `ns/sa`.
pub(super) fn token(hub: &Hub, ns: &str, sa: &str) -> String {
    hub.ok(&["create", "token", sa, "-n", ns])
        .trim()
        .to_string()
}

/// Apply `manifest` (YAML or JSON) as the admin.
pub(super) fn admin_apply(hub: &Hub, manifest: &str) {
    hub.ok_stdin(&["apply", "-f", "-"], manifest);
}
