use super::*;
use serde_json::json;

#[test]
fn version_priority_matches_kubernetes() {
    let mut v = vec![
        "v1alpha1", "foo", "v1", "v2beta1", "v1beta2", "v2", "v1beta1", "bar",
    ];
    v.sort_by(|a, b| version_priority(a, b));
    assert_eq!(
        v,
        vec!["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "bar", "foo"]
    );
}

#[test]
fn crd_becomes_resources() {
    let crd = json!({
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
          "names": {"kind": "CronTab", "plural": "crontabs", "singular": "crontab", "shortNames": ["ct"]},
          "versions": [
            {"name": "v1beta1", "served": true, "storage": false},
            {"name": "v1", "served": true, "storage": true,
             "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
             "additionalPrinterColumns": [{"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"}]},
            {"name": "v0", "served": false}
          ]}
    });
    let rs = resources_for(&crd);
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].version, "v1");
    assert!(rs[0].storage_version && rs[0].status && rs[0].scale.is_some());
    assert_eq!(rs[0].columns[0].json_path, ".spec.cronSpec");
    assert_eq!(rs[1].columns[0].name, "Age");
    assert_eq!(rs[0].short_names, vec!["ct"]);
}
