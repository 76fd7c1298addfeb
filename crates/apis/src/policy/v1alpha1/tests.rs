use kube_core::CustomResourceExt;
use serde_json::{json, Value};

use super::*;
use crate::schema::testing::{assert_described, assert_structural, columns, version};

/// A Karmada PropagationPolicy with only the group of its apiVersion changed.
const PROPAGATION: &str = r#"
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
  namespace: demo
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  - apiVersion: v1
    kind: ConfigMap
    namespace: demo
    labelSelector:
      matchLabels: {app: nginx}
  propagateDeps: true
  priority: 10
  conflictResolution: Overwrite
  preserveResourcesOnDeletion: true
  failover:
    cluster: {purgeMode: Directly}
  placement:
    clusterAffinity:
      labelSelector:
        matchLabels: {env: prod}
        matchExpressions:
        - {key: tier, operator: In, values: [gold, silver]}
      fieldSelector:
        matchExpressions:
        - {key: region, operator: In, values: [eu-west-1, eu-central-1]}
      exclude: [member-3]
    clusterTolerations:
    - key: cluster.flotilla.io/unreachable
      operator: Exists
      effect: NoExecute
      tolerationSeconds: 120
    - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
    spreadConstraints:
    - {spreadByField: cluster, maxGroups: 3, minGroups: 2}
    - {spreadByLabel: topology.example.com/site, minGroups: 1}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [member-1]}
          weight: 2
        - targetCluster:
            labelSelector: {matchLabels: {tier: silver}}
          weight: 1
      clusterReplicaLimits:
      - targetCluster: {clusterNames: [member-2]}
        minReplicas: 1
        maxReplicas: 4
"#;

/// Fallback affinity groups and dynamic weights, cluster-scoped.
const CLUSTER_PROPAGATION: &str = r#"
apiVersion: policy.flotilla.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: crds-everywhere}
spec:
  resourceSelectors:
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition}
  priority: 0
  conflictResolution: Adopt
  placement:
    clusterAffinities:
    - affinityName: primary
      clusterNames: [member-1, member-2]
    - affinityName: backup
      fieldSelector:
        matchExpressions: [{key: provider, operator: NotIn, values: [on-prem]}]
      exclude: [member-1]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
"#;

/// A Karmada OverridePolicy with only the group of its apiVersion changed.
const OVERRIDE: &str = r#"
apiVersion: policy.flotilla.io/v1alpha1
kind: OverridePolicy
metadata: {name: nginx-override, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  overrideRules:
  - targetCluster:
      clusterNames: [member-1]
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: registry.example.com}
      - predicate: {path: /spec/template/spec/containers/0/image}
        component: Tag
        operator: replace
        value: "1.27"
      plaintext:
      - {path: /spec/replicas, operator: replace, value: 3}
      - {path: /metadata/annotations, operator: add, value: {team: web}}
      - {path: /spec/template/spec/priorityClassName, operator: remove}
  - targetCluster:
      labelSelector: {matchLabels: {env: dev}}
    overriders:
      commandOverrider:
      - {containerName: nginx, operator: add, value: [--debug]}
      argsOverrider:
      - {containerName: nginx, operator: remove, value: [--quiet]}
      labelsOverrider:
      - {operator: add, value: {env: dev}}
      annotationsOverrider:
      - {operator: remove, value: {example.com/ignored: ""}}
"#;

fn yaml(s: &str) -> Value {
    serde_yaml::from_str(s).expect("the sample is YAML")
}

