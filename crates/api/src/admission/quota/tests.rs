use serde_json::{json, Value};

use super::scopes::{self, Scope};
use super::usage::{counted_resource, format_amount, usage, Usage};

fn u(pairs: &[(&str, i64)]) -> Usage {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
}

fn container(requests: Value, limits: Value) -> Value {
    json!({"name": "c", "image": "i", "resources": {"requests": requests, "limits": limits}})
}

#[test]
fn usage_of_objects_as_kube_evaluators_count_it() {
    let cases: Vec<(&str, &str, &str, Value, Usage)> = vec![
        (
            "configmap",
            "",
            "configmaps",
            json!({}),
            u(&[("configmaps", 1000), ("count/configmaps", 1000)]),
        ),
        (
            "custom resource",
            "stable.example.com",
            "widgets",
            json!({}),
            u(&[("count/widgets.stable.example.com", 1000)]),
        ),
        (
            "nodeport service",
            "",
            "services",
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}}),
            u(&[
                ("count/services", 1000),
                ("services", 1000),
                ("services.loadbalancers", 0),
                ("services.nodeports", 2000),
            ]),
        ),
        (
            "load balancer without node ports",
            "",
            "services",
            json!({"spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
                "ports": [{"port": 80}, {"port": 81, "nodePort": 30001}]}}),
            u(&[
                ("count/services", 1000),
                ("services", 1000),
                ("services.loadbalancers", 1000),
                ("services.nodeports", 1000),
            ]),
        ),
        (
            "claim of a storage class",
            "",
            "persistentvolumeclaims",
            json!({"spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1Gi"}}}}),
            u(&[
                ("count/persistentvolumeclaims", 1000),
                ("persistentvolumeclaims", 1000),
                ("requests.storage", 1000 << 30),
                (
                    "gold.storageclass.storage.k8s.io/persistentvolumeclaims",
                    1000,
                ),
                (
                    "gold.storageclass.storage.k8s.io/requests.storage",
                    1000 << 30,
                ),
            ]),
        ),
        (
            "pod: requests, limits (a missing request is the limit), extended resources",
            "",
            "pods",
            pod(json!({"containers": [
                container(json!({"cpu": "500m", "example.com/dongle": "2"}),
                          json!({"memory": "1Gi", "example.com/dongle": "2"})),
                container(json!({"cpu": "250m"}), json!({})),
            ]})),
            u(&[
                ("count/pods", 1000),
                ("pods", 1000),
                ("cpu", 750),
                ("requests.cpu", 750),
                ("memory", 1000 << 30),
                ("requests.memory", 1000 << 30),
                ("limits.memory", 1000 << 30),
                ("requests.example.com/dongle", 2000),
            ]),
        ),
        (
            "pod: an init container asking more sets the request",
            "",
            "pods",
            pod(json!({
                "containers": [container(json!({"cpu": "100m"}), json!({}))],
                "initContainers": [container(json!({"cpu": "1"}), json!({}))],
            })),
            u(&[
                ("count/pods", 1000),
                ("pods", 1000),
                ("cpu", 1000),
                ("requests.cpu", 1000),
            ]),
        ),
        (
            "terminal pod: only its object count",
            "",
            "pods",
            json!({"spec": {"containers": [container(json!({"cpu": "1"}), json!({}))]},
                   "status": {"phase": "Succeeded"}}),
            u(&[("count/pods", 1000)]),
        ),
        (
            "pod deleted past its grace period: only its object count",
            "",
            "pods",
            json!({"metadata": {"deletionTimestamp": "2020-01-01T00:00:00Z",
                                "deletionGracePeriodSeconds": 30},
                   "spec": {"containers": []}}),
            u(&[("count/pods", 1000)]),
        ),
    ];
    let now = chrono::Utc::now().timestamp();
    for (name, group, plural, obj, want) in cases {
        assert_eq!(usage(group, plural, &obj, now), want, "{name}");
    }
}

