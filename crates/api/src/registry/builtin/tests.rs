use super::*;

#[test]
fn builtins_come_from_k8s_openapi() {
    let all = builtin_resources();
    let d = all.iter().find(|r| r.kind == "Deployment").unwrap();
    assert_eq!(
        (d.group.as_str(), d.version.as_str(), d.plural.as_str()),
        ("apps", "v1", "deployments")
    );
    assert!(d.namespaced && d.status && d.scale.is_some());
    let ns = all.iter().find(|r| r.kind == "Namespace").unwrap();
    assert!(!ns.namespaced);
    assert!(!all.iter().any(|r| r.kind == "Pod" || r.kind == "Node"));
}
