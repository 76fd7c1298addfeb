//! Watch-lists (apimachinery/watchlist.go) and how a watch ends (request_timeout.go).

use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use super::{items_yaml, rv_of, Caller, TABLE, WATCH_LIST};
use crate::common::Hub;

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
        // The empty list the events make up, as client-go's WatchList builds its list from.
        let blueprint = annotations["kubernetes.io/initial-events-list-blueprint"]
            .as_str()
            .unwrap_or_else(|| panic!("no list blueprint: {bookmark}"));
        let blueprint = base64::engine::general_purpose::STANDARD
            .decode(blueprint)
            .expect("base64");
        let blueprint: Value = serde_json::from_slice(&blueprint).expect("a JSON list");
        assert_eq!(blueprint["kind"], "SecretList", "{blueprint}");
        assert_eq!(blueprint["apiVersion"], "v1", "{blueprint}");

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