#[test]
fn karmada_propagation_policy_parses_and_round_trips() {
    let pp: PropagationPolicy = serde_yaml::from_str(PROPAGATION).expect("parses");
    let s = &pp.spec;
    assert_eq!(s.priority, 10);
    assert!(s.propagate_deps);
    assert_eq!(s.conflict_resolution, ConflictResolution::Overwrite);
    assert!(s.preserve_resources_on_deletion);
    let cluster_failover = s.failover.as_ref().and_then(|f| f.cluster.as_ref());
    assert_eq!(
        cluster_failover.map(|c| c.purge_mode),
        Some(PurgeMode::Directly)
    );
    assert_eq!(s.resource_selectors[0].name.as_deref(), Some("nginx"));
    let affinity = s.placement.cluster_affinity.as_ref().expect("affinity");
    assert_eq!(affinity.exclude_clusters, ["member-3"]);
    let fields = affinity.field_selector.as_ref().expect("field selector");
    assert_eq!(fields.match_expressions[0].key, FIELD_REGION);
    let tol = &s.placement.cluster_tolerations[0];
    assert_eq!(tol.toleration_seconds, Some(120));
    assert_eq!(tol.effect.as_deref(), Some("NoExecute"));
    assert_eq!(
        s.placement.spread_constraints[0].spread_by_field,
        Some(SpreadField::Cluster)
    );
    assert_eq!(s.placement.spread_constraints[0].min_groups, 2);
    let rs = s.placement.replica_scheduling.as_ref().expect("replicas");
    assert_eq!(rs.replica_scheduling_type, ReplicaSchedulingType::Divided);
    assert_eq!(
        rs.replica_division_preference,
        Some(ReplicaDivisionPreference::Weighted)
    );
    let weights = &rs
        .weight_preference
        .as_ref()
        .expect("weights")
        .static_weight_list;
    assert_eq!(weights[0].target_cluster.cluster_names, ["member-1"]);
    assert_eq!(weights[0].weight, 2);
    assert_eq!(rs.cluster_replica_limits[0].max_replicas, Some(4));
    assert_eq!(
        serde_json::to_value(&pp).expect("serializes"),
        yaml(PROPAGATION)
    );
}

#[test]
fn cluster_propagation_policy_shares_the_spec() {
    let cpp: ClusterPropagationPolicy = serde_yaml::from_str(CLUSTER_PROPAGATION).expect("parses");
    // Deref: the same field names as on a PropagationPolicy's spec.
    assert_eq!(cpp.spec.conflict_resolution, ConflictResolution::Adopt);
    let terms = &cpp.spec.placement.cluster_affinities;
    assert_eq!(terms[0].affinity_name, "primary");
    assert_eq!(terms[0].affinity.cluster_names, ["member-1", "member-2"]);
    assert_eq!(terms[1].affinity.exclude_clusters, ["member-1"]);
    let rs = cpp
        .spec
        .placement
        .replica_scheduling
        .as_ref()
        .expect("replicas");
    assert_eq!(
        rs.weight_preference.as_ref().and_then(|w| w.dynamic_weight),
        Some(DynamicWeightFactor::AvailableReplicas)
    );
    assert_eq!(
        serde_json::to_value(&cpp).expect("serializes"),
        yaml(CLUSTER_PROPAGATION)
    );
    assert_eq!(
        crate::work::v1alpha1::ConflictPolicy::from(cpp.spec.conflict_resolution),
        crate::work::v1alpha1::ConflictPolicy::Adopt
    );
}

#[test]
fn karmada_override_policy_parses_and_round_trips() {
    let op: OverridePolicy = serde_yaml::from_str(OVERRIDE).expect("parses");
    let rules = &op.spec.override_rules;
    let first = &rules[0].overriders;
    assert_eq!(first.image_overrider[0].component, ImageComponent::Registry);
    assert_eq!(
        first.image_overrider[0].operator,
        OverriderOperator::Replace
    );
    assert_eq!(
        first.image_overrider[1]
            .predicate
            .as_ref()
            .map(|p| p.path.as_str()),
        Some("/spec/template/spec/containers/0/image")
    );
    assert_eq!(first.plaintext[0].value, Some(AnyJson(json!(3))));
    assert_eq!(
        first.plaintext[1].value,
        Some(AnyJson(json!({"team": "web"})))
    );
    assert_eq!(first.plaintext[2].value, None);
    let second = &rules[1].overriders;
    assert_eq!(
        second.command_overrider[0].operator,
        CommandArgsOperator::Add
    );
    assert_eq!(second.args_overrider[0].value, ["--quiet"]);
    assert_eq!(second.labels_overrider[0].value["env"], "dev");
    assert_eq!(
        serde_json::to_value(&op).expect("serializes"),
        yaml(OVERRIDE)
    );
    let cop: ClusterOverridePolicy = serde_yaml::from_str(
        &OVERRIDE.replace("kind: OverridePolicy", "kind: ClusterOverridePolicy"),
    )
    .expect("the same spec parses cluster-scoped");
    assert_eq!(*cop.spec, op.spec);
}

