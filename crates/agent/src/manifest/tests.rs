use serde_json::json;

use super::*;

fn manifests(values: Vec<Value>) -> Vec<Manifest> {
    values.into_iter().map(Manifest).collect()
}

#[test]
fn namespaces_and_crds_go_first_in_manifest_order() {
    let ms = manifests(vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
        json!({"apiVersion": "v1", "kind": "ConfigMap"}),
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}),
        json!({"apiVersion": "example.com/v1", "kind": "Namespace"}),
        json!({"apiVersion": "v1", "kind": "Namespace"}),
        json!({"apiVersion": "example.com/v1", "kind": "Widget"}),
    ]);
    assert_eq!(apply_order(&ms), [2, 4, 0, 1, 3, 5]);
    assert_eq!(apply_order(&[]), Vec::<usize>::new());
}

#[test]
fn hub_fields_and_status_are_stripped_and_the_rest_kept() {
    let mut obj = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": "a", "namespace": "n", "labels": {"x": "y"},
            "resourceVersion": "7", "uid": "u", "creationTimestamp": "2025-01-01T00:00:00Z",
            "generation": 3, "managedFields": [{}], "selfLink": "/x",
            "ownerReferences": [{"kind": "ResourceBinding"}]
        },
        "data": {"k": "v"},
        "status": {"phase": "x"}
    });
    strip_hub_fields(&mut obj);
    assert_eq!(
        obj,
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "n", "labels": {"x": "y"}},
            "data": {"k": "v"}
        })
    );
}

#[test]
fn mark_sets_namespace_and_owner_keeping_other_annotations() {
    let mut obj = json!({"metadata": {"name": "a", "annotations": {"keep": "me"}}});
    mark(&mut obj, Some("ns"), "flotilla-es-m/w");
    assert_eq!(
        obj["metadata"],
        json!({"name": "a", "namespace": "ns",
               "annotations": {"keep": "me", OWNER_ANNOTATION: "flotilla-es-m/w"},
               "labels": {MANAGED_LABEL: "true"}})
    );
    let mut bare = json!({"kind": "Namespace"});
    mark(&mut bare, None, "o");
    assert_eq!(
        bare["metadata"],
        json!({"annotations": {OWNER_ANNOTATION: "o"}, "labels": {MANAGED_LABEL: "true"}})
    );
}

#[test]
fn refs_split_api_version_and_require_names() {
    let r = ManifestRef::of(
        2,
        &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}}),
    )
    .expect("valid");
    assert_eq!((r.group.as_str(), r.version.as_str()), ("apps", "v1"));
    assert_eq!(r.namespace, None);
    let core = ManifestRef::of(
        0,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}),
    )
    .expect("valid");
    assert_eq!((core.group.as_str(), core.version.as_str()), ("", "v1"));
    assert_eq!(core.describe(None), "ConfigMap n/c");
    for bad in [
        json!({"kind": "ConfigMap", "metadata": {"name": "c"}}),
        json!({"apiVersion": "v1", "metadata": {"name": "c"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
    ] {
        assert!(matches!(
            ManifestRef::of(0, &bad),
            Err(Error::InvalidManifest(_))
        ));
    }
}
