use kube_core::CustomResourceExt;
use serde_json::{json, Value};

use super::*;
use crate::policy::v1alpha1::{ReplicaSchedulingType, SpreadField};
use crate::schema::testing::{assert_described, assert_structural, columns, version};
use crate::work::v1alpha1::{GROUP, VERSION};

/// Shaped as a Karmada `work.karmada.io/v1alpha2` ResourceBinding, group changed.
const BINDING: &str = r#"
apiVersion: work.flotilla.io/v1alpha1
kind: ResourceBinding
metadata: {name: nginx-deployment, namespace: demo}
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
    namespace: demo
    name: nginx
    uid: 0f5b4c1e-8d2a-4a57-9b9e-1c2d3e4f5a6b
    resourceVersion: "42"
  propagateDeps: true
  replicaRequirements:
    resourceRequest: {cpu: 250m, memory: 64Mi}
  replicas: 6
  clusters:
  - {name: member-1, replicas: 4}
  - {name: member-2, replicas: 2}
  placement:
    clusterAffinity: {clusterNames: [member-1, member-2]}
    spreadConstraints: [{spreadByField: cluster, minGroups: 2}]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member-1]}, weight: 2}
        - {targetCluster: {clusterNames: [member-2]}, weight: 1}
  gracefulEvictionTasks:
  - {fromCluster: member-3, replicas: 2, reason: TaintUntolerated, producer: failover, creationTimestamp: "2025-01-02T03:04:05Z"}
  requiredBy:
  - {namespace: demo, name: web-deployment, clusters: [{name: member-1, replicas: 1}]}
  conflictResolution: Abort
  policyRef: {kind: PropagationPolicy, namespace: demo, name: nginx-propagation}
status:
  schedulerObservedGeneration: 3
  schedulerObservingAffinityName: primary
  lastScheduledTime: "2025-01-02T03:04:05Z"
  conditions:
  - {type: Scheduled, status: "True", reason: Success, message: "", lastTransitionTime: "2025-01-02T03:04:05Z"}
  - {type: FullyApplied, status: "False", reason: FullyAppliedFailed, message: "member-2 not applied", lastTransitionTime: "2025-01-02T03:04:05Z"}
  aggregatedStatus:
  - clusterName: member-1
    applied: true
    health: Healthy
    status: {replicas: 4, readyReplicas: 4, conditions: [{type: Available, status: "True"}]}
  - {clusterName: member-2, appliedMessage: "conflict", health: Unknown}
"#;

#[test]
fn binding_parses_and_round_trips() {
    let rb: ResourceBinding = serde_yaml::from_str(BINDING).expect("parses");
    assert_eq!(rb.spec.resource.kind, "Deployment");
    assert_eq!(rb.spec.replicas, 6);
    assert_eq!(
        rb.spec.clusters[0],
        TargetCluster {
            name: "member-1".into(),
            replicas: 4
        }
    );
    let req = rb.spec.replica_requirements.as_ref().expect("requirements");
    assert_eq!(req.resource_request["cpu"].0, "250m");
    let placement = rb.spec.placement.as_ref().expect("placement");
    assert_eq!(
        placement
            .replica_scheduling
            .as_ref()
            .map(|r| r.replica_scheduling_type),
        Some(ReplicaSchedulingType::Divided)
    );
    assert_eq!(
        placement.spread_constraints[0].spread_by_field,
        Some(SpreadField::Cluster)
    );
    let status = rb.status.as_ref().expect("status");
    assert_eq!(status.conditions[0].type_, CONDITION_SCHEDULED);
    assert_eq!(status.conditions[1].reason, REASON_NOT_FULLY_APPLIED);
    assert_eq!(
        status.scheduler_observed_affinity_name.as_deref(),
        Some("primary")
    );
    let item = &status.aggregated_status[0];
    assert!(item.applied);
    assert_eq!(item.health, Some(ResourceHealth::Healthy));
    assert_eq!(
        item.status.as_ref().map(|s| &s["readyReplicas"]),
        Some(&json!(4))
    );
    let want: Value = serde_yaml::from_str(BINDING).expect("yaml");
    assert_eq!(serde_json::to_value(&rb).expect("serializes"), want);

    let crb: ClusterResourceBinding = serde_yaml::from_str(
        &BINDING.replace("kind: ResourceBinding", "kind: ClusterResourceBinding"),
    )
    .expect("the same spec parses cluster-scoped");
    assert_eq!(*crb.spec, rb.spec);
}

#[test]
fn binding_crds_are_structural_described_with_columns() {
    let j = |c| serde_json::to_value(c).expect("the CRD serializes");
    for (crd, plural, scope, short) in [
        (
            j(ResourceBinding::crd()),
            "resourcebindings",
            "Namespaced",
            "rb",
        ),
        (
            j(ClusterResourceBinding::crd()),
            "clusterresourcebindings",
            "Cluster",
            "crb",
        ),
    ] {
        assert_eq!(crd["metadata"]["name"], format!("{plural}.{GROUP}"));
        assert_eq!(crd["spec"]["scope"], scope);
        assert_eq!(crd["spec"]["names"]["shortNames"], json!([short]));
        assert_eq!(crd["spec"]["names"]["categories"], json!(["flotilla"]));
        let v = version(&crd);
        assert_eq!(v["name"], VERSION);
        assert_eq!(v["subresources"]["status"], json!({}));
        assert_eq!(
            columns(&crd),
            [
                (
                    "Scheduled".to_string(),
                    r#".status.conditions[?(@.type=="Scheduled")].status"#.to_string()
                ),
                (
                    "FullyApplied".to_string(),
                    r#".status.conditions[?(@.type=="FullyApplied")].status"#.to_string()
                ),
                (
                    "Rollout".to_string(),
                    r#".status.rollout.conditions[?(@.type=="Progressing")].reason"#.to_string()
                ),
                ("Age".to_string(), ".metadata.creationTimestamp".to_string()),
            ]
        );
        let schema = &v["schema"]["openAPIV3Schema"];
        assert_structural(schema, plural);
        let spec = &schema["properties"]["spec"];
        assert_eq!(spec["required"], json!(["resource"]), "{plural}");
        assert_described(spec, plural);
        assert_described(&schema["properties"]["status"], plural);
        let item = &schema["properties"]["status"]["properties"]["aggregatedStatus"]["items"];
        assert_eq!(item["properties"]["status"]["type"], "object");
        assert_eq!(
            item["properties"]["status"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            item["properties"]["health"]["enum"],
            json!(["Healthy", "Unhealthy", "Unknown"])
        );
        let conditions = &schema["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
    }
}
