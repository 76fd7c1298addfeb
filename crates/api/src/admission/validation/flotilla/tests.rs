use serde_json::json;

use super::*;

fn res(group: &str, kind: &str) -> ResourceInfo {
    let reg = crate::registry::Registry::new();
    let snap = reg.snapshot();
    let mut r = snap
        .get("", "v1", "configmaps")
        .map(|r| (**r).clone())
        .expect("served");
    r.group = group.to_owned();
    r.kind = kind.to_owned();
    r.custom = true;
    r
}

fn binding(namespace: &str, resource: Value) -> Value {
    json!({"metadata": {"name": "b", "namespace": namespace},
        "spec": {"resource": resource}})
}

/// (object, the fields refused)
#[test]
fn resource_bindings_reach_their_namespace_only() {
    let rb = res("work.flotilla.io", "ResourceBinding");
    let cases = [
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "namespace": "team", "name": "a"}),
            vec![],
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "namespace": "flotilla-system", "name": "k"}),
            vec!["spec.resource", "spec.resource.namespace"],
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "namespace": "other", "name": "k"}),
            vec!["spec.resource.namespace"],
        ),
        (
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "admin"}),
            vec!["spec.resource.namespace"],
        ),
        (
            json!({"apiVersion": "work.flotilla.io/v1alpha1", "kind": "Work", "namespace": "team", "name": "w"}),
            vec!["spec.resource"],
        ),
    ];
    for (resource, want) in cases {
        let got: Vec<String> = causes(&rb, None, &binding("team", resource.clone()))
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(got, want, "{resource}");
    }
    let crb = res("work.flotilla.io", "ClusterResourceBinding");
    let cluster_scoped = json!({"metadata": {"name": "b"}, "spec": {"resource":
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "admin"}}});
    assert!(causes(&crb, None, &cluster_scoped).is_empty());
}

#[test]
fn updates_are_judged_on_what_they_change() {
    let rb = res("work.flotilla.io", "ResourceBinding");
    let bad = binding(
        "team",
        json!({"apiVersion": "v1", "kind": "Secret", "namespace": "other", "name": "k"}),
    );
    let mut status = bad.clone();
    status["status"] = json!({"conditions": []});
    assert!(
        causes(&rb, Some(&bad), &status).is_empty(),
        "a status write on a stored binding"
    );
    let good = binding(
        "team",
        json!({"apiVersion": "v1", "kind": "Secret", "namespace": "team", "name": "k"}),
    );
    assert!(
        !causes(&rb, Some(&good), &bad).is_empty(),
        "a change into another namespace"
    );
}

#[test]
fn overriders_keep_the_identity() {
    let op = res("policy.flotilla.io", "OverridePolicy");
    let policy = json!({"metadata": {"name": "p", "namespace": "team"}, "spec": {"overrideRules": [
        {"overriders": {"plaintext": [
            {"path": "/metadata/labels/a", "operator": "add", "value": "b"},
            {"path": "/metadata/namespace", "operator": "replace", "value": "kube-system"}]}},
        {"overriders": {
            "plaintext": [{"path": "/kind", "operator": "replace", "value": "ClusterRole"}],
            "imageOverrider": [
                {"component": "Registry", "operator": "add", "value": "r.io"},
                {"predicate": {"path": "/metadata/name"}, "component": "Tag", "operator": "replace", "value": "x"}]}}]}});
    let got = causes(&op, None, &policy);
    let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.overrideRules[0].overriders.plaintext[1].path",
            "spec.overrideRules[1].overriders.plaintext[0].path",
            "spec.overrideRules[1].overriders.imageOverrider[1].predicate.path",
        ]
    );
    assert!(
        got[0]
            .1
            .starts_with(r#"Invalid value: "/metadata/namespace": overriders may not"#),
        "{}",
        got[0].1
    );
    let cop = res("policy.flotilla.io", "ClusterOverridePolicy");
    assert_eq!(causes(&cop, None, &policy).len(), 3);
}

