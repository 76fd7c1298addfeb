use serde_json::{json, Value};

use super::*;

fn dep(kind: &'static str, name: &str) -> Dependency {
    Dependency {
        kind,
        name: name.to_owned(),
    }
}

fn deployment(pod: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "web", "namespace": "shop" },
        "spec": { "replicas": 2, "template": { "spec": pod } },
    })
}

#[test]
fn pod_spec_by_kind() {
    let pod = json!({ "containers": [{ "name": "c", "image": "nginx" }] });
    let templated = |api_version: &str, kind: &str| json!({ "apiVersion": api_version, "kind": kind, "spec": { "template": { "spec": pod } } });
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "ReplicaSet"),
        ("v1", "ReplicationController"),
        ("batch/v1", "Job"),
    ] {
        assert_eq!(
            pod_spec(&templated(api_version, kind)),
            Some(&pod),
            "{kind}"
        );
    }
    let bare = json!({ "apiVersion": "v1", "kind": "Pod", "spec": pod });
    assert_eq!(pod_spec(&bare), Some(&pod));
    let cron = json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "spec": { "jobTemplate": { "spec": { "template": { "spec": pod } } } },
    });
    assert_eq!(pod_spec(&cron), Some(&pod));
    // Same kind in another group, and a kind without a pod template.
    assert_eq!(pod_spec(&templated("example.com/v1", "Deployment")), None);
    assert_eq!(pod_spec(&templated("v1", "ConfigMap")), None);
    // The right kind without a pod spec.
    assert_eq!(
        pod_spec(&json!({ "apiVersion": "apps/v1", "kind": "Deployment" })),
        None
    );
}

#[test]
fn volumes() {
    let template = deployment(json!({
        "containers": [{ "name": "c" }],
        "volumes": [
            { "name": "a", "configMap": { "name": "settings" } },
            { "name": "b", "secret": { "secretName": "tls" } },
            { "name": "c", "persistentVolumeClaim": { "claimName": "data" } },
            { "name": "d", "emptyDir": {} },
            { "name": "e", "csi": { "driver": "x", "nodePublishSecretRef": { "name": "csi-creds" } } },
            { "name": "f", "secret": {} },
        ],
    }));
    assert_eq!(
        dependencies(&template),
        [
            dep(CONFIG_MAP, "settings"),
            dep(PERSISTENT_VOLUME_CLAIM, "data"),
            dep(SECRET, "csi-creds"),
            dep(SECRET, "tls"),
        ]
    );
}

#[test]
fn projected_volume_sources() {
    let template = deployment(json!({
        "volumes": [{
            "name": "all",
            "projected": { "sources": [
                { "configMap": { "name": "one" } },
                { "secret": { "name": "two" } },
                { "serviceAccountToken": { "path": "token" } },
                { "downwardAPI": { "items": [] } },
            ] },
        }],
    }));
    assert_eq!(
        dependencies(&template),
        [dep(CONFIG_MAP, "one"), dep(SECRET, "two")]
    );
}

#[test]
fn each_clusters_own_ca_is_no_dependency() {
    // The projected volume Kubernetes gives pods for their service-account token.
    let template = deployment(json!({
        "volumes": [{
            "name": "kube-api-access",
            "projected": { "sources": [
                { "serviceAccountToken": { "path": "token" } },
                { "configMap": { "name": "kube-root-ca.crt" } },
            ] },
        }, { "name": "ca", "configMap": { "name": "kube-root-ca.crt" } }],
    }));
    assert_eq!(dependencies(&template), []);
}

