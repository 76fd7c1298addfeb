use kube_core::CustomResourceExt;
use serde_json::{json, Value};

use super::*;
use crate::schema::testing::{assert_structural, columns, version};

const SAMPLE: &str = r#"
apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata:
  name: default-web-deployment
  namespace: flotilla-es-member-1
spec:
  manifests:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec: {replicas: 2, anything: {kept: true}}
  applyStrategy: Update
  conflictPolicy: Adopt
  deletePolicy: Orphan
  statusFeedback:
  - resource: {group: apps, resource: deployments, namespace: default, name: web}
    jsonPaths: [{name: ready, path: .status.readyReplicas}]
status:
  conditions:
  - {type: Applied, status: "True", reason: Applied, message: "", lastTransitionTime: "2025-01-02T03:04:05Z"}
  manifestStatuses:
  - identifier: {ordinal: 0, group: apps, version: v1, kind: Deployment, resource: deployments, namespace: default, name: web}
    conditions:
    - {type: Applied, status: "False", reason: Conflict, message: "owned by someone else", lastTransitionTime: "2025-01-02T03:04:05Z"}
    feedback:
      values:
      - {name: ready, value: {integer: 2}}
      - {name: phase, value: {string: Running}}
      - {name: paused, value: {boolean: false}}
      - {name: selector, value: {jsonRaw: '{"app":"web"}'}}
    observedResourceVersion: "123"
    observedGeneration: 4
"#;

fn crd() -> Value {
    serde_json::to_value(Work::crd()).expect("the CRD serializes")
}

#[test]
fn policies_default_to_ssa_abort_delete() {
    let w: WorkSpec = serde_json::from_value(json!({})).expect("an empty spec parses");
    assert_eq!(w.apply_strategy, ApplyStrategy::ServerSideApply);
    assert_eq!(w.conflict_policy, ConflictPolicy::Abort);
    assert_eq!(w.delete_policy, DeletePolicy::Delete);
    assert_eq!(
        serde_json::to_value(&w).expect("serializes"),
        json!({"applyStrategy": "ServerSideApply", "conflictPolicy": "Abort", "deletePolicy": "Delete"})
    );
}

#[test]
fn sample_round_trips_and_keeps_manifests_whole() {
    let w: Work = serde_yaml::from_str(SAMPLE).expect("the sample parses");
    assert_eq!(w.spec.manifests[0].0["spec"]["anything"]["kept"], true);
    let status = w.status.as_ref().expect("status");
    let m = &status.manifest_statuses[0];
    assert_eq!(m.conditions[0].reason, REASON_CONFLICT);
    let values = &m.feedback.as_ref().expect("feedback").values;
    assert_eq!(values[0].value.integer, Some(2));
    assert_eq!(
        values[3].value.json_raw.as_deref(),
        Some(r#"{"app":"web"}"#)
    );
    let want: Value = serde_yaml::from_str(SAMPLE).expect("yaml");
    assert_eq!(serde_json::to_value(&w).expect("serializes"), want);
}

#[test]
fn crd_is_namespaced_with_status_and_columns() {
    let crd = crd();
    assert_eq!(crd["metadata"]["name"], "works.work.flotilla.io");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["group"], GROUP);
    assert_eq!(crd["spec"]["names"]["categories"], json!(["flotilla"]));
    let v = version(&crd);
    assert_eq!(v["name"], VERSION);
    assert_eq!(v["subresources"]["status"], json!({}));
    let cols: Vec<String> = columns(&crd).into_iter().map(|(n, _)| n).collect();
    assert_eq!(cols, ["Applied", "Available", "Age"]);
}

#[test]
fn manifests_are_embedded_objects_that_keep_unknown_fields() {
    let crd = crd();
    let schema = &version(&crd)["schema"]["openAPIV3Schema"];
    assert_structural(schema, "");
    let items = &schema["properties"]["spec"]["properties"]["manifests"]["items"];
    assert_eq!(items["type"], "object");
    assert_eq!(items["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(items["x-kubernetes-embedded-resource"], true);
    let spec = &schema["properties"]["spec"]["properties"];
    assert_eq!(
        spec["applyStrategy"]["enum"],
        json!(["ServerSideApply", "Update", "CreateOnly", "ReadOnly"])
    );
    assert_eq!(
        spec["conflictPolicy"]["enum"],
        json!(["Abort", "Adopt", "Overwrite"])
    );
    assert_eq!(spec["deletePolicy"]["enum"], json!(["Delete", "Orphan"]));
}
