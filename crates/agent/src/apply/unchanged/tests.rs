use kube::api::DynamicObject;
use serde_json::{json, Value};

use super::{key, Written};

/// The manifest as the applier sends it (marked with flotilla's label and annotation).
fn manifest() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "labels": {"app": "web", "work.flotilla.io/managed": "true"},
            "annotations": {"work.flotilla.io/owner": "flotilla-es-m1/web"},
        },
        "spec": {"replicas": 3},
    })
}

/// The member's copy: the manifest with what the member adds.
fn member(uid: &str, generation: Option<i64>) -> DynamicObject {
    let mut object = manifest();
    object["metadata"]["uid"] = json!(uid);
    object["metadata"]["resourceVersion"] = json!("17");
    if let Some(g) = generation {
        object["metadata"]["generation"] = json!(g);
    }
    object["metadata"]["labels"]["added-by-someone"] = json!("x");
    object["status"] = json!({"readyReplicas": 3});
    serde_json::from_value(object).unwrap()
}

fn written() -> (Written, String) {
    let written = Written::default();
    let k = key("deployments", Some("shop"), "web");
    written.wrote(k.clone(), Some(4), &member("u1", Some(2)));
    (written, k)
}

#[test]
fn an_object_as_it_was_written_is_unchanged() {
    let (written, k) = written();
    // Its status and labels the manifest does not set may differ.
    assert!(written.unchanged(&k, Some(4), &member("u1", Some(2)), &manifest()));
}

#[test]
fn a_new_spec_generation_uid_or_work_generation_is_a_change() {
    let (written, k) = written();
    assert!(!written.unchanged(&k, Some(4), &member("u1", Some(3)), &manifest()));
    assert!(!written.unchanged(&k, Some(4), &member("u2", Some(2)), &manifest()));
    assert!(!written.unchanged(&k, Some(5), &member("u1", Some(2)), &manifest()));
    assert!(!written.unchanged(&k, None, &member("u1", Some(2)), &manifest()));
}

#[test]
fn a_label_or_annotation_of_the_manifest_changed_in_the_member_is_a_change() {
    let (written, k) = written();
    let mut relabelled = member("u1", Some(2));
    relabelled
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("app".into(), "other".into());
    assert!(!written.unchanged(&k, Some(4), &relabelled, &manifest()));
    let mut unannotated = member("u1", Some(2));
    unannotated.metadata.annotations = None;
    assert!(!written.unchanged(&k, Some(4), &unannotated, &manifest()));
}

#[test]
fn manifests_setting_other_metadata_are_always_written() {
    let (written, k) = written();
    let mut with_finalizer = manifest();
    with_finalizer["metadata"]["finalizers"] = json!(["example.com/keep"]);
    assert!(!written.unchanged(&k, Some(4), &member("u1", Some(2)), &with_finalizer));
}

#[test]
fn objects_without_a_generation_or_forgotten_are_never_unchanged() {
    let written = Written::default();
    let k = key("configmaps", Some("shop"), "web");
    written.wrote(k.clone(), Some(4), &member("u1", None));
    assert!(!written.unchanged(&k, Some(4), &member("u1", None), &manifest()));

    let (written, k) = written_then_forgotten();
    assert!(!written.unchanged(&k, Some(4), &member("u1", Some(2)), &manifest()));
}

fn written_then_forgotten() -> (Written, String) {
    let (written, k) = written();
    written.forget(&k);
    (written, k)
}

#[test]
fn a_later_write_without_a_generation_drops_the_record() {
    let (written, k) = written();
    written.wrote(k.clone(), Some(4), &member("u1", None));
    assert!(!written.unchanged(&k, Some(4), &member("u1", Some(2)), &manifest()));
}
