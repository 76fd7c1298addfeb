//! Conformance: writes and the small request rules, as the upstream suite checks them.
//!
//! - A write to `/status` keeps the metadata the client sent (an annotation set with the
//!   status), as kube-apiserver's status strategies do for Namespaces and Services
//!   (namespace.go "should apply changes to a namespace status", service.go "should complete a
//!   service status lifecycle"); a custom resource's `/status` changes its status alone.
//! - Field validation (field_validation.go): duplicate and unknown fields reported together in
//!   kube-apiserver's words, refused (Strict, 400), warned about (Warn) or dropped (Ignore).
//! - `?timeout=` that does not parse is a 400; `/healthz?verbose` lists named checks.
//!
//! Requests go out raw through [`Caller`], so the tests see codes, `Warning` headers and
//! `Status` objects exactly as the hub sends them, and bodies exactly as written (a duplicate
//! key survives no JSON library).

use http_body_util::BodyExt;
use hyper::{Method, Request};
use kube::client::Body;
use serde_json::{json, Value};

use crate::common::Hub;
use crate::support::admin_client;

/// What the hub answered.
struct Reply {
    code: u16,
    warnings: Vec<String>,
    text: String,
    body: Value,
}

impl Reply {
    fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }
}

/// The admin calling the hub with raw requests.
struct Caller {
    client: kube::Client,
}

impl Caller {
    async fn new(hub: &Hub) -> Caller {
        Caller {
            client: admin_client(hub).await,
        }
    }

    /// Send `body` as it is, with `content_type`.
    async fn call(&self, method: Method, path: &str, content_type: &str, body: &str) -> Reply {
        let req = Request::builder()
            .method(method.clone())
            .uri(path)
            .header("content-type", content_type)
            .body(Body::from(body.as_bytes().to_vec()))
            .expect("a request");
        let resp = self
            .client
            .send(req)
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let code = resp.status().as_u16();
        let warnings = resp
            .headers()
            .get_all("warning")
            .iter()
            .map(|v| v.to_str().unwrap_or_default().to_string())
            .collect();
        let bytes = resp.into_body().collect().await.expect("a body").to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Reply {
            code,
            warnings,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            text,
        }
    }

    async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, "application/json", "").await
    }
}

/// The stored object at `path`.
async fn stored(c: &Caller, path: &str) -> Value {
    let r = c.get(path).await;
    assert_eq!(r.code, 200, "GET {path}: {}", r.text);
    r.body
}

// === status subresource writes ===

