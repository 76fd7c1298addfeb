use serde_json::json;

use super::*;
use crate::registry::Registry;

/// A resource of `group`/`plural` with a status subresource (built from a served one, so the
/// test does not depend on which kinds the registry serves today).
fn res(group: &str, plural: &str, custom: bool) -> ResourceInfo {
    let snap = Registry::new().snapshot();
    let mut r = snap
        .all()
        .find(|r| r.plural == "namespaces")
        .map(|r| (**r).clone())
        .expect("namespaces are served");
    r.group = group.into();
    r.plural = plural.into();
    r.custom = custom;
    r.status = true;
    r
}

fn old() -> Value {
    json!({
        "metadata": {"name": "x", "resourceVersion": "5", "labels": {"a": "1"},
                     "annotations": {"keep": "old"}, "finalizers": ["f/old"],
                     "ownerReferences": [{"name": "o"}]},
        "spec": {"v": "old"},
        "status": {"phase": "Old"}
    })
}

/// A status patch's result: new status, a new annotation and label, the spec changed too.
fn sent() -> Value {
    json!({
        "metadata": {"name": "x", "resourceVersion": "5", "labels": {"a": "2"},
                     "annotations": {"keep": "old", "patched": "yes"}, "finalizers": ["f/old"]},
        "spec": {"v": "new"},
        "status": {"phase": "New"}
    })
}

#[test]
fn status_updates_keep_the_metadata_each_kind_keeps() {
    // (group, plural, custom, labels, annotations, ownerReferences kept from the client?)
    let cases = [
        ("", "namespaces", false, true, true, true),
        ("", "services", false, true, true, true),
        ("networking.k8s.io", "ingresses", false, true, true, true),
        ("batch", "cronjobs", false, true, true, true),
        ("policy", "poddisruptionbudgets", false, true, true, true),
        (
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            false,
            true,
            true,
            true,
        ),
        ("apps", "deployments", false, false, true, true),
        ("", "pods", false, true, true, false),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
            false,
            false,
            false,
            false,
        ),
        (
            "storage.k8s.io",
            "volumeattachments",
            false,
            false,
            false,
            false,
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "flowschemas",
            false,
            false,
            false,
            false,
        ),
        ("example.com", "widgets", true, false, false, false),
    ];
    for (group, plural, custom, labels, annotations, owners) in cases {
        let r = res(group, plural, custom);
        let out = merge_for_subresource(&r, Some("status"), &old(), sent());
        assert_eq!(
            out["status"]["phase"], "New",
            "{plural}: status is the client's"
        );
        assert_eq!(out["spec"]["v"], "old", "{plural}: spec stays as stored");
        assert_eq!(
            out["metadata"]["resourceVersion"], "5",
            "{plural}: the client's precondition"
        );
        let label = if labels { "2" } else { "1" };
        assert_eq!(out["metadata"]["labels"]["a"], label, "{plural}: labels");
        assert_eq!(
            out["metadata"]["annotations"].get("patched").is_some(),
            annotations,
            "{plural}: annotations"
        );
        assert_eq!(
            out["metadata"].get("ownerReferences").is_none(),
            owners,
            "{plural}: ownerReferences"
        );
    }
}

#[test]
fn a_status_update_without_status_removes_it_and_the_main_resource_keeps_it() {
    let r = res("", "services", false);
    let mut no_status = sent();
    no_status.as_object_mut().unwrap().remove("status");
    let out = merge_for_subresource(&r, Some("status"), &old(), no_status);
    assert!(out.get("status").is_none());

    let out = merge_for_subresource(&r, None, &old(), sent());
    assert_eq!(out["status"]["phase"], "Old");
    assert_eq!(out["spec"]["v"], "new");
    assert_eq!(out["metadata"]["annotations"]["patched"], "yes");
}

#[test]
fn finalize_changes_only_the_finalizers() {
    let r = res("", "namespaces", false);
    let mut new = sent();
    new["spec"]["finalizers"] = json!([]);
    let out = merge_for_subresource(&r, Some("finalize"), &old(), new);
    assert_eq!(out["spec"], json!({"v": "old", "finalizers": []}));
    assert_eq!(out["metadata"], old()["metadata"]);
}
