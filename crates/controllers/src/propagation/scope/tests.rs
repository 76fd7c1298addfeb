use serde_json::json;

use super::*;

fn reference(api_version: &str, kind: &str, namespace: Option<&str>) -> ObjectReference {
    ObjectReference {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: namespace.map(str::to_owned),
        name: "x".into(),
        ..ObjectReference::default()
    }
}

/// (binding namespace, reference, refused?)
#[test]
fn references() {
    let cases = [
        (
            Some("team"),
            reference("v1", "ConfigMap", Some("team")),
            false,
        ),
        (
            Some("team"),
            reference("v1", "Secret", Some("flotilla-system")),
            true,
        ),
        (Some("team"), reference("v1", "Secret", Some("other")), true),
        (
            Some("team"),
            reference("rbac.authorization.k8s.io/v1", "ClusterRole", None),
            true,
        ),
        (
            Some("flotilla-system"),
            reference("v1", "Secret", Some("flotilla-system")),
            true,
        ),
        (
            Some("team"),
            reference("work.flotilla.io/v1alpha1", "Work", Some("team")),
            true,
        ),
        (
            None,
            reference("rbac.authorization.k8s.io/v1", "ClusterRole", None),
            false,
        ),
        (None, reference("v1", "Secret", Some("other")), false),
        (
            None,
            reference("v1", "Secret", Some("flotilla-es-member-1")),
            true,
        ),
        (
            None,
            reference("cluster.flotilla.io/v1alpha1", "Cluster", None),
            true,
        ),
    ];
    for (ns, r, refused) in cases {
        assert_eq!(
            refused_reference(ns, &r).is_some(),
            refused,
            "{ns:?} → {} {:?}",
            r.kind,
            r.namespace
        );
    }
}

#[test]
fn kinds_and_manifests() {
    assert!(refused_kind(Some("team"), "ClusterRole", false).is_some());
    assert_eq!(refused_kind(Some("team"), "ConfigMap", true), None);
    assert_eq!(refused_kind(None, "ClusterRole", false), None);
    let cm = |ns: Option<&str>| {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        if let Some(ns) = ns {
            v["metadata"]["namespace"] = json!(ns);
        }
        v
    };
    assert_eq!(refused_manifest(Some("team"), &cm(Some("team"))), None);
    assert!(refused_manifest(Some("team"), &cm(Some("kube-system"))).is_some());
    assert!(refused_manifest(Some("team"), &cm(None)).is_some());
    assert_eq!(refused_manifest(None, &cm(None)), None);
}
