use serde_json::json;

use super::*;

#[test]
fn identity_pointers() {
    for (pointer, touches) in [
        ("", true),
        ("/apiVersion", true),
        ("/kind", true),
        ("/metadata", true),
        ("/metadata/name", true),
        ("/metadata/namespace", true),
        ("/metadata/generateName", true),
        ("/metadata/labels", false),
        ("/metadata/labels/name", false),
        ("/metadata/annotations/kind", false),
        ("/spec/template/metadata/namespace", false),
        ("/spec/kind", false),
        ("/status", false),
        ("metadata/name", false),
        ("/meta~1data", false),
    ] {
        assert_eq!(touches_identity(pointer), touches, "{pointer:?}");
    }
}

#[test]
fn identity_changes_name_the_field() {
    let before = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "team", "labels": {"x": "1"}}});
    let mut after = before.clone();
    after["metadata"]["labels"]["x"] = json!("2");
    assert_eq!(identity_change(&before, &after), None);
    assert_eq!(identity_change(&identity(&before), &after), None);
    after["metadata"]["namespace"] = json!("kube-system");
    assert_eq!(
        identity_change(&before, &after).as_deref(),
        Some(r#"metadata.namespace: "team" → "kube-system""#)
    );
    let mut gone = before.clone();
    if let Some(m) = gone["metadata"].as_object_mut() {
        m.remove("namespace");
    }
    assert_eq!(
        identity_change(&identity(&before), &gone).as_deref(),
        Some(r#"metadata.namespace: "team" → nothing"#)
    );
    let mut kind = before.clone();
    kind["kind"] = json!("ClusterRole");
    assert!(identity_change(&before, &kind).is_some_and(|m| m.starts_with("kind:")));
}

#[test]
fn bindings_reach_their_own_namespace_only() {
    assert_eq!(binding_reference("team", Some("team")), None);
    let other = binding_reference("team", Some("flotilla-system")).unwrap_or_default();
    assert!(other.contains("not of flotilla-system"), "{other}");
    let cluster = binding_reference("team", None).unwrap_or_default();
    assert!(cluster.contains("cluster-scoped"), "{cluster}");
    assert!(binding_reference("team", Some("")).is_some());
}

#[test]
fn the_hub_keeps_its_own() {
    assert!(hub_internal("v1", Some("flotilla-system")).is_some());
    assert!(hub_internal("v1", Some("flotilla-es-member-1")).is_some());
    assert!(hub_internal("work.flotilla.io/v1alpha1", Some("team")).is_some());
    assert!(hub_internal("cluster.flotilla.io/v1alpha1", None).is_some());
    assert_eq!(hub_internal("v1", Some("team")), None);
    assert_eq!(hub_internal("rbac.authorization.k8s.io/v1", None), None);
    assert_eq!(hub_internal("example.io/v1", Some("flotilla")), None);
}

#[test]
fn push_secrets_live_in_the_system_namespace() {
    assert_eq!(push_secret_namespace("flotilla-system"), None);
    assert!(push_secret_namespace("team").is_some());
}
