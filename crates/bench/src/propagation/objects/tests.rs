use flotilla_apis::policy::v1alpha1::PropagationPolicy;

use super::*;

#[test]
fn a_labelled_deployment_and_a_karmada_shaped_policy() {
    let d = deployment("bench-1", "ns", "web-0001", 1).unwrap();
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["metadata"]["labels"][RUN_LABEL], "bench-1");
    assert_eq!(v["spec"]["replicas"], 1);
    assert_eq!(seq(&d), 0);
    let kind = kube::api::ApiResource::erase::<PropagationPolicy>(&());
    let p = policy(
        &kind,
        "ns",
        "all",
        &["member-1".into(), "member-3".into()],
        None,
    )
    .unwrap();
    let v = serde_json::to_value(&p).unwrap();
    // flotilla's own type reads it: the shapes are Karmada's and flotilla's alike.
    let typed: PropagationPolicy = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(typed.spec.resource_selectors.len(), 1);
    assert_eq!(v["apiVersion"], "policy.flotilla.io/v1alpha1");
    assert_eq!(v["spec"]["resourceSelectors"][0]["kind"], "Deployment");
    assert_eq!(
        v["spec"]["placement"]["clusterAffinity"]["clusterNames"][1],
        "member-3"
    );
    assert_eq!(
        v["spec"]["placement"]["replicaScheduling"]["replicaSchedulingType"],
        "Duplicated"
    );
    assert!(v["spec"].get("rolloutStrategy").is_none());
    // `--rollout progressive`: flotilla's type reads the strategy.
    let strategy = serde_json::json!({"type": "Progressive", "maxConcurrency": "100%"});
    let p = policy(&kind, "ns", "all", &["member-1".into()], Some(&strategy)).unwrap();
    let typed: PropagationPolicy =
        serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
    assert!(typed.spec.rollout_strategy.is_some_and(|r| r.progressive()));
}

#[test]
fn sequence_numbers_round_trip_through_the_patch() {
    let mut d = deployment("r", "ns", "d", 0).unwrap();
    let patch = seq_patch(42);
    let value = patch["metadata"]["annotations"][SEQ_ANNOTATION].as_str();
    d.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(SEQ_ANNOTATION.into(), value.unwrap().into());
    assert_eq!(seq(&d), 42);
    d.metadata.annotations = None;
    assert_eq!(seq(&d), 0);
}
