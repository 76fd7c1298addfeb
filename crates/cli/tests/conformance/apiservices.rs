//! Conformance: `apiregistration.k8s.io/v1` APIServices, as kube-apiserver's aggregator layer
//! serves them. Discovery lists the group (aggregated_discovery.go and discovery.go expect
//! `apiservices` there, and `autoscaling/v1` horizontalpodautoscalers: the v2 objects served
//! at v1, converted both ways as kube converts them); the hub keeps a local APIService, available with reason `Local`, for
//! every group version it serves — built-in ones with kube's priorities, CRD ones while a CRD
//! serves them — and puts back one that is deleted; a client's APIService is validated as kube
//! validates it, and one naming a Service says why it is not available.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::Request;
use kube::client::Body;
use serde_json::Value;

use crate::common::{json, Hub};
use crate::support::{admin_client, get_json, table_line, within};

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The APIService as JSON, or `None` while it does not exist.
fn apiservice(hub: &Hub, name: &str) -> Option<Value> {
    get_json(hub, &["apiservice", name])
}

/// Waits until the APIService `name` exists and `ok` holds for it.
fn wait_for(hub: &Hub, name: &str, ok: impl Fn(&Value) -> bool) -> Value {
    within(10, || apiservice(hub, name).filter(|v| ok(v))).unwrap_or_else(|| {
        panic!(
            "APIService {name} not as expected: {:?}\n{}",
            apiservice(hub, name),
            hub.log()
        )
    })
}

/// Waits until the APIService `name` is gone.
fn wait_gone(hub: &Hub, name: &str) {
    let gone = within(10, || apiservice(hub, name).is_none().then_some(()));
    assert!(gone.is_some(), "APIService {name} is still there");
}

/// The `Available` condition.
fn available(v: &Value) -> &Value {
    v["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Available"))
        .unwrap_or(&Value::Null)
}

fn is_local_available(v: &Value) -> bool {
    let c = available(v);
    c["status"] == "True"
        && c["reason"] == "Local"
        && c["message"] == "Local APIServices are always available"
}

fn crd(group: &str, v2_served: bool) -> String {
    format!(
        r#"{{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {{"name": "gadgets.{group}"}},
  "spec": {{"group": "{group}", "scope": "Namespaced",
    "names": {{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"}},
    "versions": [
      {{"name": "v1", "served": true, "storage": true, "schema": {{"openAPIV3Schema": {{"type": "object"}}}}}},
      {{"name": "v2", "served": {v2_served}, "storage": false, "schema": {{"openAPIV3Schema": {{"type": "object"}}}}}}]}}}}"#
    )
}

