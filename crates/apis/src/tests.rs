use serde_json::Value;

/// The CRDs as the hub installs them (schemas, printer columns, names), pretty-printed. They
/// are a contract with kubectl users and Karmada manifests, so any change to a type's schema
/// shows up here and is reviewed.
const RECORDED_CRDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/crds.json");

/// Every CRD is exactly as recorded in `testdata/crds.json`. After an intended API change,
/// rewrite the file with `FLOTILLA_RECORD_CRDS=1 cargo test -p flotilla-apis` and review its
/// diff.
#[test]
fn crds_are_as_recorded() {
    let crds = super::crds().expect("CRDs serialize");
    if std::env::var_os("FLOTILLA_RECORD_CRDS").is_some() {
        let text = serde_json::to_string_pretty(&crds).expect("CRDs print") + "\n";
        std::fs::write(RECORDED_CRDS, text).expect("write testdata/crds.json");
    }
    let text = std::fs::read_to_string(RECORDED_CRDS).expect("read testdata/crds.json");
    let recorded: Vec<Value> = serde_json::from_str(&text).expect("testdata/crds.json is JSON");
    assert_eq!(crds.len(), recorded.len(), "number of CRDs");
    for (now, then) in crds.iter().zip(&recorded) {
        // One CRD at a time, so a failure names the kind whose schema changed.
        assert_eq!(
            now, then,
            "CRD {} differs from testdata/crds.json",
            now["metadata"]["name"]
        );
    }
}

#[test]
fn every_kind_has_a_crd() {
    let names: Vec<String> = super::crds()
        .expect("CRDs serialize")
        .iter()
        .map(|c| {
            c["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        names,
        [
            "clusters.cluster.flotilla.io",
            "clustersets.cluster.flotilla.io",
            "clustersetbindings.cluster.flotilla.io",
            "works.work.flotilla.io",
            "propagationpolicies.policy.flotilla.io",
            "clusterpropagationpolicies.policy.flotilla.io",
            "overridepolicies.policy.flotilla.io",
            "clusteroverridepolicies.policy.flotilla.io",
            "resourcebindings.work.flotilla.io",
            "clusterresourcebindings.work.flotilla.io",
            "globalservices.networking.flotilla.io",
            "healthreports.networking.flotilla.io",
            "dnsendpoints.externaldns.k8s.io",
            "serviceexports.multicluster.x-k8s.io",
            "serviceimports.multicluster.x-k8s.io",
            "resourceinterpreters.config.flotilla.io",
        ]
    );
}
