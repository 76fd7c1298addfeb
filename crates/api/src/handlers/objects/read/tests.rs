use super::*;
use base64::Engine;

#[test]
fn continue_tokens_are_url_safe_and_round_trip() {
    // A start key whose JSON encodes to '+', '/' and padding in standard base64.
    let start = "/registry/core/configmaps/ns/\u{3fff}>?~~~";
    let tok = encode_continue(12, start);
    assert!(
        tok.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{tok}"
    );
    let t = decode_continue(&tok).unwrap();
    assert_eq!((t.rv, t.start.as_str()), (12, start));
    let old = base64::engine::general_purpose::STANDARD.encode(
        serde_json::to_vec(&ContinueToken {
            v: "meta.k8s.io/v1".into(),
            rv: 3,
            start: start.into(),
        })
        .unwrap(),
    );
    assert!(old.contains(['+', '/', '=']), "{old}");
    assert_eq!(decode_continue(&old).unwrap().rv, 3);
    assert_eq!(
        decode_continue("garbage!!").err().map(|e| e.code),
        Some(400)
    );
}

fn get_ctx(path: &str, query: Option<&str>) -> Ctx {
    Ctx {
        info: crate::request::RequestInfo::parse(&http::Method::GET, path, false),
        query: crate::request::Query::parse(query).unwrap(),
        want: Want::Object,
        accept: None,
        content_type: None,
        user_agent: None,
        omit_managed_fields: false,
        user: Default::default(),
        credential: Default::default(),
        body: Bytes::new(),
    }
}

#[tokio::test]
async fn get_reads_its_own_writes_unless_any_version_will_do() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let res = api
        .registry
        .snapshot()
        .get("", "v1", "configmaps")
        .cloned()
        .unwrap();
    let path = "/api/v1/namespaces/default/configmaps/";
    for i in 0..20 {
        let name = format!("c{i}");
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}});
        // Straight into the store: the cache learns of it only through its event stream.
        let rec = api
            .store
            .create(
                &res.key(Some("default"), &name),
                crate::objects::render(obj),
            )
            .await
            .unwrap();
        let r = get(&api, &get_ctx(&format!("{path}{name}"), None), &res).await;
        assert_eq!(
            r.map(|r| r.status()).ok(),
            Some(http::StatusCode::OK),
            "{name}"
        );
        // At least as fresh as a given resourceVersion.
        let q = format!("resourceVersion={}", rec.mod_revision);
        let r = get(&api, &get_ctx(&format!("{path}{name}"), Some(&q)), &res).await;
        assert_eq!(
            r.map(|r| r.status()).ok(),
            Some(http::StatusCode::OK),
            "{name}"
        );
    }
    // "0": whatever the cache has; a name never written is simply not found.
    let r = get(
        &api,
        &get_ctx(&format!("{path}none"), Some("resourceVersion=0")),
        &res,
    )
    .await;
    assert_eq!(r.err().map(|e| e.code), Some(404));
    let r = get(
        &api,
        &get_ctx(&format!("{path}c0"), Some("resourceVersion=x")),
        &res,
    )
    .await;
    assert_eq!(r.err().map(|e| e.code), Some(400));
}

async fn body(r: Response<Body>) -> Value {
    use http_body_util::BodyExt;
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn unfiltered_pages_say_how_many_items_remain() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let res = api
        .registry
        .snapshot()
        .get("", "v1", "configmaps")
        .cloned()
        .unwrap();
    for i in 0..5 {
        let name = format!("c{i}");
        let labels = if i % 2 == 0 {
            json!({"even": "y"})
        } else {
            json!({})
        };
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": labels}});
        api.store
            .create(
                &res.key(Some("default"), &name),
                crate::objects::render(obj),
            )
            .await
            .unwrap();
    }
    let path = "/api/v1/namespaces/default/configmaps";
    let page = |q: String| {
        let api = api.clone();
        let res = res.clone();
        async move {
            let r = list(&api, &get_ctx(path, Some(&q)), &res).await.unwrap();
            body(r).await
        }
    };
    // From the cache, then continue pages from the store.
    let first = page("limit=2".into()).await;
    assert_eq!(first["metadata"]["remainingItemCount"], 3, "{first}");
    let cont = first["metadata"]["continue"].as_str().unwrap().to_string();
    let second = page(format!("limit=2&continue={cont}")).await;
    assert_eq!(second["items"][0]["metadata"]["name"], "c2");
    assert_eq!(second["metadata"]["remainingItemCount"], 1, "{second}");
    let cont = second["metadata"]["continue"].as_str().unwrap().to_string();
    let last = page(format!("limit=2&continue={cont}")).await;
    assert_eq!(last["items"].as_array().map(Vec::len), Some(1));
    assert!(
        last["metadata"].get("remainingItemCount").is_none(),
        "{last}"
    );
    assert!(last["metadata"].get("continue").is_none(), "{last}");
    // Unpaged, or all on one page: nothing remains, no count.
    for q in ["limit=5", "limit=0"] {
        let all = page(q.into()).await;
        assert!(
            all["metadata"].get("remainingItemCount").is_none(),
            "{q}: {all}"
        );
    }
    // A selector filters: kube-apiserver gives no count.
    let selected = page("limit=1&labelSelector=even%3Dy".into()).await;
    assert!(selected["metadata"]["continue"].is_string(), "{selected}");
    assert!(
        selected["metadata"].get("remainingItemCount").is_none(),
        "{selected}"
    );
}