#[test]
fn quota_resource_names_name_what_they_count() {
    let core = |p: &str| Some((String::new(), p.to_string()));
    let cases = [
        ("configmaps", core("configmaps")),
        ("count/configmaps", core("configmaps")),
        (
            "count/replicasets.apps",
            Some(("apps".into(), "replicasets".into())),
        ),
        (
            "count/crontabs.stable.example.com",
            Some(("stable.example.com".into(), "crontabs".into())),
        ),
        ("services.nodeports", core("services")),
        ("requests.storage", core("persistentvolumeclaims")),
        (
            "gold.storageclass.storage.k8s.io/requests.storage",
            core("persistentvolumeclaims"),
        ),
        ("limits.cpu", core("pods")),
        ("requests.example.com/dongle", core("pods")),
        ("memory", core("pods")),
        ("example.com/unknown", None),
    ];
    for (name, want) in cases {
        assert_eq!(counted_resource(name), want, "{name}");
    }
}

#[test]
fn amounts_read_as_kube_prints_them() {
    let cases = [
        (0, "0"),
        (2000, "2"),
        (500, "500m"),
        (1500, "1500m"),
        ((252 * 1000) << 20, "252Mi"),
        ((10 * 1000) << 30, "10Gi"),
        (1024 * 1000, "1024"),
    ];
    for (millis, want) in cases {
        assert_eq!(format_amount(millis), want, "{millis}");
    }
}

#[test]
fn scopes_select_pods() {
    let quota = json!({"spec": {"scopes": ["NotTerminating"], "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["gold"]}]}}});
    assert_eq!(
        scopes::of_quota(&quota),
        [
            Scope {
                name: "NotTerminating".into(),
                operator: "Exists".into(),
                values: vec![]
            },
            Scope {
                name: "PriorityClass".into(),
                operator: "In".into(),
                values: vec!["gold".into()]
            }
        ]
    );
    let best_effort = pod(json!({"containers": [{"name": "c"}]}));
    let burstable = pod(json!({"containers": [container(json!({"cpu": "1"}), json!({}))]}));
    let terminating = pod(json!({"activeDeadlineSeconds": 60, "containers": []}));
    let gold = pod(json!({"priorityClassName": "gold", "containers": []}));
    let cross = pod(json!({"containers": [], "affinity": {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "z", "namespaceSelector": {}}}]}}}));
    let scope = |name: &str, op: &str, values: &[&str]| Scope {
        name: name.into(),
        operator: op.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    };
    let cases = [
        (scope("BestEffort", "Exists", &[]), &best_effort, true),
        (scope("BestEffort", "Exists", &[]), &burstable, false),
        (scope("NotBestEffort", "Exists", &[]), &burstable, true),
        (scope("Terminating", "Exists", &[]), &terminating, true),
        (scope("Terminating", "Exists", &[]), &best_effort, false),
        (scope("NotTerminating", "Exists", &[]), &best_effort, true),
        (scope("PriorityClass", "In", &["gold"]), &gold, true),
        (scope("PriorityClass", "NotIn", &["gold"]), &gold, false),
        (
            scope("PriorityClass", "NotIn", &["gold"]),
            &best_effort,
            true,
        ),
        (scope("PriorityClass", "Exists", &[]), &best_effort, false),
        (scope("PriorityClass", "Exists", &[]), &gold, true),
        (
            scope("PriorityClass", "DoesNotExist", &[]),
            &best_effort,
            false,
        ),
        (
            scope("CrossNamespacePodAffinity", "Exists", &[]),
            &cross,
            true,
        ),
        (
            scope("CrossNamespacePodAffinity", "Exists", &[]),
            &gold,
            false,
        ),
    ];
    for (i, (s, p, want)) in cases.iter().enumerate() {
        let got = scopes::matches(std::slice::from_ref(s), "", "pods", p);
        assert_eq!(got, *want, "case {i}: {s:?}");
    }
    // Scopes track pods only; no scope tracks everything.
    let s = scope("NotTerminating", "Exists", &[]);
    assert!(!scopes::matches(&[s], "", "configmaps", &json!({})));
    assert!(scopes::matches(&[], "", "configmaps", &json!({})));
}

