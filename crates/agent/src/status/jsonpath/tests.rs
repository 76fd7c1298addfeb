use super::*;

#[test]
fn kubectl_paths_become_rfc9535() {
    let cases = [
        (".status.readyReplicas", "$['status']['readyReplicas']"),
        ("{.status.readyReplicas}", "$['status']['readyReplicas']"),
        ("$.status.replicas", "$['status']['replicas']"),
        ("status.replicas", "$['status']['replicas']"),
        (
            r#".status.conditions[?(@.type=="Ready")].status"#,
            r#"$['status']['conditions'][?(@.type=="Ready")]['status']"#,
        ),
        (
            r".metadata.labels.app\.kubernetes\.io/name",
            "$['metadata']['labels']['app.kubernetes.io/name']",
        ),
        (
            ".spec.containers[*].image",
            "$['spec']['containers'][*]['image']",
        ),
        (".items.*", "$['items'][*]"),
        ("..image", "$..['image']"),
        ("..*", "$..*"),
        ("{.}", "$"),
        (".spec.ports[0]", "$['spec']['ports'][0]"),
        (r#".a[?(@.b=="]")].c"#, r#"$['a'][?(@.b=="]")]['c']"#),
        (".it's", r"$['it\'s']"),
    ];
    for (kubectl, rfc) in cases {
        assert_eq!(to_rfc9535(kubectl).as_deref(), Ok(rfc), "{kubectl}");
    }
}

#[test]
fn broken_paths_are_errors() {
    for path in [
        ".status.conditions[0",
        ".a[?(@.b ==)]",
        r#".a[?(@.b=="x)]"#,
        ".status..",
    ] {
        assert!(query(&Value::Null, path).is_err(), "{path}");
    }
}
