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
}

/// `kubectl api-resources` of kube-apiserver 1.32 for the kinds added in issue 21: name, short
/// names, namespaced, kind, and whether `/status` and `/scale` are served.
#[test]
fn issue_21_kinds_match_kube_apiserver() {
    type Row = (
        &'static str,
        &'static str,
        &'static [&'static str],
        bool,
        &'static str,
        bool,
        bool,
    );
    #[rustfmt::skip]
    let want: &[Row] = &[
        ("", "pods", &["po"], true, "Pod", true, false),
        ("", "podtemplates", &[], true, "PodTemplate", false, false),
        ("", "replicationcontrollers", &["rc"], true, "ReplicationController", true, true),
        ("", "limitranges", &["limits"], true, "LimitRange", false, false),
        ("", "resourcequotas", &["quota"], true, "ResourceQuota", true, false),
        ("", "nodes", &["no"], false, "Node", true, false),
        ("", "persistentvolumes", &["pv"], false, "PersistentVolume", true, false),
        ("apps", "controllerrevisions", &[], true, "ControllerRevision", false, false),
        ("discovery.k8s.io", "endpointslices", &[], true, "EndpointSlice", false, false),
        ("networking.k8s.io", "ingressclasses", &[], false, "IngressClass", false, false),
        ("scheduling.k8s.io", "priorityclasses", &["pc"], false, "PriorityClass", false, false),
        ("node.k8s.io", "runtimeclasses", &[], false, "RuntimeClass", false, false),
        ("storage.k8s.io", "storageclasses", &["sc"], false, "StorageClass", false, false),
        ("storage.k8s.io", "csidrivers", &[], false, "CSIDriver", false, false),
        ("storage.k8s.io", "csinodes", &[], false, "CSINode", false, false),
        ("storage.k8s.io", "csistoragecapacities", &[], true, "CSIStorageCapacity", false, false),
        ("storage.k8s.io", "volumeattachments", &[], false, "VolumeAttachment", true, false),
        ("certificates.k8s.io", "certificatesigningrequests", &["csr"], false,
         "CertificateSigningRequest", true, false),
    ];
    let all = builtin_resources();
    for (group, plural, short, namespaced, kind, status, scale) in want {
        let r = all
            .iter()
            .find(|r| r.group == *group && r.plural == *plural)
            .unwrap_or_else(|| panic!("{plural}.{group} is not served"));
        assert_eq!(r.short_names, *short, "{plural}");
        assert_eq!(
            (r.namespaced, r.kind.as_str(), r.status, r.scale.is_some()),
            (*namespaced, *kind, *status, *scale),
            "{plural}"
        );
        assert_eq!(r.verbs, ALL_VERBS, "{plural}");
    }
}

#[test]
fn pods_list_kube_apiserver_subresources() {
    let all = builtin_resources();
    let pods = all.iter().find(|r| r.plural == "pods").unwrap();
    let names: Vec<&str> = pods.extra_subresources().iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy"
        ]
    );
    let csr = all
        .iter()
        .find(|r| r.plural == "certificatesigningrequests")
        .unwrap();
    assert_eq!(csr.extra_subresources()[0].name, "approval");
}