/// Admission and the status loop on a real API: the status follows what is stored, and the
/// next object past the hard limit is refused in kube's words.
#[tokio::test]
async fn admission_and_status_agree() {
    use std::time::Duration;

    use crate::objects::commit_create;
    use crate::request::RequestInfo;
    use crate::Api;

    let dir = tempfile::tempdir().expect("temp dir");
    let api = Api::for_tests(dir.path()).await;
    let snap = api.registry.snapshot();
    let rq = snap
        .get("", "v1", "resourcequotas")
        .cloned()
        .expect("quotas served");
    let cms = snap
        .get("", "v1", "configmaps")
        .cloned()
        .expect("configmaps served");
    let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "default"},
        "spec": {"hard": {"configmaps": "1"}}});
    commit_create(&api, &rq, quota, None, false)
        .await
        .expect("create the quota");
    let used = |api: &Api| {
        api.cache
            .get(&rq.key(Some("default"), "q"))
            .map(|o| o.value()["status"]["used"]["configmaps"].clone())
    };
    let wait_used = |want: &'static str| {
        let api = api.clone();
        async move {
            for _ in 0..100 {
                if used(&api) == Some(json!(want)) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("used never read {want}: {:?}", used(&api));
        }
    };
    wait_used("0").await;
    let info = RequestInfo::parse(
        &http::Method::POST,
        "/api/v1/namespaces/default/configmaps",
        false,
    );
    let cm = |name: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": "default"}})
    };
    super::admit(&api, &info, &cms, None, &cm("a")).expect("the first fits");
    commit_create(&api, &cms, cm("a"), None, false)
        .await
        .expect("create a");
    wait_used("1").await;
    let e = super::admit(&api, &info, &cms, None, &cm("b")).expect_err("past the limit");
    assert_eq!(e.code, 403);
    assert_eq!(e.reason, "Forbidden");
    assert_eq!(
        e.message,
        "configmaps \"b\" is forbidden: exceeded quota: q, requested: configmaps=1, \
         used: configmaps=1, limited: configmaps=1"
    );
}

/// Kinds that use one unit each are counted by their keys: an unscoped quota counts every
/// object under both of its names, a scoped one (scopes judge pods only) none.
#[tokio::test]
async fn counted_kinds_are_counted_without_reading_them() {
    use crate::objects::commit_create;
    use crate::Api;

    let dir = tempfile::tempdir().expect("temp dir");
    let api = Api::for_tests(dir.path()).await;
    let cms = api
        .registry
        .snapshot()
        .get("", "v1", "configmaps")
        .cloned()
        .expect("configmaps served");
    let namespaces = api.registry.snapshot().get("", "v1", "namespaces").cloned();
    let other = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
    commit_create(
        &api,
        &namespaces.expect("namespaces served"),
        other,
        None,
        false,
    )
    .await
    .expect("create a namespace");
    for (ns, name) in [("default", "a"), ("default", "b"), ("other", "c")] {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name, "namespace": ns}});
        commit_create(&api, &cms, cm, None, false)
            .await
            .expect("create a configmap");
    }
    api.cache.sync().await.expect("cache in sync");
    let unscoped = json!({"spec": {"hard": {"configmaps": "9", "count/configmaps": "9"}}});
    let used = super::used(&api, "default", &unscoped, 0);
    assert_eq!(used.get("configmaps"), Some(&2000));
    assert_eq!(used.get("count/configmaps"), Some(&2000));
    let scoped = json!({"spec": {"hard": {"configmaps": "9"}, "scopes": ["BestEffort"]}});
    let used = super::used(&api, "default", &scoped, 0);
    assert_eq!(used.get("configmaps"), Some(&0));
}