#[test]
fn defaults_follow_karmada() {
    let s: PropagationSpec = serde_json::from_value(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "placement": {"replicaScheduling": {}}
    }))
    .expect("a minimal spec parses");
    assert_eq!(s.priority, 0);
    assert_eq!(s.conflict_resolution, ConflictResolution::Abort);
    assert!(!s.propagate_deps);
    let rs = s.placement.replica_scheduling.as_ref().expect("replicas");
    assert_eq!(rs.replica_scheduling_type, ReplicaSchedulingType::Divided);
    assert_eq!(rs.replica_division_preference, None);
}

#[test]
fn wrong_values_are_refused() {
    let base = yaml(PROPAGATION);
    let cases: &[(&str, &str, Value)] = &[
        (
            "scheduling type",
            "/spec/placement/replicaScheduling/replicaSchedulingType",
            json!("Split"),
        ),
        (
            "division",
            "/spec/placement/replicaScheduling/replicaDivisionPreference",
            json!("Even"),
        ),
        (
            "spread field",
            "/spec/placement/spreadConstraints/0/spreadByField",
            json!("country"),
        ),
        ("conflict", "/spec/conflictResolution", json!("Ignore")),
        (
            "weight type",
            "/spec/placement/replicaScheduling/weightPreference/staticWeightList/0/weight",
            json!("heavy"),
        ),
    ];
    for (name, path, bad) in cases {
        let mut v = base.clone();
        *v.pointer_mut(path)
            .unwrap_or_else(|| panic!("{name}: no {path}")) = bad.clone();
        let r: Result<PropagationPolicy, _> = serde_json::from_value(v);
        assert!(r.is_err(), "{name}: {bad} accepted");
    }
    let base = yaml(OVERRIDE);
    let cases: &[(&str, &str, Value)] = &[
        (
            "image component",
            "/spec/overrideRules/0/overriders/imageOverrider/0/component",
            json!("Digest"),
        ),
        (
            "operator",
            "/spec/overrideRules/0/overriders/plaintext/0/operator",
            json!("Replace"),
        ),
        (
            "args operator",
            "/spec/overrideRules/1/overriders/argsOverrider/0/operator",
            json!("replace"),
        ),
    ];
    for (name, path, bad) in cases {
        let mut v = base.clone();
        *v.pointer_mut(path)
            .unwrap_or_else(|| panic!("{name}: no {path}")) = bad.clone();
        let r: Result<OverridePolicy, _> = serde_json::from_value(v);
        assert!(r.is_err(), "{name}: {bad} accepted");
    }
}

/// (CRD, plural, scope, short name, column names)
fn crds() -> Vec<(
    Value,
    &'static str,
    &'static str,
    &'static str,
    Vec<&'static str>,
)> {
    let j = |c| serde_json::to_value(c).expect("the CRD serializes");
    let policy_cols = vec!["Conflict-Resolution", "Priority", "Age"];
    vec![
        (
            j(PropagationPolicy::crd()),
            "propagationpolicies",
            "Namespaced",
            "pp",
            policy_cols.clone(),
        ),
        (
            j(ClusterPropagationPolicy::crd()),
            "clusterpropagationpolicies",
            "Cluster",
            "cpp",
            policy_cols,
        ),
        (
            j(OverridePolicy::crd()),
            "overridepolicies",
            "Namespaced",
            "op",
            vec!["Age"],
        ),
        (
            j(ClusterOverridePolicy::crd()),
            "clusteroverridepolicies",
            "Cluster",
            "cop",
            vec!["Age"],
        ),
    ]
}

