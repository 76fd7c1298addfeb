use serde_json::{json, Value};

use super::causes;

fn fields(c: &[(String, String)]) -> Vec<&str> {
    c.iter().map(|(f, _)| f.as_str()).collect()
}

fn pc(name: &str, value: i64) -> Value {
    json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"})
}

#[test]
fn priority_classes_as_kube_validates_them() {
    let ok = causes("scheduling.k8s.io", "PriorityClass", None, &pc("p1", 1));
    assert!(ok.is_empty(), "{ok:?}");
    let system = causes(
        "scheduling.k8s.io",
        "PriorityClass",
        None,
        &pc("system-node-critical", 2_000_001_000),
    );
    assert!(system.is_empty(), "{system:?}");
    let reserved = causes(
        "scheduling.k8s.io",
        "PriorityClass",
        None,
        &pc("system-x", 1),
    );
    assert_eq!(
        reserved[0].1,
        "Forbidden: priority class names with 'system-' prefix are reserved for system use \
         only. error: system-x is not a known system priority class"
    );
    let big = causes(
        "scheduling.k8s.io",
        "PriorityClass",
        None,
        &pc("big", 1_000_000_001),
    );
    assert_eq!(fields(&big), ["value"]);
    let changed = causes(
        "scheduling.k8s.io",
        "PriorityClass",
        Some(&pc("p1", 1)),
        &pc("p1", 10),
    );
    assert_eq!(
        changed,
        [(
            "value".to_string(),
            "Forbidden: may not be changed in an update.".to_string()
        )]
    );
    let mut described = pc("p1", 1);
    described["description"] = json!("updated description");
    assert!(causes(
        "scheduling.k8s.io",
        "PriorityClass",
        Some(&pc("p1", 1)),
        &described
    )
    .is_empty());
}

#[test]
fn immutable_fields_of_other_kinds() {
    let sc = |p: &str| json!({"provisioner": p, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
    let c = causes("storage.k8s.io", "StorageClass", Some(&sc("a")), &sc("b"));
    assert_eq!(
        c,
        [(
            "provisioner".to_string(),
            "Forbidden: updates to provisioner are forbidden.".to_string()
        )]
    );
    let rc = |h: &str| json!({"handler": h});
    let c = causes("node.k8s.io", "RuntimeClass", Some(&rc("a")), &rc("b"));
    assert_eq!(c[0].1, "Invalid value: \"b\": field is immutable");
    let es = |t: &str| json!({"addressType": t});
    assert_eq!(
        fields(&causes(
            "discovery.k8s.io",
            "EndpointSlice",
            Some(&es("IPv4")),
            &es("IPv6")
        )),
        ["addressType"]
    );
    assert!(causes(
        "discovery.k8s.io",
        "EndpointSlice",
        Some(&es("IPv4")),
        &es("IPv4")
    )
    .is_empty());
}

#[test]
fn a_pod_update_changes_only_images_and_what_kube_allows() {
    let pod = |image: &str, restart: &str| {
        json!({"spec": {"containers": [{"name": "c", "image": image}], "restartPolicy": restart,
                        "tolerations": [{"key": "a", "operator": "Exists"}]}})
    };
    let old = pod("nginx:1", "Always");
    assert!(causes("", "Pod", Some(&old), &pod("nginx:2", "Always")).is_empty());
    let c = causes("", "Pod", Some(&old), &pod("nginx:1", "Never"));
    assert_eq!(fields(&c), ["spec"]);
    assert!(c[0]
        .1
        .starts_with("Forbidden: pod updates may not change fields other than"));
    let mut tolerated = old.clone();
    tolerated["spec"]["tolerations"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "b", "operator": "Exists"}));
    assert!(causes("", "Pod", Some(&old), &tolerated).is_empty());
    let mut bound = old.clone();
    bound["spec"]["nodeName"] = json!("n1");
    assert!(causes("", "Pod", Some(&old), &bound).is_empty());
    let mut moved = bound.clone();
    moved["spec"]["nodeName"] = json!("n2");
    assert_eq!(fields(&causes("", "Pod", Some(&bound), &moved)), ["spec"]);
}

