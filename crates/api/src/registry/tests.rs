use super::*;

#[test]
fn every_served_crd_version_is_registered_but_builtins_cannot_be_shadowed() {
    let reg = Registry::new();
    let crd = serde_json::json!({"spec": {"group": "stable.example.com", "scope": "Namespaced",
        "names": {"kind": "CronTab", "plural": "crontabs"},
        "versions": [{"name": "v1", "served": true}, {"name": "v1beta1", "served": true}]}});
    let shadow = serde_json::json!({"spec": {"group": "apps", "names": {"kind": "Fake", "plural": "deployments"},
        "versions": [{"name": "v1", "served": true}]}});
    let mut custom = crd::resources_for(&crd);
    custom.extend(crd::resources_for(&shadow));
    reg.set_custom(custom);
    let snap = reg.snapshot();
    assert!(snap.get("stable.example.com", "v1", "crontabs").is_some());
    assert!(snap
        .get("stable.example.com", "v1beta1", "crontabs")
        .is_some());
    assert_eq!(
        snap.get("apps", "v1", "deployments").unwrap().kind,
        "Deployment"
    );
}

#[test]
fn read_defaults_that_did_not_change_keep_their_arc_across_refreshes() {
    let reg = Registry::new();
    let crd = |default: i64| {
        serde_json::json!({"spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"kind": "CronTab", "plural": "crontabs"},
            "versions": [{"name": "v1", "served": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer", "default": default}}}}}}}]}})
    };
    let defaults = |reg: &Registry| {
        reg.snapshot()
            .get("stable.example.com", "v1", "crontabs")
            .and_then(|r| r.read_defaults.clone())
            .expect("the schema has a default")
    };
    reg.set_custom(crd::resources_for(&crd(1)));
    let first = defaults(&reg);
    reg.set_custom(crd::resources_for(&crd(1)));
    assert!(
        Arc::ptr_eq(&first, &defaults(&reg)),
        "same defaults, same Arc"
    );
    reg.set_custom(crd::resources_for(&crd(2)));
    let changed = defaults(&reg);
    assert!(!Arc::ptr_eq(&first, &changed) && *first != *changed);
}
