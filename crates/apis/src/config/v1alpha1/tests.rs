use kube_core::CustomResourceExt;

use super::*;

#[test]
fn the_crd_is_cluster_scoped_with_target_columns() {
    let crd = serde_json::to_value(ResourceInterpreter::crd()).unwrap();
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(crd["spec"]["group"], GROUP);
    let columns = crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array()
        .unwrap();
    let names: Vec<&str> = columns
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Target-API", "Target-Kind", "Age"]);
}

#[test]
fn an_interpreter_reads_from_yaml_with_every_rule() {
    let spec: ResourceInterpreterSpec = serde_yaml::from_str(
        r#"
target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
replicas: {count: self.spec.replicas, requests: "self.spec.template.spec.containers[0].resources.requests"}
reviseReplicas: {path: spec.replicas}
health: {healthy: "self.status.readyReplicas == self.spec.replicas", reason: "'not ready'"}
status:
  fields:
  - {name: readyReplicas, aggregate: Sum}
  - {name: conditions, aggregate: Conditions}
dependencies: {expression: "[]"}
retain: {paths: [spec.paused]}
"#,
    )
    .unwrap();
    assert_eq!(spec.target.kind, "CloneSet");
    assert_eq!(
        spec.status.unwrap().fields[1].aggregate,
        Aggregate::Conditions
    );
    assert_eq!(spec.retain.unwrap().paths, ["spec.paused"]);
}
