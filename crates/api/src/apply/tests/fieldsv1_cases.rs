//! `fieldsV1` codec tables: round trips of what real clients leave in managedFields,
//! normalisation of unsorted input, and malformed input.

use serde_json::{json, Value};

use crate::apply::FieldSet;

/// Sets as kubectl, helm and controllers leave them (already in Kubernetes' order).
fn round_trips() -> Vec<(&'static str, Value)> {
    vec![
        ("empty", json!({})),
        (
            "kubectl server-side apply of a Deployment",
            json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                    ".": {}, "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}}}}}}),
        ),
        (
            "kube-controller-manager status update",
            json!({
            "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}},
            "f:status": {"f:availableReplicas": {}, "f:conditions": {".": {},
                "k:{\"type\":\"Available\"}": {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {},
                    "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}},
                "k:{\"type\":\"Progressing\"}": {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {},
                    "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}}},
                "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:updatedReplicas": {}}}),
        ),
        (
            "helm install (Update)",
            json!({
            "f:metadata": {
                "f:annotations": {".": {}, "f:meta.helm.sh/release-name": {}, "f:meta.helm.sh/release-namespace": {}},
                "f:labels": {".": {}, "f:app.kubernetes.io/managed-by": {}, "f:helm.sh/chart": {}}},
            "f:spec": {"f:progressDeadlineSeconds": {}, "f:revisionHistoryLimit": {},
                "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
                "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {},
                    "f:env": {".": {}, "k:{\"name\":\"LOG_LEVEL\"}": {".": {}, "f:name": {}, "f:value": {}}},
                    "f:resources": {".": {}, "f:limits": {".": {}, "f:memory": {}}}}}}}}}),
        ),
        (
            "kubectl client-side apply annotation",
            json!({
            "f:metadata": {"f:annotations": {".": {},
                "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}),
        ),
        (
            "finalizers set",
            json!({"f:metadata": {"f:finalizers": {".": {},
            "v:\"foregroundDeletion\"": {}, "v:\"kubernetes.io/pvc-protection\"": {}}}}),
        ),
        (
            "owner references keyed by uid",
            json!({"f:metadata": {"f:ownerReferences": {".": {},
            "k:{\"uid\":\"5f0a3c1e-8f2b-4a6e-9d7c-1b2a3c4d5e6f\"}": {}}}}),
        ),
        (
            "keys order numerically, not as text",
            json!({"f:spec": {"f:ports": {
            "k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}},
            "k:{\"port\":443,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}}}}),
        ),
        (
            "indices order numerically",
            json!({"f:spec": {"f:list": {"i:2": {}, "i:10": {"f:a": {}}}}}),
        ),
        (
            "set values of several types",
            json!({"f:s": {"v:1": {}, "v:2.5": {}, "v:\"a\"": {}, "v:true": {}, "v:null": {}}}),
        ),
        (
            "Go's HTML-safe escaping inside values",
            json!({"f:s": {"v:\"a\\u003cb\\u0026c\"": {}}}),
        ),
        (
            "a node that is a member and has children",
            json!({"f:data": {".": {}, "f:key": {}}}),
        ),
        (
            "fields sort before keys in one node",
            json!({"f:x": {"f:a": {}, "k:{\"a\":1}": {}}}),
        ),
    ]
}

#[test]
fn fields_v1_round_trips() {
    for (name, input) in round_trips() {
        let set = FieldSet::from_fields_v1(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let output = set.to_fields_v1();
        assert_eq!(
            serde_json::to_string(&output).unwrap(),
            serde_json::to_string(&input).unwrap(),
            "{name}: byte-for-byte"
        );
        assert_eq!(
            FieldSet::from_fields_v1(&output).unwrap(),
            set,
            "{name}: decode again"
        );
    }
}

#[test]
fn fields_v1_normalises() {
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "unsorted fields",
            json!({"f:b": {}, "f:a": {}}),
            json!({"f:a": {}, "f:b": {}}),
        ),
        (
            "key fields sorted by name",
            json!({"k:{\"protocol\":\"TCP\",\"containerPort\":80}": {}}),
            json!({"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {}}),
        ),
        (
            "a lone dot is a plain member",
            json!({"f:a": {".": {}}}),
            json!({"f:a": {}}),
        ),
        (
            "dot placed first",
            json!({"f:a": {"f:z": {}, ".": {}}}),
            json!({"f:a": {".": {}, "f:z": {}}}),
        ),
        (
            "plain HTML characters escaped",
            json!({"v:\"<&>\"": {}}),
            json!({"v:\"\\u003c\\u0026\\u003e\"": {}}),
        ),
        (
            "empty children vanish",
            json!({"f:a": {"f:b": {"f:c": {}}}, "f:d": {}}),
            json!({"f:a": {"f:b": {"f:c": {}}}, "f:d": {}}),
        ),
    ];
    for (name, input, want) in cases {
        let got = FieldSet::from_fields_v1(&input).unwrap().to_fields_v1();
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn fields_v1_rejects_malformed_input() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("not an object", json!([]), "expected an object"),
        ("unknown prefix", json!({"x:a": {}}), "unknown prefix"),
        ("no prefix", json!({"spec": {}}), "prefix"),
        (
            "child not an object",
            json!({"f:a": 1}),
            "expected an object",
        ),
        ("key not JSON", json!({"k:{name}": {}}), "k:{name}"),
        (
            "key not an object",
            json!({"k:[1]": {}}),
            "key must be a JSON object",
        ),
        ("index not a number", json!({"i:x": {}}), "i:x"),
        ("value not JSON", json!({"v:abc": {}}), "v:abc"),
    ];
    for (name, input, want) in cases {
        let err = FieldSet::from_fields_v1(&input).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err:?} lacks {want:?}");
    }
}