#[test]
fn a_fresh_hub_lists_each_served_group_version_as_a_local_apiservice() {
    let hub = Hub::start();
    let apps = wait_for(&hub, "v1.apps", is_local_available);
    assert_eq!(apps["spec"]["group"], "apps");
    assert_eq!(apps["spec"]["version"], "v1");
    assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800);
    assert_eq!(apps["spec"]["versionPriority"], 15);
    assert!(apps["spec"].get("service").is_none(), "{apps}");
    assert_eq!(
        apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    // The legacy core group's APIService is `v1.`, with an empty group.
    let core = wait_for(&hub, "v1.", is_local_available);
    assert_eq!(core["spec"]["group"], "");
    assert_eq!(core["spec"]["groupPriorityMinimum"], 18000);
    let hpa = wait_for(&hub, "v2.autoscaling", is_local_available);
    assert_eq!(hpa["spec"]["versionPriority"], 30);
    let hpa_v1 = wait_for(&hub, "v1.autoscaling", is_local_available);
    assert_eq!(hpa_v1["spec"]["versionPriority"], 15);
    // As in kube, the aggregator's own group has none.
    assert!(apiservice(&hub, "v1.apiregistration.k8s.io").is_none());

    // kubectl prints kube-aggregator's columns.
    let table = hub.ok(&["get", "apiservices"]);
    let header = table_line(&table, 0);
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"], "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("v1.apps "))
        .unwrap_or_else(|| panic!("no v1.apps row:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..3], ["v1.apps", "Local", "True"], "{table}");
    let in_category = hub.ok(&["api-resources", "--categories=api-extensions", "-o", "name"]);
    assert!(
        in_category
            .lines()
            .any(|l| l == "apiservices.apiregistration.k8s.io"),
        "{in_category}"
    );
}

#[test]
fn discovery_lists_apiregistration() {
    let hub = Hub::start();
    let groups = json(&hub.ok(&["get", "--raw", "/apis"]));
    let group = groups["groups"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["name"] == "apiregistration.k8s.io"))
        .unwrap_or_else(|| panic!("no apiregistration.k8s.io in /apis: {groups}"));
    assert_eq!(
        group["preferredVersion"]["groupVersion"],
        "apiregistration.k8s.io/v1"
    );
    // In kube-aggregator's order: its own group, then by APIService priority (apps 17800,
    // events.k8s.io 17750, ...), CRD groups (1000) last.
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .map(|gs| gs.iter().filter_map(|g| g["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names[..4],
        [
            "apiregistration.k8s.io",
            "apps",
            "events.k8s.io",
            "authentication.k8s.io"
        ],
        "{names:?}"
    );
    assert!(
        names.last().is_some_and(|n| n.ends_with(".flotilla.io")),
        "{names:?}"
    );
    let list = json(&hub.ok(&["get", "--raw", "/apis/apiregistration.k8s.io/v1"]));
    assert_eq!(list["groupVersion"], "apiregistration.k8s.io/v1");
    let names: Vec<&str> = list["resources"]
        .as_array()
        .map(|rs| rs.iter().filter_map(|r| r["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["apiservices", "apiservices/status"], "{list}");
    let main = &list["resources"][0];
    assert_eq!(main["namespaced"], false);
    assert_eq!(main["kind"], "APIService");
    assert_eq!(main["categories"], serde_json::json!(["api-extensions"]));
    // kube-apiserver's storageVersionHash of apiregistration.k8s.io/v1 APIService.
    assert_eq!(main["storageVersionHash"], "InPBPD7+PqM=");

    // The aggregated document clients ask for with apidiscovery.k8s.io's Accept header.
    let doc = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(aggregated(&hub));
    let entry = doc["items"]
        .as_array()
        .and_then(|gs| {
            gs.iter()
                .find(|g| g["metadata"]["name"] == "apiregistration.k8s.io")
        })
        .unwrap_or_else(|| panic!("no apiregistration.k8s.io in the aggregated /apis"));
    let resource = &entry["versions"][0]["resources"][0];
    assert_eq!(entry["versions"][0]["version"], "v1");
    assert_eq!(resource["resource"], "apiservices");
    assert_eq!(resource["scope"], "Cluster");
    assert_eq!(resource["subresources"][0]["subresource"], "status");
}

/// `/apis` as aggregated discovery (apidiscovery.k8s.io/v2).
async fn aggregated(hub: &Hub) -> Value {
    let client = admin_client(hub).await;
    let req = Request::get("/apis")
        .header("accept", AGGREGATED)
        .body(Body::empty())
        .expect("a request");
    let resp = client.send(req).await.expect("GET /apis");
    assert_eq!(resp.status().as_u16(), 200);
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(ct.contains("as=APIGroupDiscoveryList"), "{ct}");
    let bytes = resp.into_body().collect().await.expect("a body").to_bytes();
    serde_json::from_slice(&bytes).expect("JSON")
}

#[test]
fn a_crds_served_versions_have_apiservices_while_the_crd_serves_them() {
    let hub = Hub::start();
    let group = "stable.example.com";
    hub.ok_stdin(&["create", "-f", "-"], &crd(group, false));
    let v1 = wait_for(&hub, "v1.stable.example.com", is_local_available);
    assert_eq!(v1["spec"]["groupPriorityMinimum"], 1000);
    assert_eq!(v1["spec"]["versionPriority"], 100);
    assert_eq!(
        v1["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "true"
    );
    assert!(
        apiservice(&hub, "v2.stable.example.com").is_none(),
        "v2 is not served"
    );

    hub.ok_stdin(&["apply", "-f", "-"], &crd(group, true));
    wait_for(&hub, "v2.stable.example.com", is_local_available);

    hub.ok_stdin(&["apply", "-f", "-"], &crd(group, false));
    wait_gone(&hub, "v2.stable.example.com");

    hub.ok(&["delete", "crd", "gadgets.stable.example.com"]);
    wait_gone(&hub, "v1.stable.example.com");
}

#[test]
fn a_deleted_or_changed_local_apiservice_is_put_back() {
    let hub = Hub::start();
    let before = wait_for(&hub, "v1.apps", is_local_available);
    hub.ok(&["delete", "apiservice", "v1.apps"]);
    let uid = before["metadata"]["uid"].clone();
    let after = wait_for(&hub, "v1.apps", |v| {
        v["metadata"]["uid"] != uid && is_local_available(v)
    });
    assert_eq!(after["spec"]["groupPriorityMinimum"], 17800);

    hub.ok(&[
        "patch",
        "apiservice",
        "v1.batch",
        "--type=merge",
        "-p",
        r#"{"spec":{"versionPriority":3}}"#,
    ]);
    wait_for(&hub, "v1.batch", |v| v["spec"]["versionPriority"] == 15);
}

#[test]
fn a_clients_apiservice_is_validated_and_one_naming_a_service_is_not_available() {
    let hub = Hub::start();
    let bad = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
      "metadata": {"name": "metrics"},
      "spec": {"group": "metrics.example.io", "version": "v1beta1", "groupPriorityMinimum": 0,
               "versionPriority": 100, "caBundle": "aGVsbG8="}}"#;
    let out = hub.kubectl_stdin(&["create", "-f", "-"], bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    for want in [
        r#"The APIService "metrics" is invalid"#,
        r#"metadata.name: Invalid value: "metrics": must be `spec.version+"."+spec.group`: "v1beta1.metrics.example.io""#,
        "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
        r#"spec.caBundle: Invalid value: "5 bytes": local APIServices may not have a caBundle"#,
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    assert!(apiservice(&hub, "metrics").is_none(), "nothing stored");

    let remote = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
      "metadata": {"name": "v1beta1.metrics.example.io"},
      "spec": {"group": "metrics.example.io", "version": "v1beta1", "groupPriorityMinimum": 100,
               "versionPriority": 100, "insecureSkipTLSVerify": true,
               "service": {"namespace": "default", "name": "metrics"}}}"#;
    hub.ok_stdin(&["create", "-f", "-"], remote);
    let name = "v1beta1.metrics.example.io";
    let v = wait_for(&hub, name, |v| available(v)["reason"] == "ServiceNotFound");
    assert_eq!(v["spec"]["service"]["port"], 443, "defaulted");
    assert_eq!(available(&v)["status"], "False");
    assert_eq!(
        available(&v)["message"],
        r#"service/metrics in "default" is not present"#
    );
    let row = hub.ok(&["get", "apiservice", name, "--no-headers"]);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &cells[..4],
        [name, "default/metrics", "False", "(ServiceNotFound)"]
    );

    // With the Service and its endpoints there, the hub still does not call it.
    hub.ok(&[
        "create",
        "service",
        "clusterip",
        "metrics",
        "--tcp=443:6443",
    ]);
    wait_for(&hub, name, |v| {
        available(v)["reason"] == "EndpointsNotFound"
    });
    let endpoints = r#"{"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "metrics"},
      "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"name": "443-6443", "port": 6443}]}]}"#;
    hub.ok_stdin(&["apply", "-n", "default", "-f", "-"], endpoints);
    let v = wait_for(&hub, name, |v| {
        available(v)["reason"] == "FailedDiscoveryCheck"
    });
    assert_eq!(available(&v)["status"], "False");
    let msg = available(&v)["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("does not proxy to aggregated API servers"),
        "{msg}"
    );

    // A client's local APIService is available at once, and the hub leaves it be.
    let mine = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
      "metadata": {"name": "v1.mine.example.io"},
      "spec": {"group": "mine.example.io", "version": "v1", "groupPriorityMinimum": 10,
               "versionPriority": 10}}"#;
    let created = json(&hub.ok_stdin(&["create", "-o", "json", "-f", "-"], mine));
    assert!(is_local_available(&created), "{created}");
    std::thread::sleep(Duration::from_secs(1));
    assert!(apiservice(&hub, "v1.mine.example.io").is_some(), "kept");
}

/// The group versions and resources aggregated_discovery.go and discovery.go look for.
const UPSTREAM_EXPECTED: &[(&str, &str, &str)] = &[
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
    ),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    ("apiregistration.k8s.io", "v1", "apiservices"),
    ("apps", "v1", "deployments"),
    ("authentication.k8s.io", "v1", "tokenreviews"),
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews"),
    ("autoscaling", "v1", "horizontalpodautoscalers"),
    ("autoscaling", "v2", "horizontalpodautoscalers"),
    ("batch", "v1", "jobs"),
    ("certificates.k8s.io", "v1", "certificatesigningrequests"),
    ("coordination.k8s.io", "v1", "leases"),
    ("discovery.k8s.io", "v1", "endpointslices"),
    ("events.k8s.io", "v1", "events"),
    ("networking.k8s.io", "v1", "ingresses"),
    ("node.k8s.io", "v1", "runtimeclasses"),
    ("policy", "v1", "poddisruptionbudgets"),
    ("scheduling.k8s.io", "v1", "priorityclasses"),
    ("storage.k8s.io", "v1", "csinodes"),
];

#[test]
fn discovery_has_every_resource_the_upstream_discovery_specs_expect() {
    let hub = Hub::start();
    for (group, version, resource) in UPSTREAM_EXPECTED {
        let path = format!("/apis/{group}/{version}");
        let list = json(&hub.ok(&["get", "--raw", &path]));
        assert_eq!(list["groupVersion"], format!("{group}/{version}"));
        let found = list["resources"]
            .as_array()
            .is_some_and(|rs| rs.iter().any(|r| r["name"] == *resource));
        assert!(found, "{resource} not in {path}: {list}");
    }
    let autoscaling = json(&hub.ok(&["get", "--raw", "/apis/autoscaling"]));
    assert_eq!(
        autoscaling["preferredVersion"]["version"], "v2",
        "{autoscaling}"
    );
}

#[test]
fn autoscaling_v1_serves_the_v2_objects_and_keeps_what_v1_cannot_say() {
    let hub = Hub::start();
    let v1_path = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
    let v2_path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
    // Created at v1 without a target: kube's conversion gives v2 an 80% CPU target.
    let created = json(&hub.ok_stdin(
        &["create", "--raw", v1_path, "-f", "-"],
        r#"{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4}}"#,
    ));
    assert_eq!(created["apiVersion"], "autoscaling/v1");
    assert_eq!(created["spec"]["minReplicas"], 1);
    assert_eq!(created["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(
        created["status"],
        serde_json::json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    let v2 = json(&hub.ok(&["get", "--raw", &format!("{v2_path}/web")]));
    assert_eq!(
        v2["spec"]["metrics"],
        serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );

    // A v2 metric v1 has no field for travels in kube's annotation, and survives a v1 write.
    hub.ok(&[
        "patch",
        "hpa.v2.autoscaling",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}},{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]}}"#,
    ]);
    let v1 = json(&hub.ok(&["get", "--raw", &format!("{v1_path}/web")]));
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    let others = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        json(others),
        serde_json::json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}])
    );
    let mut edited = v1.clone();
    edited["spec"]["maxReplicas"] = serde_json::json!(7);
    hub.ok_stdin(
        &["replace", "--raw", &format!("{v1_path}/web"), "-f", "-"],
        &edited.to_string(),
    );
    let v2 = json(&hub.ok(&["get", "--raw", &format!("{v2_path}/web")]));
    assert_eq!(v2["spec"]["maxReplicas"], 7);
    assert_eq!(v2["spec"]["metrics"][0]["pods"]["metric"]["name"], "qps");
    assert_eq!(
        v2["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
        60
    );
    assert!(
        v2["metadata"].get("annotations").is_none(),
        "the round-trip annotations are not stored: {v2}"
    );
    // Both versions list the one object.
    for path in [v1_path, v2_path] {
        let list = json(&hub.ok(&["get", "--raw", path]));
        assert_eq!(
            list["items"].as_array().map(Vec::len),
            Some(1),
            "{path}: {list}"
        );
    }
}
