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
