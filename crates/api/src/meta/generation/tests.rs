use serde_json::json;

use super::*;
use crate::registry::served_for_test as res;

#[test]
fn only_kinds_with_a_spec_controllers_watch_have_one() {
    for (group, plural) in [
        ("apps", "deployments"),
        ("apps", "statefulsets"),
        ("apps", "daemonsets"),
        ("apps", "replicasets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("policy", "poddisruptionbudgets"),
        ("networking.k8s.io", "ingresses"),
        ("networking.k8s.io", "networkpolicies"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
    ] {
        assert!(tracked(&res(group, plural)), "{plural}");
    }
    for (group, plural) in [
        ("", "configmaps"),
        ("", "secrets"),
        ("", "serviceaccounts"),
        ("", "services"),
        ("", "namespaces"),
        ("", "events"),
        ("", "persistentvolumeclaims"),
        ("autoscaling", "horizontalpodautoscalers"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("coordination.k8s.io", "leases"),
    ] {
        assert!(!tracked(&res(group, plural)), "{plural}");
    }
    let mut cr = res("", "configmaps");
    cr.custom = true;
    assert!(tracked(&cr));
}

#[test]
fn updates_move_it_as_kube_apiserver_does() {
    let deploy = res("apps", "deployments");
    let old = json!({"metadata": {"generation": 3, "labels": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = old.clone();
        f(&mut v);
        v
    };
    // Requests cannot set it.
    let forged = with(&|v| v["metadata"]["generation"] = json!(9));
    assert_eq!(after_update(&deploy, &old, &forged), Some(3));
    let labels = with(&|v| v["metadata"]["labels"]["a"] = json!("2"));
    assert_eq!(after_update(&deploy, &old, &labels), Some(3));
    let status = with(&|v| v["status"]["replicas"] = json!(2));
    assert_eq!(after_update(&deploy, &old, &status), Some(3));
    let spec = with(&|v| v["spec"]["replicas"] = json!(2));
    assert_eq!(after_update(&deploy, &old, &spec), Some(4));
    // Deployments (only) count annotations.
    let annotated = with(&|v| v["metadata"]["annotations"] = json!({"note": "x"}));
    assert_eq!(after_update(&deploy, &old, &annotated), Some(4));
    assert_eq!(
        after_update(&res("apps", "replicasets"), &old, &annotated),
        Some(3)
    );

    // Kinds without one keep whatever is stored, and get none.
    let cm = res("", "configmaps");
    let old_cm = json!({"metadata": {}, "data": {"a": "1"}});
    let new_cm = json!({"metadata": {"generation": 5}, "data": {"a": "2"}});
    assert_eq!(after_update(&cm, &old_cm, &new_cm), None);

    // Custom resources: every change outside metadata, status too unless it is a
    // subresource.
    let mut cr = res("", "configmaps");
    cr.custom = true;
    let old_cr =
        json!({"metadata": {"generation": 1}, "spec": {"a": 1}, "status": {"s": 1}, "extra": 1});
    let mut changed = old_cr.clone();
    changed["extra"] = json!(2);
    assert_eq!(after_update(&cr, &old_cr, &changed), Some(2));
    let mut status_only = old_cr.clone();
    status_only["status"]["s"] = json!(2);
    assert_eq!(after_update(&cr, &old_cr, &status_only), Some(2));
    cr.status = true;
    assert_eq!(after_update(&cr, &old_cr, &status_only), Some(1));
}