#[test]
fn push_secrets_are_in_the_system_namespace() {
    let c = res("cluster.flotilla.io", "Cluster");
    let cluster = |ns: &str| {
        json!({"metadata": {"name": "m"}, "spec": {"syncMode": "Push",
        "secretRef": {"namespace": ns, "name": "s"}}})
    };
    assert!(causes(&c, None, &cluster("flotilla-system")).is_empty());
    let got = causes(&c, None, &cluster("team"));
    assert_eq!(
        got,
        vec![(
            "spec.secretRef.namespace".to_owned(),
            r#"Unsupported value: "team": supported values: "flotilla-system""#.to_owned()
        )]
    );
    assert!(causes(&c, None, &json!({"metadata": {"name": "m"}, "spec": {}})).is_empty());
}

#[test]
fn a_new_cluster_may_not_take_a_controller_lease_name() {
    let c = res("cluster.flotilla.io", "Cluster");
    for name in ["flotilla-shard-3", "flotilla-controller-a"] {
        let got = causes(&c, None, &json!({"metadata": {"name": name}, "spec": {}}));
        assert_eq!(got.len(), 1, "{name}: {got:?}");
        assert_eq!(got[0].0, "metadata.name");
    }
    let fine = json!({"metadata": {"name": "flotilla-east"}, "spec": {}});
    assert!(causes(&c, None, &fine).is_empty());
}

#[test]
fn resource_interpreters_with_bad_rules_are_refused_naming_the_rule() {
    let ri = res("config.flotilla.io", "ResourceInterpreter");
    let good = json!({"metadata": {"name": "x"}, "spec": {
        "target": {"apiVersion": "example.com/v1", "kind": "Thing"},
        "health": {"healthy": "self.status.ready == true"}}});
    assert!(causes(&ri, None, &good).is_empty());
    let mut bad = good.clone();
    bad["spec"]["health"]["healthy"] = json!("self.status.ready ==");
    bad["spec"]["reviseReplicas"] = json!({"path": "spec..replicas"});
    let got = causes(&ri, None, &bad);
    let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["spec.reviseReplicas.path", "spec.health.healthy"]);
    assert!(got[1].1.contains("compilation failed"), "{got:?}");
    // An update that leaves the rules alone is not judged again.
    assert!(causes(&ri, Some(&bad), &bad).is_empty());
}

#[test]
fn rollout_strategies_say_durations_counts_and_groups_plainly() {
    let pp = res("policy.flotilla.io", "PropagationPolicy");
    let policy = |strategy: Value| json!({"spec": {"rolloutStrategy": strategy}});
    let good = policy(json!({
        "type": "ProgressivePerGroup", "minSuccessTime": "10s", "progressDeadline": "1m30s",
        "maxConcurrency": "25%", "maxFailures": 1,
        "groups": [{"name": "canary", "clusterAffinity": {}}, {"name": "rest", "clusterAffinity": {}}],
    }));
    assert!(causes(&pp, None, &good).is_empty());
    let bad = policy(json!({
        "minSuccessTime": "ten seconds", "maxConcurrency": "150%", "maxFailures": -1,
        "groups": [{"name": "a", "clusterAffinity": {}}, {"name": "a", "clusterAffinity": {}}, {"name": "*", "clusterAffinity": {}}],
    }));
    let fields: Vec<String> = causes(&pp, None, &bad)
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    assert_eq!(
        fields,
        [
            "spec.rolloutStrategy.minSuccessTime",
            "spec.rolloutStrategy.maxConcurrency",
            "spec.rolloutStrategy.maxFailures",
            "spec.rolloutStrategy.groups[1].name",
            "spec.rolloutStrategy.groups[2].name",
        ]
    );
    // An update leaving the strategy alone is not judged again.
    assert!(causes(&pp, Some(&bad), &bad).is_empty());
}
