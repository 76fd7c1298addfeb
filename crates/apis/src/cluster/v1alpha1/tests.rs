use kube_core::CustomResourceExt;
use serde_json::{json, Value};

use super::*;
use crate::schema::testing::{assert_structural, columns, version};

const SAMPLE: &str = r#"
apiVersion: cluster.flotilla.io/v1alpha1
kind: Cluster
metadata:
  name: member-1
  labels: {env: prod}
spec:
  syncMode: Push
  apiEndpoint: https://10.0.0.1:6443
  secretRef: {namespace: flotilla-system, name: member-1}
  region: eu-west-1
  zone: eu-west-1a
  provider: aws
  taints:
  - {key: cluster.flotilla.io/unreachable, effect: NoExecute, timeAdded: "2025-01-02T03:04:05Z"}
status:
  conditions:
  - {type: Ready, status: "True", reason: ClusterReady, message: "", lastTransitionTime: "2025-01-02T03:04:05Z"}
  kubernetesVersion: v1.33.1
  apiEnablements:
  - groupVersion: apps/v1
    resources: [{name: deployments, kind: Deployment}]
  nodeSummary: {totalNum: 3, readyNum: 2}
  resourceSummary:
    allocatable: {cpu: "12", memory: 48Gi}
    allocated: {cpu: 2500m}
    replicaEstimates:
    - request: {cpu: 500m, memory: 1Gi}
      replicas: 17
  lastHeartbeatTime: "2025-01-02T03:04:05Z"
"#;

fn crd() -> Value {
    serde_json::to_value(Cluster::crd()).expect("the CRD serializes")
}

#[test]
fn sync_mode_defaults_to_pull_and_empty_fields_are_omitted() {
    let c: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.flotilla.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "m"}, "spec": {}
    }))
    .expect("a minimal Cluster parses");
    assert_eq!(c.spec.sync_mode, SyncMode::Pull);
    assert!(c.status.is_none());
    let back = serde_json::to_value(&c).expect("serializes");
    assert_eq!(back["spec"], json!({"syncMode": "Pull"}));
}

#[test]
fn sample_round_trips() {
    let c: Cluster = serde_yaml::from_str(SAMPLE).expect("the sample parses");
    assert_eq!(c.spec.sync_mode, SyncMode::Push);
    assert_eq!(c.spec.taints[0].effect, TaintEffect::NoExecute);
    assert_eq!(c.spec.taints[0].key, TAINT_UNREACHABLE);
    let status = c.status.as_ref().expect("status");
    assert_eq!(
        status.node_summary,
        Some(NodeSummary {
            total_num: 3,
            ready_num: 2
        })
    );
    let est = &status
        .resource_summary
        .as_ref()
        .expect("summary")
        .replica_estimates[0];
    assert_eq!(est.replicas, 17);
    assert_eq!(est.request["cpu"].0, "500m");
    let want: Value = serde_yaml::from_str(SAMPLE).expect("yaml");
    assert_eq!(serde_json::to_value(&c).expect("serializes"), want);
}

#[test]
fn unknown_enum_values_are_refused() {
    let r: Result<ClusterSpec, _> = serde_json::from_value(json!({"syncMode": "Sideways"}));
    assert!(r.is_err());
}

#[test]
fn crd_is_cluster_scoped_with_status_columns_and_category() {
    let crd = crd();
    assert_eq!(crd["metadata"]["name"], "clusters.cluster.flotilla.io");
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(crd["spec"]["names"]["categories"], json!(["flotilla"]));
    let v = version(&crd);
    assert_eq!(v["name"], VERSION);
    assert_eq!(crd["spec"]["group"], GROUP);
    assert_eq!(v["subresources"]["status"], json!({}));
    let cols: Vec<String> = columns(&crd).into_iter().map(|(n, _)| n).collect();
    assert_eq!(cols, ["Mode", "Ready", "Version", "Region", "Age"]);
    assert_eq!(
        columns(&crd)[1].1,
        r#".status.conditions[?(@.type=="Ready")].status"#
    );
}

#[test]
fn schema_is_structural_with_enums_and_defaults() {
    let crd = crd();
    let schema = &version(&crd)["schema"]["openAPIV3Schema"];
    assert_structural(schema, "");
    let mode = &schema["properties"]["spec"]["properties"]["syncMode"];
    assert_eq!(mode["enum"], json!(["Push", "Pull"]));
    assert_eq!(mode["default"], "Pull");
    let effect =
        &schema["properties"]["spec"]["properties"]["taints"]["items"]["properties"]["effect"];
    assert_eq!(
        effect["enum"],
        json!(["NoSchedule", "PreferNoSchedule", "NoExecute"])
    );
    let conditions = &schema["properties"]["status"]["properties"]["conditions"];
    assert_eq!(conditions["x-kubernetes-list-type"], "map");
    assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
}

#[test]
fn bound_sets_are_the_namespaces_bindings_and_the_sets_bound_everywhere() {
    use kube_core::ObjectMeta;
    let binding = |ns: &str, set: &str| ClusterSetBinding {
        metadata: ObjectMeta {
            name: Some(set.into()),
            namespace: Some(ns.into()),
            ..Default::default()
        },
        spec: ClusterSetBindingSpec {
            cluster_set: set.into(),
        },
    };
    let set = |name: &str, all: bool| ClusterSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: ClusterSetSpec {
            all_namespaces: all,
        },
    };
    let bindings = [binding("a", "prod"), binding("b", "edge")];
    let names = |s: std::collections::BTreeSet<String>| s.into_iter().collect::<Vec<_>>();
    // No ClusterSet "default" at all: bound everywhere.
    assert_eq!(names(bound_sets("a", &bindings, &[])), ["default", "prod"]);
    // "default" there, not everywhere: only bindings count.
    let sets = [set("default", false), set("shared", true)];
    assert_eq!(names(bound_sets("a", &bindings, &sets)), ["prod", "shared"]);
    assert_eq!(names(bound_sets("c", &bindings, &sets)), ["shared"]);
    assert_eq!(
        names(bound_sets("b", &bindings, &[set("default", true)])),
        ["default", "edge"]
    );
    assert_eq!(clusterset_of(None), DEFAULT_CLUSTERSET);
}