#[test]
fn crds_are_structural_described_and_named_as_karmada() {
    for (crd, plural, scope, short, cols) in crds() {
        assert_eq!(crd["metadata"]["name"], format!("{plural}.{GROUP}"));
        assert_eq!(crd["spec"]["scope"], scope, "{plural}");
        assert_eq!(
            crd["spec"]["names"]["shortNames"],
            json!([short]),
            "{plural}"
        );
        assert_eq!(crd["spec"]["names"]["categories"], json!(["flotilla"]));
        let v = version(&crd);
        assert_eq!(v["name"], VERSION);
        let got: Vec<String> = columns(&crd).into_iter().map(|(n, _)| n).collect();
        assert_eq!(got, cols, "{plural}");
        let schema = &v["schema"]["openAPIV3Schema"];
        assert_structural(schema, plural);
        assert!(
            schema["properties"]["spec"]["properties"]["resourceSelectors"].is_object(),
            "{plural}: the spec's fields are inline"
        );
        assert_described(&schema["properties"]["spec"], plural);
    }
}

#[test]
fn schema_carries_enums_defaults_and_free_form_values() {
    let crd = serde_json::to_value(PropagationPolicy::crd()).expect("serializes");
    let spec = &version(&crd)["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], json!(["resourceSelectors"]));
    let p = &spec["properties"];
    assert_eq!(p["resourceSelectors"]["minItems"].as_f64(), Some(1.0));
    assert_eq!(
        p["conflictResolution"]["enum"],
        json!(["Abort", "Overwrite", "Adopt"])
    );
    assert_eq!(p["conflictResolution"]["default"], "Abort");
    assert_eq!(p["priority"]["default"], 0);
    let placement = &p["placement"]["properties"];
    let rs = &placement["replicaScheduling"]["properties"];
    assert_eq!(
        rs["replicaSchedulingType"]["enum"],
        json!(["Duplicated", "Divided"])
    );
    assert_eq!(rs["replicaSchedulingType"]["default"], "Divided");
    let weight =
        &rs["weightPreference"]["properties"]["staticWeightList"]["items"]["properties"]["weight"];
    assert_eq!(weight["minimum"].as_f64(), Some(1.0));
    assert_eq!(
        placement["spreadConstraints"]["items"]["properties"]["spreadByField"]["enum"],
        json!(["cluster", "region", "zone", "provider"])
    );
    let term = &placement["clusterAffinities"]["items"];
    assert_eq!(term["required"], json!(["affinityName"]));
    for k in ["clusterNames", "exclude", "labelSelector", "fieldSelector"] {
        assert!(
            term["properties"][k].is_object(),
            "clusterAffinities[] lacks {k}"
        );
    }

    let crd = serde_json::to_value(OverridePolicy::crd()).expect("serializes");
    let o = &version(&crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["overrideRules"]["items"]["properties"]["overriders"]["properties"];
    let value = &o["plaintext"]["items"]["properties"]["value"];
    assert_eq!(value["x-kubernetes-preserve-unknown-fields"], true);
    assert!(
        value.get("type").is_none(),
        "any JSON, not only objects: {value}"
    );
    assert_eq!(
        o["argsOverrider"]["items"]["properties"]["operator"]["enum"],
        json!(["add", "remove"])
    );
    assert_eq!(
        o["imageOverrider"]["items"]["properties"]["component"]["enum"],
        json!(["Registry", "Repository", "Tag"])
    );
}

#[test]
fn description_check_reaches_nested_kubernetes_types() {
    let crd = serde_json::to_value(ClusterPropagationPolicy::crd()).expect("serializes");
    let spec = &version(&crd)["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let tol = &spec["properties"]["placement"]["properties"]["clusterTolerations"]["items"];
    assert!(tol["properties"]["tolerationSeconds"]["description"].is_string());
    let mut missing = spec.clone();
    missing["properties"]["placement"]["properties"]["clusterTolerations"]["items"]["properties"]
        ["key"]
        .as_object_mut()
        .expect("key")
        .remove("description");
    let r = std::panic::catch_unwind(|| assert_described(&missing, "spec"));
    assert!(r.is_err(), "a missing description went unnoticed");
}
