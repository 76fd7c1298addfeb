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
//! `Status` objects exactly as the hub sends them.

use std::time::{Duration, Instant};

use futures::StreamExt;
use http_body_util::BodyExt;
use hyper::{Method, Request};
use kube::client::Body;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{json, Value};

use crate::common::Hub;

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const TABLE_V1BETA1: &str = "application/json;as=Table;v=v1beta1;g=meta.k8s.io";
const WATCH_LIST: &str =
    "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";

/// The admin calling the hub with raw requests.
struct Caller {
    client: kube::Client,
}

impl Caller {
    async fn new(hub: &Hub) -> Caller {
        let kc = Kubeconfig::read_from(&hub.kubeconfig).expect("read the admin kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .expect("a client config");
        Caller {
            client: kube::Client::try_from(cfg).expect("a client"),
        }
    }

    async fn send(&self, path: &str, accept: Option<&str>) -> hyper::Response<Body> {
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
    async fn get(&self, path: &str, accept: Option<&str>) -> (u16, Value) {
        self.call(Method::GET, path, accept, None).await
    }

    /// `method path` with a JSON `body`: the code and the body parsed.
    async fn call(
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
    async fn watch(&self, path: &str, accept: Option<&str>) -> Events {
        let resp = self.send(path, accept).await;
        assert_eq!(resp.status().as_u16(), 200, "watch {path}");
        Events {
            body: resp.into_body(),
            buf: Vec::new(),
        }
    }
}

/// The events of an open watch, one JSON line each.
struct Events {
    body: Body,
    buf: Vec<u8>,
}

impl Events {
    /// The next event (panics after 20 s or at the end of the stream).
    async fn next(&mut self) -> Value {
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
    async fn next_change(&mut self) -> Value {
        loop {
            let ev = self.next().await;
            if ev["type"] != "BOOKMARK" {
                return ev;
            }
        }
    }
}

fn items_yaml(kind: &str, ns: &str, names: impl Iterator<Item = String>, labels: &str) -> String {
    let items: Vec<Value> = names
        .map(|n| {
            json!({"apiVersion": "v1", "kind": kind,
                "metadata": {"name": n, "namespace": ns, "labels": {"set": labels}}})
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

fn names_of(list: &Value, field: &str) -> Vec<String> {
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

fn rv_of(v: &Value) -> i64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_list_streams_the_state_then_a_bookmark_then_the_changes() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "wl"]);
    let secrets = (1..=3).map(|i| format!("secret-{i}"));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &items_yaml("Secret", "wl", secrets, "yes"),
    );
    let other = std::iter::once("unlabelled".to_string());
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &items_yaml("Secret", "wl", other, "no"),
    );
    let caller = Caller::new(&hub).await;
    let (_, list) = caller.get("/api/v1/namespaces/wl/secrets", None).await;
    let listed_rv = rv_of(&list);

    let mut expected: Vec<String> = (1..=3).map(|i| format!("secret-{i}")).collect();
    // As client-go's WatchListClient asks: no resourceVersion, then one it has seen; and a
    // plain watch from "now", which kube-apiserver 1.32 makes a watch-list by default.
    for query in [
        WATCH_LIST.to_string(),
        format!("{WATCH_LIST}&resourceVersion={listed_rv}"),
        "watch=true&allowWatchBookmarks=true".to_string(),
    ] {
        let path = format!("/api/v1/namespaces/wl/secrets?{query}&labelSelector=set%3Dyes");
        let mut events = caller.watch(&path, None).await;
        let mut added = Vec::new();
        let bookmark = loop {
            let ev = events.next().await;
            match ev["type"].as_str() {
                Some("ADDED") => added.push(
                    ev["object"]["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ),
                Some("BOOKMARK") => break ev,
                _ => panic!("{query}: unexpected event before the bookmark: {ev}"),
            }
        };
        added.sort();
        assert_eq!(added, expected, "{query}");
        let annotations = &bookmark["object"]["metadata"]["annotations"];
        assert_eq!(
            annotations["k8s.io/initial-events-end"], "true",
            "{bookmark}"
        );
        assert_eq!(bookmark["object"]["kind"], "Secret", "{bookmark}");
        assert!(rv_of(&bookmark["object"]) >= listed_rv, "{bookmark}");

        // Then the changes, after the bookmark's revision.
        let name = format!("late-{}", rv_of(&bookmark["object"]));
        let late = std::iter::once(name.clone());
        hub.ok_stdin(
            &["apply", "-f", "-"],
            &items_yaml("Secret", "wl", late, "yes"),
        );
        let ev = events.next_change().await;
        assert_eq!(ev["type"], "ADDED", "{query}: {ev}");
        assert_eq!(ev["object"]["metadata"]["name"], name.as_str(), "{ev}");
        assert!(rv_of(&ev["object"]) > rv_of(&bookmark["object"]), "{ev}");
        expected.push(name);
        expected.sort();
    }

    // A watch from a revision it has seen is no watch-list: only the changes, no bookmark
    // ending initial events.
    let path = format!("/api/v1/namespaces/wl/secrets?watch=true&allowWatchBookmarks=true&resourceVersion={listed_rv}&labelSelector=set%3Dyes");
    let mut events = caller.watch(&path, None).await;
    let first = events.next_change().await;
    assert!(
        first["object"]["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("late-")),
        "{first}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_list_options_are_checked_and_never_served_as_a_table() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let secrets = "/api/v1/namespaces/default/secrets";
    for (query, message) in [
        (
            "watch=true&sendInitialEvents=true&allowWatchBookmarks=true",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            "sendInitialEvents=true",
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
        (
            "resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
    ] {
        let (code, status) = caller.get(&format!("{secrets}?{query}"), None).await;
        assert_eq!((code, &status["reason"]), (422, &json!("Invalid")), "{query}: {status}");
        assert_eq!(status["message"], message, "{query}");
        assert_eq!(status["details"]["kind"], "ListOptions", "{status}");
    }

    // Only a Table accepted: 406, as kube-apiserver.
    let path = format!("{secrets}?{WATCH_LIST}");
    let (code, status) = caller.get(&path, Some(TABLE)).await;
    assert_eq!(
        (code, &status["reason"]),
        (406, &json!("NotAcceptable")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // A Table or JSON: JSON events.
    hub.ok(&["create", "secret", "generic", "s1", "--from-literal=a=b"]);
    let mut events = caller
        .watch(&path, Some(&format!("{TABLE}, application/json")))
        .await;
    let ev = events.next().await;
    assert_eq!(
        (&ev["type"], &ev["object"]["kind"]),
        (&json!("ADDED"), &json!("Secret")),
        "{ev}"
    );
    // Any other watch may still be a Table (kubectl get -w).
    let (_, list) = caller.get(secrets, None).await;
    let path = format!("{secrets}?watch=true&resourceVersion={}", rv_of(&list));
    let mut events = caller.watch(&path, Some(TABLE)).await;
    hub.ok(&["create", "secret", "generic", "s2", "--from-literal=a=b"]);
    let ev = events.next_change().await;
    assert_eq!(ev["object"]["kind"], "Table", "{ev}");
}

/// 60 ConfigMaps `cm-00..cm-59` in a new namespace `ns`; the names the namespace then holds
/// (in key order: the namespace's own `kube-root-ca.crt` is there too).
async fn sixty_configmaps(hub: &Hub, caller: &Caller, ns: &str) -> Vec<String> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_list_is_one_snapshot_however_it_changes_meanwhile() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let want = sixty_configmaps(&hub, &caller, "chunks").await;
    let total = want.len();
    let base = "/api/v1/namespaces/chunks/configmaps";
    let (mut found, mut token, mut snapshot) = (Vec::new(), None::<String>, None);
    loop {
        let path = match &token {
            Some(t) => format!("{base}?limit=7&continue={t}"),
            None => format!("{base}?limit=7"),
        };
        let (code, page) = caller.get(&path, None).await;
        assert_eq!(code, 200, "{page}");
        let items = names_of(&page, "items");
        assert!(items.len() <= 7, "{page}");
        let rv = page["metadata"]["resourceVersion"].clone();
        assert_eq!(
            snapshot.get_or_insert(rv.clone()),
            &rv,
            "pages of one list, one revision"
        );
        let cont = page["metadata"]["continue"].as_str().map(String::from);
        match &cont {
            Some(_) => {
                let rest = page["metadata"]["remainingItemCount"]
                    .as_u64()
                    .expect("a count");
                assert_eq!(rest as usize + items.len() + found.len(), total, "{page}");
            }
            None => assert!(
                page["metadata"].get("remainingItemCount").is_none(),
                "{page}"
            ),
        }
        if token.is_none() {
            // Changes after the first page are not in this list: one deleted, one created.
            hub.ok(&["delete", "configmap", "cm-40", "-n", "chunks"]);
            hub.ok(&["create", "configmap", "cm-30a", "-n", "chunks"]);
        }
        found.extend(items);
        match cont {
            Some(c) => token = Some(c),
            None => break,
        }
    }
    assert_eq!(found, want);
    // A paged list at a revision seen before is read at exactly that revision, as
    // kube-apiserver's storage reads it: without the changes made since.
    let rv = snapshot
        .as_ref()
        .and_then(Value::as_str)
        .expect("a revision");
    let (_, then) = caller
        .get(&format!("{base}?resourceVersion={rv}&limit=500"), None)
        .await;
    assert_eq!(names_of(&then, "items"), want);
    assert_eq!(then["metadata"]["resourceVersion"], rv);
    // All at once with a limit above the count: no continue.
    let (_, all) = caller
        .get(&format!("{base}?limit={}", total + 1), None)
        .await;
    assert_eq!(names_of(&all, "items").len(), total);
    assert!(all["metadata"].get("continue").is_none(), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_continue_token_is_410_with_a_token_that_goes_on_inconsistently() {
    let hub = Hub::start_with(&["--compaction-interval", "1s"]);
    let caller = Caller::new(&hub).await;
    let total = sixty_configmaps(&hub, &caller, "old").await.len() + 1;
    let base = "/api/v1/namespaces/old/configmaps";
    let (_, first) = caller.get(&format!("{base}?limit=6"), None).await;
    let first_token = first["metadata"]["continue"]
        .as_str()
        .expect("a token")
        .to_string();
    // History moves on past the snapshot (kube-apiserver's compactor writes too).
    hub.ok(&["create", "configmap", "cm-05a", "-n", "old"]);

    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let path = format!("{base}?limit=6&continue={first_token}");
        let (code, body) = caller.get(&path, None).await;
        if code == 410 {
            break body;
        }
        assert_eq!(code, 200, "{body}");
        assert!(Instant::now() < deadline, "the token never expired");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(status["reason"], "Expired", "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "The provided continue parameter is too old to display a consistent list result."
        ),
        "{status}"
    );
    let inconsistent = status["metadata"]["continue"]
        .as_str()
        .expect("a token in the Status");

    let (code, second) = caller
        .get(&format!("{base}?limit=6&continue={inconsistent}"), None)
        .await;
    assert_eq!(code, 200, "{second}");
    assert_ne!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    // It goes on after the last name served, at the latest state (cm-05a is there now).
    let names = names_of(&second, "items");
    assert_eq!(
        names,
        ["cm-05a", "cm-06", "cm-07", "cm-08", "cm-09", "cm-10"]
    );
    let rest = second["metadata"]["remainingItemCount"]
        .as_u64()
        .expect("a count");
    assert_eq!(rest as usize + 12, total, "{second}");
    // The pages after it share its revision.
    let token = second["metadata"]["continue"].as_str().expect("more pages");
    let (_, third) = caller
        .get(&format!("{base}?limit=6&continue={token}"), None)
        .await;
    assert_eq!(
        third["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );
    assert_eq!(names_of(&third, "items")[0], "cm-11");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_come_in_chunks() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let total = sixty_configmaps(&hub, &caller, "tables").await.len();
    let base = "/api/v1/namespaces/tables/configmaps";
    for accept in [TABLE, TABLE_V1BETA1] {
        let (code, page) = caller.get(&format!("{base}?limit=2"), Some(accept)).await;
        assert_eq!((code, &page["kind"]), (200, &json!("Table")), "{page}");
        assert_eq!(names_of(&page, "rows"), ["cm-00", "cm-01"]);
        assert!(rv_of(&page) > 0, "{page}");
        let token = page["metadata"]["continue"]
            .as_str()
            .expect("a continue token");
        // The rest, without a limit, as the upstream spec asks.
        let (code, rest) = caller
            .get(&format!("{base}?continue={token}"), Some(accept))
            .await;
        assert_eq!(code, 200, "{rest}");
        let rows = names_of(&rest, "rows");
        assert_eq!(
            (rows.len(), rows[0].as_str()),
            (total - 2, "cm-02"),
            "{accept}"
        );
        assert!(rest["metadata"].get("continue").is_none(), "{rest}");
        assert_eq!(
            rest["metadata"]["resourceVersion"],
            page["metadata"]["resourceVersion"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_has_no_table_form() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}});
    let (code, status) = caller
        .call(Method::POST, path, Some(TABLE), Some(&review))
        .await;
    assert_eq!(
        (code, &status["reason"]),
        (406, &json!("NotAcceptable")),
        "{status}"
    );
    // Offered JSON as well, the review is answered.
    let accept = format!("{TABLE}, application/json");
    let (code, answer) = caller
        .call(Method::POST, path, Some(&accept), Some(&review))
        .await;
    assert_eq!(
        (code, &answer["status"]["allowed"]),
        (201, &json!(true)),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_that_does_not_parse_is_400_but_a_watch_ends_by_timeout_seconds() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let (code, status) = caller.get("/version?timeout=invalid", None).await;
    assert_eq!(
        (code, &status["reason"]),
        (400, &json!("BadRequest")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        "invalid timeout specified in the request URL - time: invalid duration \"invalid\""
    );
    for ok in [
        "/version?timeout=3m",
        "/version?timeout=0s",
        "/api/v1/namespaces?timeout=10s",
    ] {
        assert_eq!(caller.get(ok, None).await.0, 200, "{ok}");
    }
    // A watch is long-running: `timeout` is not its business; timeoutSeconds ends it.
    let started = Instant::now();
    let path = "/api/v1/namespaces?watch=true&resourceVersion=0&timeout=x&timeoutSeconds=1";
    let (code, _) = caller.get(path, None).await;
    assert_eq!(code, 200);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