/// `n` ConfigMaps `c00..` written straight into the store; the cache is synced after.
async fn configmaps(api: &Arc<Api>, from: usize, n: usize) -> Arc<ResourceInfo> {
    let res = api
        .registry
        .snapshot()
        .get("", "v1", "configmaps")
        .cloned()
        .unwrap();
    for i in from..from + n {
        let name = format!("c{i:02}");
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}});
        api.store
            .create(
                &res.key(Some("default"), &name),
                crate::objects::render(obj),
            )
            .await
            .unwrap();
    }
    api.cache.sync().await.unwrap();
    res
}

fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn an_expired_continue_token_is_gone_with_a_token_to_go_on_inconsistently() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let res = configmaps(&api, 0, 6).await;
    let path = "/api/v1/namespaces/default/configmaps";
    let list_at = |q: String| {
        let (api, res) = (api.clone(), res.clone());
        async move { list(&api, &get_ctx(path, Some(&q)), &res).await }
    };
    let first = body(list_at("limit=2".into()).await.unwrap()).await;
    let first_rv = first["metadata"]["resourceVersion"].clone();
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();

    // Two more objects after the snapshot, then the snapshot's revision is compacted away.
    configmaps(&api, 6, 2).await;
    api.store.compact(api.store.revision()).await.unwrap();

    let r = list_at(format!("limit=2&continue={token}")).await.unwrap();
    assert_eq!(r.status(), http::StatusCode::GONE);
    let status = body(r).await;
    assert_eq!(status["reason"], "Expired", "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("The provided continue parameter is too old"),
        "{status}"
    );
    let inconsistent = status["metadata"]["continue"].as_str().unwrap().to_string();

    // The rest at the latest revision: the objects written since show up.
    let second = body(
        list_at(format!("limit=2&continue={inconsistent}"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(names(&second), ["c02", "c03"]);
    assert_ne!(second["metadata"]["resourceVersion"], first_rv);
    assert_eq!(second["metadata"]["remainingItemCount"], 4, "{second}");
    // ... and its own pages agree with each other again.
    let token = second["metadata"]["continue"].as_str().unwrap().to_string();
    let rest = body(list_at(format!("continue={token}")).await.unwrap()).await;
    assert_eq!(names(&rest), ["c04", "c05", "c06", "c07"]);
    assert_eq!(
        rest["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );

    // A list at exactly the compacted revision is gone too, as kube-apiserver words it.
    let rv = first_rv.as_str().unwrap();
    let e = list_at(format!("resourceVersion={rv}&resourceVersionMatch=Exact"))
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason), (410, "Expired"));
    assert_eq!(
        e.message,
        "The resourceVersion for the provided list is too old."
    );
}

#[tokio::test]
async fn a_limited_list_at_a_revision_is_read_at_exactly_that_revision() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let res = configmaps(&api, 0, 3).await;
    let rv = api.cache.revision();
    configmaps(&api, 3, 2).await;
    let path = "/api/v1/namespaces/default/configmaps";
    let page = |q: String| {
        let (api, res) = (api.clone(), res.clone());
        async move { list(&api, &get_ctx(path, Some(&q)), &res).await }
    };
    // With a limit and no match: the page at that revision (kube-apiserver's storage).
    let p = body(
        page(format!("resourceVersion={rv}&limit=10"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(names(&p), ["c00", "c01", "c02"]);
    assert_eq!(p["metadata"]["resourceVersion"], rv.to_string());
    // Without a limit, or NotOlderThan: at least that fresh, so the latest.
    for q in [
        format!("resourceVersion={rv}"),
        format!("resourceVersion={rv}&resourceVersionMatch=NotOlderThan&limit=10"),
    ] {
        let p = body(page(q.clone()).await.unwrap()).await;
        assert_eq!(names(&p).len(), 5, "{q}");
    }
    // A continue token already names its revision.
    let first = body(page("limit=1".into()).await.unwrap()).await;
    let token = first["metadata"]["continue"].as_str().unwrap();
    let e = page(format!("continue={token}&resourceVersion={rv}"))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            400,
            "specifying resource version is not allowed when using continue"
        )
    );
}