#[tokio::test]
async fn a_status_patch_keeps_the_annotation_it_sets_on_a_namespace_and_a_service() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "st"]);
    hub.ok(&[
        "create",
        "service",
        "clusterip",
        "web",
        "--tcp=80:8080",
        "-n",
        "st",
    ]);
    let c = Caller::new(&hub).await;

    // namespace.go: a merge patch to /status with an annotation and a condition.
    let patch = json!({
        "metadata": {"annotations": {"e2e-patched-ns-status": "st"}},
        "status": {"conditions": [{"type": "StatusPatch", "status": "True", "reason": "E2E",
                                   "message": "Patched by an e2e test"}]}
    });
    let r = c
        .call(
            Method::PATCH,
            "/api/v1/namespaces/st/status",
            "application/merge-patch+json",
            &patch.to_string(),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.text);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        r.body["metadata"]["annotations"]["e2e-patched-ns-status"],
        "st"
    );
    assert_eq!(r.body["status"]["conditions"][0]["reason"], "E2E");
    let ns = stored(&c, "/api/v1/namespaces/st").await;
    assert_eq!(ns["metadata"]["annotations"]["e2e-patched-ns-status"], "st");
    assert_eq!(
        ns["status"]["phase"], "Active",
        "the rest of the status stays"
    );

    // service.go: the load balancer status and an annotation, in one /status patch; a spec
    // change sent to /status is ignored.
    let patch = json!({
        "metadata": {"annotations": {"patchedstatus": "true"}},
        "spec": {"ports": [{"port": 81, "targetPort": 8080, "protocol": "TCP"}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.1"}]}}
    });
    let path = "/api/v1/namespaces/st/services/web/status";
    let r = c
        .call(
            Method::PATCH,
            path,
            "application/merge-patch+json",
            &patch.to_string(),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.text);
    let svc = stored(&c, "/api/v1/namespaces/st/services/web").await;
    assert_eq!(svc["metadata"]["annotations"]["patchedstatus"], "true");
    assert_eq!(
        svc["status"]["loadBalancer"]["ingress"][0]["ip"],
        "203.0.113.1"
    );
    assert_eq!(
        svc["spec"]["ports"][0]["port"], 80,
        "/status leaves the spec alone"
    );

    // A PUT to /status keeps the annotation the object carries and adds a condition.
    let mut put = svc.clone();
    put["status"]["conditions"] = json!([{"type": "StatusUpdate", "status": "True",
        "reason": "E2E", "message": "Set from e2e test",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
    put["metadata"]["labels"] = json!({"updated": "by-status"});
    let r = c
        .call(Method::PUT, path, "application/json", &put.to_string())
        .await;
    assert_eq!(r.code, 200, "{}", r.text);
    let svc = stored(&c, "/api/v1/namespaces/st/services/web").await;
    assert_eq!(svc["status"]["conditions"][0]["type"], "StatusUpdate");
    assert_eq!(svc["metadata"]["annotations"]["patchedstatus"], "true");
    assert_eq!(svc["metadata"]["labels"]["updated"], "by-status");
}

#[tokio::test]
async fn a_custom_resources_status_patch_changes_its_status_alone() {
    let hub = Hub::start();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.ex.com"},
        "spec": {"group": "ex.com", "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    hub.ok_stdin(&["create", "-f", "-"], &crd.to_string());
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.ex.com",
        "--timeout=30s",
    ]);
    let w = json!({"apiVersion": "ex.com/v1", "kind": "Widget",
                   "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}});
    hub.ok_stdin(&["create", "-f", "-"], &w.to_string());
    let c = Caller::new(&hub).await;
    let patch = json!({"metadata": {"annotations": {"a": "b"}}, "status": {"ready": true}});
    let r = c
        .call(
            Method::PATCH,
            "/apis/ex.com/v1/namespaces/default/widgets/w/status",
            "application/merge-patch+json",
            &patch.to_string(),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.text);
    let got = stored(&c, "/apis/ex.com/v1/namespaces/default/widgets/w").await;
    assert_eq!(got["status"]["ready"], true);
    assert!(
        got["metadata"].get("annotations").is_none(),
        "a custom resource's /status keeps the stored metadata, as apiextensions-apiserver: {got}"
    );
}

// === field validation ===

/// field_validation.go's Deployment: an unknown field, then `replicas` twice.
const DUP_DEPLOYMENT: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "my-dep", "labels": {"app": "nginx"}},
  "spec": {"unknownField": "foo", "replicas": 2, "replicas": 3,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}}"#;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[tokio::test]
async fn duplicate_and_unknown_fields_are_refused_warned_or_dropped_as_asked() {
    let hub = Hub::start();
    let c = Caller::new(&hub).await;

    // Strict: 400, both faults in one message, in the body's order; nothing stored.
    let r = c
        .call(
            Method::POST,
            &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
            "application/json",
            DUP_DEPLOYMENT,
        )
        .await;
    assert_eq!(
        (r.code, r.body["reason"].as_str()),
        (400, Some("BadRequest")),
        "{}",
        r.text
    );
    assert_eq!(
        r.message(),
        r#"strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas""#
    );
    assert_eq!(c.get(&format!("{DEPLOYMENTS}/my-dep")).await.code, 404);

    // Warn (the default): created, the last value kept, one Warning header per fault.
    let r = c
        .call(
            Method::POST,
            DEPLOYMENTS,
            "application/json",
            DUP_DEPLOYMENT,
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.text);
    assert_eq!(
        r.warnings,
        vec![
            r#"299 - "unknown field \"spec.unknownField\"""#,
            r#"299 - "duplicate field \"spec.replicas\"""#
        ]
    );
    let stored = stored(&c, &format!("{DEPLOYMENTS}/my-dep")).await;
    assert_eq!(stored["spec"]["replicas"], 3);
    assert!(stored["spec"].get("unknownField").is_none());

    // Ignore: nothing said.
    let body = DUP_DEPLOYMENT.replace("my-dep", "quiet");
    let r = c
        .call(
            Method::POST,
            &format!("{DEPLOYMENTS}?fieldValidation=Ignore"),
            "application/json",
            &body,
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.text);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);

    // A YAML body: its duplicates in the YAML library's words, one warning per line.
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: a\n  k: b\n";
    let cms = "/api/v1/namespaces/default/configmaps";
    let r = c
        .call(
            Method::POST,
            &format!("{cms}?fieldValidation=Strict"),
            "application/yaml",
            yaml,
        )
        .await;
    assert_eq!(r.code, 400, "{}", r.text);
    assert_eq!(
        r.message(),
        "strict decoding error: yaml: unmarshal errors:\n  line 7: key \"k\" already set in map"
    );
    let r = c.call(Method::POST, cms, "application/yaml", yaml).await;
    assert_eq!(r.code, 201, "{}", r.text);
    assert_eq!(
        r.warnings,
        vec![r#"299 - "line 7: key \"k\" already set in map""#]
    );
}

#[tokio::test]
async fn a_patch_and_an_apply_are_judged_as_kube_apiserver_judges_them() {
    let hub = Hub::start();
    hub.ok(&["create", "configmap", "p", "--from-literal=a=1"]);
    let c = Caller::new(&hub).await;
    let path = "/api/v1/namespaces/default/configmaps/p";

    // A merge patch with a duplicate and an unknown field: 422 naming the patch.
    let patch = r#"{"data": {"a": "2", "a": "3"}, "bogus": 1}"#;
    let r = c
        .call(
            Method::PATCH,
            &format!("{path}?fieldValidation=Strict"),
            "application/merge-patch+json",
            patch,
        )
        .await;
    assert_eq!(
        (r.code, r.body["reason"].as_str()),
        (422, Some("Invalid")),
        "{}",
        r.text
    );
    assert!(
        r.message()
            .starts_with(" \"\" is invalid: patch: Invalid value: ")
            && r.message().ends_with(
                r#"strict decoding error: duplicate field "data.a", unknown field "bogus""#
            ),
        "{}",
        r.message()
    );
    assert_eq!(r.body["details"]["causes"][0]["field"], "patch");
    assert_eq!(stored(&c, path).await["data"]["a"], "1", "nothing written");
    // Warn: written, with both warnings.
    let r = c
        .call(Method::PATCH, path, "application/merge-patch+json", patch)
        .await;
    assert_eq!(r.code, 200, "{}", r.text);
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert_eq!(stored(&c, path).await["data"]["a"], "3");

    // Server-side apply: a field the schema does not declare is refused at any level.
    let apply = |body: &str, q: &str| {
        let path = format!("{path}?fieldManager=m{q}");
        let body = body.to_string();
        let c = &c;
        async move {
            c.call(Method::PATCH, &path, "application/apply-patch+yaml", &body)
                .await
        }
    };
    let unknown = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n  unknownMeta: x\n";
    let r = apply(unknown, "&fieldValidation=Ignore").await;
    assert_eq!(r.code, 500, "{}", r.text);
    assert_eq!(
        r.message(),
        "failed to create typed patch object (default/p; /v1, Kind=ConfigMap): \
         .metadata.unknownMeta: field not declared in schema"
    );
    // Its duplicate keys: 400 (Strict) in the YAML library's words, or a warning (Warn).
    let dup = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  b: x\n  b: y\n";
    let r = apply(dup, "&fieldValidation=Strict").await;
    assert_eq!(r.code, 400, "{}", r.text);
    assert_eq!(
        r.message(),
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  \
         line 7: key \"b\" already set in map"
    );
    let r = apply(dup, "").await;
    assert_eq!(r.code, 200, "{}", r.text);
    assert_eq!(
        r.warnings,
        vec![r#"299 - "line 7: key \"b\" already set in map""#]
    );
    assert_eq!(stored(&c, path).await["data"]["b"], "y");
}

// === health ===

#[tokio::test]
async fn health_endpoints_list_kubes_named_checks() {
    let hub = Hub::start();
    let c = Caller::new(&hub).await;
    for endpoint in ["healthz", "livez", "readyz"] {
        let r = c.get(&format!("/{endpoint}")).await;
        assert_eq!((r.code, r.text.as_str()), (200, "ok"));
        let r = c.get(&format!("/{endpoint}?verbose=1")).await;
        assert_eq!(r.code, 200, "{}", r.text);
        let lines: Vec<&str> = r.text.lines().collect();
        // What health_handlers.go requires of each endpoint (a sample).
        for want in [
            "[+]ping ok",
            "[+]log ok",
            "[+]etcd ok",
            "[+]poststarthook/start-apiserver-admission-initializer ok",
            "[+]poststarthook/crd-informer-synced ok",
            "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok",
            "[+]autoregister-completion ok",
            "[+]poststarthook/apiservice-openapi-controller ok",
        ] {
            assert!(lines.contains(&want), "/{endpoint}: {want} in {}", r.text);
        }
        assert_eq!(lines.last(), Some(&&*format!("{endpoint} check passed")));
    }
    let r = c.get("/readyz?verbose").await;
    assert!(
        r.text.lines().any(|l| l == "[+]informer-sync ok"),
        "{}",
        r.text
    );

    // One check alone; an excluded one; one excluded that is not there.
    let r = c.get("/healthz/etcd").await;
    assert_eq!((r.code, r.text.as_str()), (200, "ok"));
    assert_eq!(c.get("/healthz/nope").await.code, 404);
    let r = c.get("/livez?verbose&exclude=etcd&exclude=nope").await;
    assert_eq!(r.code, 200, "{}", r.text);
    assert!(
        r.text.lines().any(|l| l == "[+]etcd excluded: ok"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .lines()
            .any(|l| l == "warn: some health checks cannot be excluded: no matches for \"nope\""),
        "{}",
        r.text
    );
}

// === PodDisruptionBudget status ===

#[tokio::test]
async fn a_disruption_budget_is_processed_and_listed_across_namespaces() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "other"]);
    let c = Caller::new(&hub).await;
    for (ns, name) in [("default", "foo"), ("other", "foo3")] {
        let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "labels": {"foo_pdb": "bar_pdb"}},
            "spec": {"selector": {"matchLabels": {"foo": "bar"}}, "minAvailable": 2}});
        let r = c
            .call(
                Method::POST,
                &format!("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"),
                "application/json",
                &pdb.to_string(),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.text);
    }
    // disruption.go waits for this: the status counts the current spec.
    let path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/foo";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pdb = loop {
        let pdb = stored(&c, path).await;
        if pdb["status"]["observedGeneration"] == pdb["metadata"]["generation"] {
            break pdb;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never processed: {pdb}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(pdb["status"]["desiredHealthy"], 2);
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert_eq!(pdb["status"]["conditions"][0]["reason"], "InsufficientPods");
    let all = stored(
        &c,
        "/apis/policy/v1/poddisruptionbudgets?labelSelector=foo_pdb%3Dbar_pdb",
    )
    .await;
    let mut names: Vec<&str> = all["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    names.sort();
    assert_eq!(names, vec!["foo", "foo3"]);
}

#[tokio::test]
async fn a_custom_resource_lists_duplicates_then_unknown_fields_of_its_root_and_embedded_objects() {
    let hub = Hub::start();
    // field_validation.go's schema: spec keeps unknown fields, spec.template is an embedded
    // resource.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "noxus.ex.com"},
        "spec": {"group": "ex.com", "scope": "Cluster",
                 "names": {"kind": "Noxu", "plural": "noxus", "singular": "noxu"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                             "properties": {
                                 "foo": {"type": "string"},
                                 "template": {"type": "object",
                                     "x-kubernetes-embedded-resource": true,
                                     "properties": {
                                         "metadata": {"type": "object",
                                             "properties": {"name": {"type": "string"}}},
                                         "spec": {"type": "object"}}}}}}}}}]}
    });
    hub.ok_stdin(&["create", "-f", "-"], &crd.to_string());
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/noxus.ex.com",
        "--timeout=30s",
    ]);
    let c = Caller::new(&hub).await;
    let body = r#"{"apiVersion": "ex.com/v1", "kind": "Noxu",
        "metadata": {"name": "n", "unknownMeta": "x"},
        "spec": {"unknown": 1, "foo": "a", "foo": "b",
                 "template": {"apiVersion": "v1", "kind": "Sub",
                              "metadata": {"name": "s", "unknownSubMeta": "x"}}}}"#;
    let path = "/apis/ex.com/v1/noxus";
    let r = c
        .call(
            Method::POST,
            &format!("{path}?fieldValidation=Strict"),
            "application/json",
            body,
        )
        .await;
    assert_eq!(r.code, 400, "{}", r.text);
    assert_eq!(
        r.message(),
        "strict decoding error: duplicate field \"spec.foo\", unknown field \
         \"metadata.unknownMeta\", unknown field \"spec.template.metadata.unknownSubMeta\""
    );
    // Warn: stored without the unknown fields, the preserved one kept, the last foo.
    let r = c.call(Method::POST, path, "application/json", body).await;
    assert_eq!(r.code, 201, "{}", r.text);
    assert_eq!(r.warnings.len(), 3, "{:?}", r.warnings);
    let got = stored(&c, &format!("{path}/n")).await;
    assert_eq!(got["spec"]["foo"], "b");
    assert_eq!(got["spec"]["unknown"], 1);
    assert!(got["metadata"].get("unknownMeta").is_none(), "{got}");
    assert!(
        got["spec"]["template"]["metadata"]
            .get("unknownSubMeta")
            .is_none(),
        "{got}"
    );
}
