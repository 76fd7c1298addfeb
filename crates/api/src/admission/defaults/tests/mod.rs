//! What kube-apiserver 1.32 returns for minimal objects of each defaulted kind: the kinds with
//! their own defaulting module are tested beside it (`workloads`, `pod`, `service`); here the small
//! kinds, the shared helpers, and what holds for every kind (idempotence, canonical quantities).

use serde_json::{json, Value};

use super::*;
use crate::registry::Registry;

mod pod;
mod service;
mod stored_kinds;
mod workloads;

fn res(group: &str, version: &str, plural: &str) -> ResourceInfo {
    let snap = Registry::new().snapshot();
    let r = snap.get(group, version, plural).map(|r| (**r).clone());
    r.unwrap_or_else(|| panic!("{group}/{version}/{plural} is not served"))
}

fn defaulted(group: &str, version: &str, plural: &str, mut obj: Value) -> Value {
    apply(&res(group, version, plural), &mut obj);
    obj
}

/// The pod spec kube-apiserver returns for one container `c` of image `image`.
fn pod_spec(image: &str, pull: &str) -> Value {
    json!({
        "containers": [{
            "name": "c", "image": image, "imagePullPolicy": pull,
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        }],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
        "securityContext": {}, "terminationGracePeriodSeconds": 30,
    })
}

fn template(image: &str) -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}})
}

#[test]
fn small_kinds_and_what_is_left_alone() {
    let mut ns =
        json!({"metadata": {"name": "demo", "labels": {"kubernetes.io/metadata.name": "other"}}});
    on_create(&res("", "v1", "namespaces"), &mut ns);
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(ns["spec"]["finalizers"][0], "kubernetes");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "demo"
    );
    let secret = defaulted("", "v1", "secrets", json!({"data": {}}));
    assert_eq!(secret["type"], "Opaque");
    let np = defaulted(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let rb = defaulted(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}),
    );
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(rb["subjects"][1].get("apiGroup").is_none());
    let pvc = defaulted("", "v1", "persistentvolumeclaims", json!({"spec": {}}));
    assert_eq!(
        (
            pvc["spec"]["volumeMode"].as_str(),
            pvc["status"]["phase"].as_str()
        ),
        (Some("Filesystem"), Some("Pending"))
    );
    // Kinds without defaults, and custom resources, are untouched.
    for (g, v, p) in [
        ("", "v1", "configmaps"),
        ("", "v1", "serviceaccounts"),
        ("coordination.k8s.io", "v1", "leases"),
    ] {
        let obj = json!({"metadata": {"name": "x"}, "spec": {}});
        assert_eq!(defaulted(g, v, p, obj.clone()), obj);
    }
    let mut custom = res("apps", "v1", "deployments");
    custom.custom = true;
    let mut obj = json!({"spec": {}});
    apply(&custom, &mut obj);
    assert_eq!(obj, json!({"spec": {}}));
}

#[test]
fn defaulting_twice_changes_nothing() {
    let cases = [
        (
            "apps",
            "v1",
            "deployments",
            json!({"spec": {"template": template("nginx")}}),
        ),
        (
            "apps",
            "v1",
            "statefulsets",
            json!({"spec": {"template": template("nginx")}}),
        ),
        (
            "batch",
            "v1",
            "cronjobs",
            json!({"spec": {"jobTemplate": {"spec": {"template": template("x")}}}}),
        ),
        (
            "",
            "v1",
            "services",
            json!({"spec": {"ports": [{"port": 1}]}}),
        ),
    ];
    for (g, v, p, obj) in cases {
        let once = defaulted(g, v, p, obj);
        assert_eq!(defaulted(g, v, p, once.clone()), once, "{p}");
    }
}

#[test]
fn secret_string_data_is_merged_into_data_and_never_stored() {
    let s = defaulted(
        "",
        "v1",
        "secrets",
        json!({"metadata": {"name": "s"}, "data": {"a": "b2xk", "keep": "eA=="},
               "stringData": {"a": "new", "token": "s3cret"}}),
    );
    assert_eq!(
        s,
        json!({"metadata": {"name": "s"}, "type": "Opaque",
               "data": {"a": "bmV3", "keep": "eA==", "token": "czNjcmV0"}})
    );
    let only = defaulted(
        "",
        "v1",
        "secrets",
        json!({"metadata": {"name": "s"}, "type": "kubernetes.io/basic-auth", "stringData": {"username": "u"}}),
    );
    assert_eq!(only["data"], json!({"username": "dQ=="}));
    assert_eq!(only["type"], "kubernetes.io/basic-auth");
    assert!(only.get("stringData").is_none());
}

#[test]
fn resource_quantities_are_stored_in_canonical_form() {
    let d = defaulted(
        "apps",
        "v1",
        "deployments",
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "x:1",
                "resources": {"requests": {"cpu": "0.5", "memory": "1.5Gi"},
                              "limits": {"cpu": "1000m", "memory": "2048Mi"}}}],
            "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1024Mi"}}]}}}}),
    );
    let c = &d["spec"]["template"]["spec"]["containers"][0]["resources"];
    assert_eq!(c["requests"], json!({"cpu": "500m", "memory": "1536Mi"}));
    assert_eq!(c["limits"], json!({"cpu": "1", "memory": "2Gi"}));
    assert_eq!(
        d["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
        "1Gi"
    );
    let pvc = defaulted(
        "",
        "v1",
        "persistentvolumeclaims",
        json!({"spec": {"resources": {"requests": {"storage": "1000Mi"}}}}),
    );
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1000Mi");
    let pvc = defaulted(
        "",
        "v1",
        "persistentvolumeclaims",
        json!({"spec": {"resources": {"requests": {"storage": "0.5Gi"}}}}),
    );
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "512Mi");
}

/// An object with the shapes the defaulting functions look into (a pod template, ports,
/// subsets, a service reference, storage fields), to catch a kind [`any`] passes over that
/// [`apply`] would change.
fn rich() -> Value {
    json!({
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {
            "template": template("nginx"),
            "jobTemplate": {"spec": {"template": template("nginx")}},
            "containers": [{"name": "c", "image": "nginx"}],
            "ports": [{"port": 80}],
            "parameters": {"name": "p"},
            "service": {"name": "s", "namespace": "ns"},
            "source": {"inlineVolumeSpec": {}},
            "type": "",
        },
        "subsets": [{"ports": [{"port": 80}]}],
        "ports": [{"port": 80}],
        "rules": [{}],
        "data": {"k": "v"},
    })
}

#[test]
fn a_kind_said_to_have_no_defaults_reads_back_as_stored() {
    let snap = Registry::new().snapshot();
    let mut passed_over = 0;
    for r in snap.all() {
        if any(r) {
            continue;
        }
        passed_over += 1;
        let mut obj = rich();
        apply(r, &mut obj);
        assert_eq!(obj, rich(), "{}/{} has defaults", r.group, r.kind);
    }
    // ConfigMaps, Leases, Roles and the like.
    assert!(
        passed_over > 10,
        "only {passed_over} kinds without defaults"
    );
    for (group, version, plural) in [
        ("", "v1", "configmaps"),
        ("coordination.k8s.io", "v1", "leases"),
    ] {
        assert!(!any(&res(group, version, plural)), "{group}/{plural}");
    }
    for (group, version, plural) in [
        ("apps", "v1", "deployments"),
        ("", "v1", "services"),
        ("", "v1", "pods"),
        ("storage.k8s.io", "v1", "storageclasses"),
    ] {
        assert!(any(&res(group, version, plural)), "{group}/{plural}");
    }
}
