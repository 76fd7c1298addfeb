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
            "works.work.flotilla.io",
            "propagationpolicies.policy.flotilla.io",
            "clusterpropagationpolicies.policy.flotilla.io",
            "overridepolicies.policy.flotilla.io",
            "clusteroverridepolicies.policy.flotilla.io",
            "resourcebindings.work.flotilla.io",
            "clusterresourcebindings.work.flotilla.io",
        ]
    );
}
