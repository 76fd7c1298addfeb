use super::*;

#[tokio::test]
async fn an_oversized_body_is_refused_in_kube_apiservers_words() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let body = vec![b' '; crate::request::body::MAX_BODY + 1];
    let req = Request::post("/api/v1/namespaces/default/configmaps")
        .header(http::header::AUTHORIZATION, "Bearer test")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    let resp = handle(api, req).await;
    assert_eq!(resp.status(), 413);
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let status: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert_eq!(status["code"], 413);
    assert_eq!(
        status["message"],
        "Request entity too large: limit is 3145728"
    );
}

/// One request through the handler, as the admin; the status code and body.
async fn send(
    api: &Arc<Api>,
    method: &str,
    path: &str,
    fence: Option<&str>,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::AUTHORIZATION, "Bearer test")
        .header(http::header::CONTENT_TYPE, "application/json");
    if let Some(f) = fence {
        req = req.header(crate::fence::HEADER, f);
    }
    let req = req.body(Body::from(body.to_string())).unwrap();
    let resp = handle(api.clone(), req).await;
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or_default())
}

#[tokio::test]
async fn a_write_under_a_lease_the_writer_no_longer_holds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let ns = serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "flotilla-system"}});
    let (code, _) = send(&api, "POST", "/api/v1/namespaces", None, ns).await;
    assert!(code == 201 || code == 409, "namespace: {code}");
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let lease = serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "flotilla-shard-0", "namespace": "flotilla-system"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 10, "renewTime": now}});
    let leases = "/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases";
    // Leases themselves are never fenced (that is how they are taken over).
    let (code, _) = send(&api, "POST", leases, Some("flotilla-shard-0=b"), lease).await;
    assert_eq!(code, 201);
    let cm = |name: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}})
    };
    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, _) = send(&api, "POST", cms, Some("flotilla-shard-0=a"), cm("by-a")).await;
    assert_eq!(code, 201, "the holder writes");
    let (code, status) = send(&api, "POST", cms, Some("flotilla-shard-0=b"), cm("by-b")).await;
    assert_eq!(code, 409, "{status}");
    assert_eq!(status["reason"], "Conflict");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("\"a\" holds it"),
        "{status}"
    );
    let (code, _) = send(&api, "POST", cms, Some("flotilla-shard-9=a"), cm("by-a-9")).await;
    assert_eq!(code, 409, "a lease that does not exist fences too");
    let (code, _) = send(
        &api,
        "GET",
        &format!("{cms}/by-b"),
        None,
        serde_json::json!(null),
    )
    .await;
    assert_eq!(code, 404, "nothing of the refused write is stored");
    let (code, _) = send(&api, "POST", cms, Some("no-holder"), cm("bad")).await;
    assert_eq!(code, 400, "a malformed fence");
}

/// A watcher that reads nothing while its namespace's feed (a few dozen slots) runs far past
/// it still gets every change afterwards, once each and in order: it catches up from the
/// history rather than ending.
#[tokio::test]
async fn a_watch_that_falls_behind_its_feed_catches_up_without_a_gap() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let req = Request::get(format!("{cms}?watch=true&resourceVersion=0"))
        .header(http::header::AUTHORIZATION, "Bearer test")
        .body(Body::empty())
        .unwrap();
    let resp = handle(api.clone(), req).await;
    assert_eq!(resp.status(), 200);
    let count = crate::cache::NARROW_CAPACITY * 5;
    for i in 0..count {
        let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:04}"), "namespace": "default"}});
        let (code, _) = send(&api, "POST", cms, None, cm).await;
        assert_eq!(code, 201);
    }
    let mut body = resp.into_body().into_data_stream();
    let mut buf = Vec::new();
    let mut names = Vec::new();
    while names.len() < count {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
            .await
            .expect("the watch goes on")
            .expect("the watch has not ended")
            .unwrap();
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            let ev: serde_json::Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(ev["type"], "ADDED", "{ev}");
            let name = ev["object"]["metadata"]["name"].as_str().unwrap();
            // The namespace's own ConfigMaps (kube-root-ca.crt) come first.
            if name.starts_with("cm-") {
                names.push(name.to_owned());
            }
        }
    }
    let expected: Vec<String> = (0..count).map(|i| format!("cm-{i:04}")).collect();
    assert_eq!(names, expected);
}

