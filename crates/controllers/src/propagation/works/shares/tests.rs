use flotilla_apis::policy::v1alpha1::{Placement, ReplicaSchedulingStrategy};
use flotilla_apis::work::v1alpha1::{ObjectReference, TargetCluster};
use serde_json::json;

use super::*;

fn spec(
    kind: &str,
    api_version: &str,
    divided: bool,
    clusters: &[(&str, i32)],
) -> ResourceBindingSpec {
    let strategy = ReplicaSchedulingStrategy {
        replica_scheduling_type: if divided {
            ReplicaSchedulingType::Divided
        } else {
            ReplicaSchedulingType::Duplicated
        },
        ..ReplicaSchedulingStrategy::default()
    };
    ResourceBindingSpec {
        resource: ObjectReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: "x".into(),
            ..ObjectReference::default()
        },
        placement: Some(Placement {
            replica_scheduling: Some(strategy),
            ..Placement::default()
        }),
        clusters: clusters
            .iter()
            .map(|(n, r)| TargetCluster {
                name: (*n).into(),
                replicas: *r,
            })
            .collect(),
        ..ResourceBindingSpec::default()
    }
}

#[test]
fn shares_follow_the_kind() {
    let d = spec("Deployment", "apps/v1", true, &[("a", 4), ("b", 2)]);
    let s = shares(&d, &json!({}));
    assert_eq!(s["a"], ReplicaShare::Replicas(4));
    assert_eq!(s["b"], ReplicaShare::Replicas(2));
    // Duplicated, and kinds without replicas: the whole object everywhere.
    assert!(shares(
        &spec("Deployment", "apps/v1", false, &[("a", 6)]),
        &json!({})
    )
    .is_empty());
    assert!(shares(&spec("ConfigMap", "v1", true, &[("a", 0)]), &json!({})).is_empty());
    // A Job's completions follow its parallelism.
    let j = spec("Job", "batch/v1", true, &[("a", 2), ("b", 1)]);
    let s = shares(&j, &json!({"spec": {"parallelism": 3, "completions": 6}}));
    let completions: u32 = s
        .values()
        .map(|v| match v {
            ReplicaShare::Job { completions, .. } => completions.unwrap_or(0),
            other => panic!("not a Job share: {other:?}"),
        })
        .sum();
    assert_eq!(completions, 6);
    // An HPA's bounds are split with at least 1 each.
    let h = spec(
        "HorizontalPodAutoscaler",
        "autoscaling/v2",
        true,
        &[("a", 1), ("b", 1)],
    );
    let s = shares(&h, &json!({"spec": {"minReplicas": 1, "maxReplicas": 10}}));
    for v in s.values() {
        match v {
            ReplicaShare::Hpa { min, max } => assert!(*min >= 1 && max >= min, "{v:?}"),
            other => panic!("not an HPA share: {other:?}"),
        }
    }
}