#[test]
fn env_and_env_from_of_every_container_list() {
    let template = deployment(json!({
        "containers": [{
            "name": "app",
            "env": [
                { "name": "PLAIN", "value": "x" },
                { "name": "A", "valueFrom": { "configMapKeyRef": { "name": "app-config", "key": "a" } } },
                { "name": "B", "valueFrom": { "secretKeyRef": { "name": "app-secret", "key": "b" } } },
                { "name": "C", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
            ],
        }],
        "initContainers": [{
            "name": "init",
            "envFrom": [
                { "configMapRef": { "name": "init-config" } },
                { "secretRef": { "name": "init-secret" } },
            ],
        }],
        "ephemeralContainers": [{
            "name": "debug",
            "envFrom": [{ "prefix": "X_", "configMapRef": { "name": "debug-config" } }],
        }],
    }));
    assert_eq!(
        dependencies(&template),
        [
            dep(CONFIG_MAP, "app-config"),
            dep(CONFIG_MAP, "debug-config"),
            dep(CONFIG_MAP, "init-config"),
            dep(SECRET, "app-secret"),
            dep(SECRET, "init-secret"),
        ]
    );
}

#[test]
fn image_pull_secrets() {
    let template = deployment(json!({
        "imagePullSecrets": [{ "name": "registry" }, { "name": "" }, {}],
    }));
    assert_eq!(dependencies(&template), [dep(SECRET, "registry")]);
}

#[test]
fn service_account_unless_default_or_empty() {
    let with = |account: Value| deployment(json!({ "serviceAccountName": account }));
    assert_eq!(
        dependencies(&with(json!("builder"))),
        [dep(SERVICE_ACCOUNT, "builder")]
    );
    assert_eq!(dependencies(&with(json!("default"))), []);
    assert_eq!(dependencies(&with(json!(""))), []);
    assert_eq!(dependencies(&deployment(json!({}))), []);
    // The deprecated field counts when the current one is unset.
    assert_eq!(
        dependencies(&deployment(json!({ "serviceAccount": "legacy" }))),
        [dep(SERVICE_ACCOUNT, "legacy")]
    );
}

#[test]
fn sorted_without_duplicates() {
    let template = deployment(json!({
        "serviceAccountName": "runner",
        "containers": [
            { "name": "a", "envFrom": [{ "secretRef": { "name": "shared" } }] },
            { "name": "b", "env": [{ "name": "S", "valueFrom": { "secretKeyRef": { "name": "shared", "key": "k" } } }] },
        ],
        "volumes": [
            { "name": "s", "secret": { "secretName": "shared" } },
            { "name": "c", "configMap": { "name": "zeta" } },
            { "name": "d", "configMap": { "name": "alpha" } },
        ],
        "imagePullSecrets": [{ "name": "shared" }],
    }));
    assert_eq!(
        dependencies(&template),
        [
            dep(CONFIG_MAP, "alpha"),
            dep(CONFIG_MAP, "zeta"),
            dep(SECRET, "shared"),
            dep(SERVICE_ACCOUNT, "runner"),
        ]
    );
}

#[test]
fn cron_job() {
    let template = json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "spec": { "schedule": "@hourly", "jobTemplate": { "spec": { "template": { "spec": {
            "containers": [{ "name": "c", "envFrom": [{ "configMapRef": { "name": "nightly" } }] }],
        } } } } },
    });
    assert_eq!(dependencies(&template), [dep(CONFIG_MAP, "nightly")]);
}

#[test]
fn stateful_set_claim_templates_are_not_dependencies() {
    let template = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "spec": {
            "volumeClaimTemplates": [{ "metadata": { "name": "data" } }],
            "template": { "spec": {
                "containers": [{ "name": "db", "volumeMounts": [{ "name": "data", "mountPath": "/d" }] }],
                "volumes": [
                    // Replaced by the claim template of the same name in each member.
                    { "name": "data", "persistentVolumeClaim": { "claimName": "ignored" } },
                    { "name": "shared", "persistentVolumeClaim": { "claimName": "archive" } },
                ],
            } },
        },
    });
    assert_eq!(
        dependencies(&template),
        [dep(PERSISTENT_VOLUME_CLAIM, "archive")]
    );
}

#[test]
fn kinds_without_pod_template_have_none() {
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "data": { "volumes": "x" },
        "spec": { "template": { "spec": { "serviceAccountName": "x" } } },
    });
    assert_eq!(dependencies(&config_map), []);
    let service = json!({ "apiVersion": "v1", "kind": "Service", "spec": { "type": "ClusterIP" } });
    assert_eq!(dependencies(&service), []);
}

#[test]
fn bare_pod() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": { "containers": [{ "name": "c" }], "volumes": [{ "name": "v", "configMap": { "name": "pod-config" } }] },
    });
    assert_eq!(dependencies(&pod), [dep(CONFIG_MAP, "pod-config")]);
}