#[tokio::test]
async fn a_bookmark_on_a_quiet_watch_carries_the_hubs_newest_revision() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, list) = send(&api, "GET", cms, None, serde_json::Value::Null).await;
    assert_eq!(code, 200);
    let start = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let req = Request::get(format!(
        "{cms}?watch=true&allowWatchBookmarks=true&resourceVersion={start}"
    ))
    .header(http::header::AUTHORIZATION, "Bearer test")
    .body(Body::empty())
    .unwrap();
    let resp = handle(api.clone(), req).await;
    assert_eq!(resp.status(), 200);
    // Changes elsewhere: nothing this watch shows, but the hub moves on.
    let ns = serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "elsewhere"}});
    let (code, created) = send(&api, "POST", "/api/v1/namespaces", None, ns).await;
    assert_eq!(code, 201);
    let moved: i64 = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let mut body = resp.into_body().into_data_stream();
    let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
        .await
        .expect("a bookmark within the interval")
        .expect("the watch has not ended")
        .unwrap();
    let ev: serde_json::Value = serde_json::from_slice(&chunk).unwrap();
    assert_eq!(ev["type"], "BOOKMARK", "{ev}");
    let rv: i64 = ev["object"]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // A client re-watching from it resumes after the change elsewhere, not from when it
    // began watching (which the store's event log would have to replay).
    assert!(
        rv >= moved,
        "bookmark at {rv}, the hub at {moved} (watch began at {start})"
    );
}

/// A client that asks (flotilla's controllers and agents) gets LISTs and watch events without
/// `metadata.managedFields`; GETs, and every other client, get the whole object.
#[tokio::test]
async fn lists_and_watches_leave_out_managed_fields_for_a_client_that_asks() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let get = |uri: String, lean: bool| {
        let mut req = Request::get(uri).header(http::header::AUTHORIZATION, "Bearer test");
        if lean {
            req = req.header(flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER, "true");
        }
        handle(api.clone(), req.body(Body::empty()).unwrap())
    };
    let watch = get(format!("{cms}?watch=true&resourceVersion=0"), true).await;
    assert_eq!(watch.status(), 200);
    let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "lean", "namespace": "default", "labels": {"a": "b"}},
        "data": {"k": "v"}});
    let (code, created) = send(&api, "POST", cms, None, cm).await;
    assert_eq!(code, 201);
    assert!(created["metadata"]["managedFields"].is_array(), "{created}");
    let mut without = created.clone();
    without["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");

    let mut body = watch.into_body().into_data_stream();
    let mut buf = Vec::new();
    let seen = loop {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
            .await
            .expect("the event within 10 s")
            .expect("the watch has not ended")
            .unwrap();
        buf.extend_from_slice(&chunk);
        let lines: Vec<serde_json::Value> = buf
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect();
        if let Some(ev) = lines
            .into_iter()
            .find(|ev| ev["object"]["metadata"]["name"] == "lean")
        {
            break ev;
        }
    };
    assert_eq!(seen["object"], without, "watched");

    let body = |resp: Response<Body>| async move {
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()
    };
    let named = |list: &serde_json::Value| {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["metadata"]["name"] == "lean")
            .cloned()
            .unwrap()
    };
    let lean_list = body(get(format!("{cms}?labelSelector=a"), true).await).await;
    assert_eq!(named(&lean_list), without, "listed with the header");
    let whole_list = body(get(format!("{cms}?labelSelector=a"), false).await).await;
    assert_eq!(named(&whole_list), created, "listed without it");
    let got = body(get(format!("{cms}/lean"), true).await).await;
    assert_eq!(got, created, "a GET is whole");
    // As metadata only (kube-rs' metadata watchers, client-go's metadata informers).
    let req = Request::get(format!("{cms}?labelSelector=a"))
        .header(http::header::AUTHORIZATION, "Bearer test")
        .header(
            http::header::ACCEPT,
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )
        .header(flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER, "true");
    let metas = body(handle(api.clone(), req.body(Body::empty()).unwrap()).await).await;
    assert_eq!(metas["kind"], "PartialObjectMetadataList", "{metas}");
    assert_eq!(named(&metas)["metadata"], without["metadata"], "{metas}");
}