#[test]
fn certificate_signing_requests_as_kube_validates_them() {
    use base64::Engine;
    let pem = "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
    let request = base64::engine::general_purpose::STANDARD.encode(pem);
    let csr = json!({"metadata": {"name": "c"}, "spec": {
        "request": request, "signerName": "example.com/e2e", "usages": ["server auth"],
        "expirationSeconds": 3600,
    }});
    let ok = causes(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        None,
        &csr,
    );
    assert!(ok.is_empty(), "{ok:?}");
    let bad = json!({"spec": {"request": "", "signerName": "nodomain", "usages": [], "expirationSeconds": 60}});
    let c = causes(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        None,
        &bad,
    );
    assert_eq!(
        fields(&c),
        [
            "spec.request",
            "spec.usages",
            "spec.signerName",
            "spec.expirationSeconds"
        ]
    );
    let mut approved = csr.clone();
    approved["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    let both = {
        let mut b = approved.clone();
        b["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "Denied", "status": "True"}));
        b
    };
    let c = causes(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        Some(&approved),
        &both,
    );
    assert_eq!(fields(&c), ["status.conditions"]);
    let c = causes(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        Some(&approved),
        &csr,
    );
    assert_eq!(
        c[0].1,
        "Forbidden: updates may not remove a condition of type \"Approved\""
    );
}

#[test]
fn an_immutable_configmap_or_secret_keeps_its_data_and_stays_immutable() {
    let locked = "Forbidden: field is immutable when `immutable` is set";
    let cm = |d: &str, imm: bool| json!({"data": {"k": d}, "immutable": imm});
    assert!(causes("", "ConfigMap", Some(&cm("a", false)), &cm("b", true)).is_empty());
    let c = causes("", "ConfigMap", Some(&cm("a", true)), &cm("b", true));
    assert_eq!(c, [("data".to_string(), locked.to_string())]);
    let c = causes("", "ConfigMap", Some(&cm("a", true)), &cm("a", false));
    assert_eq!(c, [("immutable".to_string(), locked.to_string())]);
    // Labels and other metadata may still change.
    let mut labelled = cm("a", true);
    labelled["metadata"] = json!({"labels": {"x": "y"}});
    assert!(causes("", "ConfigMap", Some(&cm("a", true)), &labelled).is_empty());
    let s = |d: &str| json!({"data": {"k": d}, "immutable": true, "type": "Opaque"});
    let c = causes("", "Secret", Some(&s("YQ==")), &s("Yg=="));
    assert_eq!(c, [("data".to_string(), locked.to_string())]);
}

#[test]
fn new_pods_need_named_containers_with_images() {
    let ok = json!({"spec": {"containers": [{"name": "c", "image": "nginx"}], "restartPolicy": "Always"}});
    assert!(causes("", "Pod", None, &ok).is_empty());
    let none = json!({"spec": {"containers": []}});
    assert_eq!(fields(&causes("", "Pod", None, &none)), ["spec.containers"]);
    let bad = json!({"spec": {
        "containers": [{"name": "c", "image": ""}, {"name": "c", "image": "x", "ports": [{"containerPort": 70000}]}],
        "restartPolicy": "Sometimes",
    }});
    let c = causes("", "Pod", None, &bad);
    assert_eq!(
        fields(&c),
        [
            "spec.containers[0].image",
            "spec.containers[1].name",
            "spec.containers[1].ports[0].containerPort",
            "spec.restartPolicy",
        ]
    );
    assert_eq!(
        c[3].1,
        "Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\", \"OnFailure\""
    );
    let template =
        json!({"template": {"spec": {"containers": [{"name": "Bad_Name", "image": "x"}]}}});
    assert_eq!(
        fields(&causes("", "PodTemplate", None, &template)),
        ["template.spec.containers[0].name"]
    );
}

#[test]
fn ephemeral_containers_are_added_never_removed_or_changed() {
    let pod = |eph: serde_json::Value| json!({"spec": {"containers": [{"name": "c", "image": "nginx"}], "ephemeralContainers": eph}});
    let one = pod(json!([{"name": "debug", "image": "busybox"}]));
    let created = causes("", "Pod", None, &one);
    assert_eq!(created[0].1, "Forbidden: cannot be set on create");
    let two =
        pod(json!([{"name": "debug", "image": "busybox"}, {"name": "d2", "image": "busybox"}]));
    assert!(causes("", "Pod", Some(&one), &two).is_empty());
    let removed = causes("", "Pod", Some(&two), &one);
    assert_eq!(
        removed,
        [(
            "spec.ephemeralContainers".to_string(),
            "Forbidden: existing ephemeral containers \"d2\" may not be removed\n".to_string()
        )]
    );
    let changed = pod(json!([{"name": "debug", "image": "alpine"}]));
    let c = causes("", "Pod", Some(&one), &changed);
    assert!(
        c[0].1
            .starts_with("Forbidden: existing ephemeral containers \"debug\" may not be changed"),
        "{c:?}"
    );
}
