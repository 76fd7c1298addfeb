//! Conformance: lists and watches as the upstream suite reads them (apimachinery/watchlist.go,
//! chunking.go, table_conversion.go).
//!
//! - A watch-list streams the state as ADDED events, ends it with a BOOKMARK annotated
//!   `k8s.io/initial-events-end`, then the changes; its options are checked with
//!   kube-apiserver's 422s, and it is never a Table (406 when nothing else is accepted).
//! - A list paged with `limit`/`continue` is one snapshot with `remainingItemCount`; once its
//!   revision is compacted, a continue token is 410 Expired with a token to go on from.
//! - Tables come in pages too.
//!
//! Requests go out raw through [`Caller`], so the tests see codes, headers' effects and
//! `Status` objects exactly as the hub sends them. [`watch`] holds the watch tests, [`chunks`]
//! the paged lists and Tables.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::{Method, Request};
use kube::client::Body;
use serde_json::{json, Value};

use crate::common::Hub;
use crate::support::admin_client;

mod chunks;
mod watch;

pub(super) const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
pub(super) const TABLE_V1BETA1: &str = "application/json;as=Table;v=v1beta1;g=meta.k8s.io";
pub(super) const WATCH_LIST: &str =
    "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";

/// The admin calling the hub with raw requests.
pub(super) struct Caller {
    client: kube::Client,
}

impl Caller {
    pub(super) async fn new(hub: &Hub) -> Caller {
        Caller {
            client: admin_client(hub).await,
        }
    }

    pub(super) async fn send(&self, path: &str, accept: Option<&str>) -> hyper::Response<Body> {
        self.send_body(Method::GET, path, accept, None).await
    }

    async fn send_body(
        &self,
        method: Method,
        path: &str,
        accept: Option<&str>,
        body: Option<&Value>,
    ) -> hyper::Response<Body> {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(a) = accept {
            req = req.header("accept", a);
        }
        let req = match body {
            Some(b) => req
                .header("content-type", "application/json")
                .body(Body::from(b.to_string().into_bytes())),
            None => req.body(Body::empty()),
        }
        .expect("a request");
        self.client
            .send(req)
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// GET `path`: the code and the body parsed.
    pub(super) async fn get(&self, path: &str, accept: Option<&str>) -> (u16, Value) {
        self.call(Method::GET, path, accept, None).await
    }

    /// `method path` with a JSON `body`: the code and the body parsed.
    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        accept: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let resp = self.send_body(method, path, accept, body).await;
        let code = resp.status().as_u16();
        let bytes = resp.into_body().collect().await.expect("a body").to_bytes();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Open a watch (200 required) and hand back its events as they come.
    pub(super) async fn watch(&self, path: &str, accept: Option<&str>) -> Events {
        let resp = self.send(path, accept).await;
        assert_eq!(resp.status().as_u16(), 200, "watch {path}");
        Events {
            body: resp.into_body(),
            buf: Vec::new(),
        }
    }
}

/// The events of an open watch, one JSON line each.
pub(super) struct Events {
    body: Body,
    buf: Vec<u8>,
}

impl Events {
    /// The next event (panics after 20 s or at the end of the stream).
    pub(super) async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return serde_json::from_slice(&line).expect("a JSON event");
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .expect("an event within 20s")
                .expect("the watch ended early")
                .expect("a readable watch");
            if let Ok(data) = frame.into_data() {
                self.buf.extend_from_slice(&data);
            }
        }
    }

    /// The next event that is not a periodic (unannotated) bookmark.
    pub(super) async fn next_change(&mut self) -> Value {
        loop {
            let ev = self.next().await;
            if ev["type"] != "BOOKMARK" {
                return ev;
            }
        }
    }
}

pub(super) fn items_yaml(
    kind: &str,
    ns: &str,
    names: impl Iterator<Item = String>,
    labels: &str,
) -> String {
    let items: Vec<Value> = names
        .map(|n| {
            json!({"apiVersion": "v1", "kind": kind,
                "metadata": {"name": n, "namespace": ns, "labels": {"set": labels}}})
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

pub(super) fn names_of(list: &Value, field: &str) -> Vec<String> {
    list[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field} in {list}"))
        .iter()
        .map(|o| match field {
            "rows" => o["cells"][0].as_str().unwrap_or_default().to_string(),
            _ => o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        })
        .collect()
}

pub(super) fn rv_of(v: &Value) -> i64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {v}"))
}

/// 60 ConfigMaps `cm-00..cm-59` in a new namespace `ns`; the names the namespace then holds
/// (in key order: the namespace's own `kube-root-ca.crt` is there too).
pub(super) async fn sixty_configmaps(hub: &Hub, caller: &Caller, ns: &str) -> Vec<String> {
    hub.ok(&["create", "namespace", ns]);
    let names = (0..60).map(|i| format!("cm-{i:02}"));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &items_yaml("ConfigMap", ns, names, "yes"),
    );
    let (_, all) = caller
        .get(&format!("/api/v1/namespaces/{ns}/configmaps"), None)
        .await;
    let names = names_of(&all, "items");
    assert_eq!(
        names.iter().filter(|n| n.starts_with("cm-")).count(),
        60,
        "{all}"
    );
    names
}
