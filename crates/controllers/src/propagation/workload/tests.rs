use super::*;
use serde_json::json;

#[test]
fn replicas_by_kind() {
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 6}});
    assert_eq!(replicas(&d), 6);
    let d1 = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {}});
    assert_eq!(replicas(&d1), 1);
    let j = json!({"apiVersion": "batch/v1", "kind": "Job", "spec": {"parallelism": 3}});
    assert_eq!(replicas(&j), 3);
    let h = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "spec": {"minReplicas": 2, "maxReplicas": 10}});
    assert_eq!(replicas(&h), 10);
    let c = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert_eq!(replicas(&c), 0);
    assert!(!has_replicas("v1", "Deployment"));
}

#[test]
fn requests_sum_containers_and_take_the_largest_init_container() {
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {
        "containers": [
            {"resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
            {"resources": {"requests": {"cpu": "0.5"}}}
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "2"}}}]
    }}}});
    let r = replica_request(&d);
    assert_eq!(r["cpu"], 2000);
    assert_eq!(r["memory"], 64 * 1024 * 1024 * 1000);
}

#[test]
fn names_are_valid_and_stable() {
    assert_eq!(binding_name("web", "Deployment"), "web-deployment");
    assert_eq!(
        binding_name("system:auth", "ClusterRole"),
        "system.auth-clusterrole"
    );
    assert_eq!(
        work_name(Some("demo"), "web-deployment"),
        "demo.web-deployment"
    );
    assert_eq!(work_name(None, "x-clusterrole"), "x-clusterrole");
    let long = "a".repeat(300);
    let n = binding_name(&long, "Deployment");
    assert!(n.len() <= 253, "{}", n.len());
    assert_ne!(n, binding_name(&"a".repeat(299), "Deployment"));
    assert_eq!(binding_label(Some("a"), "b").len(), 16);
    assert_ne!(
        binding_label(Some("a"), "b"),
        binding_label(None, "a/b").replace('x', "y") + "z"
    );
}

#[test]
fn template_hash_ignores_what_the_hub_writes() {
    let a = json!({"metadata": {"name": "x", "resourceVersion": "1", "generation": 1},
        "spec": {"replicas": 1}, "status": {"readyReplicas": 0}});
    let b = json!({"metadata": {"name": "x", "resourceVersion": "9", "generation": 1},
        "spec": {"replicas": 1}, "status": {"readyReplicas": 1}});
    let c = json!({"metadata": {"name": "x", "resourceVersion": "9", "generation": 2},
        "spec": {"replicas": 2}});
    assert_eq!(template_hash(&a), template_hash(&b));
    assert_ne!(template_hash(&a), template_hash(&c));
}

#[test]
fn an_interpreter_sizes_a_kind_without_compiled_rules() {
    let spec: flotilla_apis::config::v1alpha1::ResourceInterpreterSpec =
        serde_json::from_value(json!({
            "target": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"},
            "replicas": {"count": "self.spec.replicas",
                         "requests": "self.spec.template.spec.containers[0].resources.requests"}}))
        .unwrap();
    let i = flotilla_interpreter::Interpreter::compile(&spec).unwrap();
    let mut template = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "spec": {"replicas": 6, "template": {"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}}]}}}});
    assert_eq!(Sizing::compiled(&template), Sizing::default());
    let s = Sizing::of(&template, Some(&i)).unwrap();
    assert_eq!(s.replicas, 6);
    assert_eq!(s.requests["cpu"], 250);
    assert_eq!(s.requests["memory"], 1024 * 1024 * 1024 * 1000);
    // No interpreter: the compiled rules (none for this kind).
    assert_eq!(Sizing::of(&template, None).unwrap(), Sizing::default());
    template["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
        json!("lots");
    let e = Sizing::of(&template, Some(&i)).unwrap_err();
    assert_eq!(e.rule, "replicas.requests");
    assert!(e.message.contains("\"lots\" is not a quantity"), "{e}");
}
