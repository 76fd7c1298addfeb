//! kubectl against a real hub: discovery, CRUD, output formats, selectors, errors, restarts.

mod common;

use common::Hub;

const CM: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"demo","labels":{"app":"web","tier":"front"}},"data":{"a":"1"}}"#;

#[test]
fn version_discovery_and_system_namespaces() {
    let hub = Hub::start();
    let v = hub.ok(&["version", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&v).unwrap();
    assert_eq!(v["serverVersion"]["major"], "1");
    assert_eq!(v["serverVersion"]["minor"], "32");
    assert!(v["serverVersion"]["gitVersion"]
        .as_str()
        .unwrap()
        .starts_with("v1.32.0-flotilla."));

    let res = hub.ok(&["api-resources"]);
    for want in [
        "deployments",
        "configmaps",
        "namespaces",
        "customresourcedefinitions",
        "clusterroles",
        "leases",
    ] {
        assert!(res.contains(want), "api-resources lacks {want}:\n{res}");
    }
    // Pods, nodes and service accounts are core kinds the hub serves as kube-apiserver does.
    for (name, kind) in [
        ("pods", "Pod"),
        ("nodes", "Node"),
        ("serviceaccounts", "ServiceAccount"),
    ] {
        assert!(
            res.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.first() == Some(&name) && cols.contains(&"v1") && cols.last() == Some(&kind)
            }),
            "api-resources lacks core {name}:\n{res}"
        );
    }

    let ns = hub.ok(&["get", "ns"]);
    for want in ["default", "kube-system", "flotilla-system"] {
        assert!(ns.contains(want), "{ns}");
    }
    assert!(ns.contains("Active"), "namespaces show their phase: {ns}");
}

#[test]
fn create_get_list_select_delete() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "demo"]);
    hub.ok_stdin(&["create", "-f", "-"], CM);
    let err = hub.fails(&["create", "-f", "-"]);
    let _ = err;
    let out = hub.kubectl_stdin(&["create", "-f", "-"], CM);
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));

    let table = hub.ok(&["get", "cm", "-n", "demo"]);
    assert!(
        table.contains("NAME") && table.contains("DATA") && table.contains("cfg"),
        "{table}"
    );

    let jp = hub.ok(&["get", "cm", "cfg", "-n", "demo", "-o", "jsonpath={.data.a}"]);
    assert_eq!(jp, "1");
    let cc = hub.ok(&[
        "get",
        "cm",
        "-n",
        "demo",
        "-o",
        "custom-columns=N:.metadata.name,T:.metadata.labels.tier",
        "--no-headers",
        // The namespace's own CA ConfigMap, which every namespace holds.
        "--field-selector=metadata.name!=kube-root-ca.crt",
    ]);
    assert_eq!(
        cc.split_whitespace().collect::<Vec<_>>(),
        vec!["cfg", "front"]
    );
    let y = hub.ok(&["get", "cm", "cfg", "-n", "demo", "-o", "yaml"]);
    assert!(
        y.contains("resourceVersion:") && y.contains("uid:") && y.contains("creationTimestamp:"),
        "{y}"
    );

    assert!(hub
        .ok(&["get", "cm", "-n", "demo", "-l", "app=web", "-o", "name"])
        .contains("configmap/cfg"));
    assert!(hub
        .ok(&[
            "get",
            "cm",
            "-n",
            "demo",
            "-l",
            "app in (web,api),tier!=back",
            "-o",
            "name"
        ])
        .contains("configmap/cfg"));
    assert!(!hub
        .ok(&["get", "cm", "-n", "demo", "-l", "app=api", "-o", "name"])
        .contains("cfg"));
    assert!(hub
        .ok(&[
            "get",
            "cm",
            "-A",
            "--field-selector",
            "metadata.name=cfg",
            "-o",
            "name"
        ])
        .contains("configmap/cfg"));

    hub.ok(&["label", "cm", "cfg", "-n", "demo", "env=prod"]);
    assert_eq!(
        hub.ok(&[
            "get",
            "cm",
            "cfg",
            "-n",
            "demo",
            "-o",
            "jsonpath={.metadata.labels.env}"
        ]),
        "prod"
    );
    hub.ok(&["annotate", "cm", "cfg", "-n", "demo", "note=hello"]);
    assert_eq!(
        hub.ok(&[
            "get",
            "cm",
            "cfg",
            "-n",
            "demo",
            "-o",
            "jsonpath={.metadata.annotations.note}"
        ]),
        "hello"
    );

    hub.ok(&["delete", "cm", "cfg", "-n", "demo"]);
    let err = hub.fails(&["get", "cm", "cfg", "-n", "demo"]);
    assert!(
        err.contains("NotFound") || err.contains("not found"),
        "{err}"
    );
}

#[test]
fn pagination_walks_a_consistent_snapshot() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "pages"]);
    let mut items = String::new();
    for i in 0..25 {
        items.push_str(&format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{i:02}","namespace":"pages"}}}},"#));
    }
    let list = format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{}]}}"#,
        items.trim_end_matches(',')
    );
    hub.ok_stdin(&["create", "-f", "-"], &list);
    // --chunk-size makes kubectl page with limit/continue.
    let names = hub.ok(&[
        "get",
        "cm",
        "-n",
        "pages",
        "--chunk-size",
        "4",
        "-o",
        "name",
    ]);
    assert_eq!(
        names
            .lines()
            .filter(|l| l.starts_with("configmap/c"))
            .count(),
        25,
        "{names}"
    );
}

#[test]
fn errors_are_statuses_people_can_act_on() {
    let hub = Hub::start();
    let e = hub.fails(&["get", "configmaps", "x", "-n", "nope"]);
    assert!(e.contains("not found"), "{e}");
    let e = hub.kubectl_stdin(&["create", "-f", "-"], r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name","namespace":"default"}}"#);
    let stderr = String::from_utf8_lossy(&e.stderr);
    assert!(
        !e.status.success() && stderr.contains("RFC 1123"),
        "{stderr}"
    );
    let e = hub.kubectl_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"missing"}}"#,
    );
    let stderr = String::from_utf8_lossy(&e.stderr);
    assert!(
        !e.status.success() && stderr.contains("namespaces \"missing\" not found"),
        "{stderr}"
    );
    // Unknown fields: refused under the default strict validation of kubectl, warned with Warn.
    let bad = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typo","namespace":"default"},"dta":{"a":"1"}}"#;
    let e = hub.kubectl_stdin(&["create", "-f", "-"], bad);
    let stderr = String::from_utf8_lossy(&e.stderr);
    assert!(
        !e.status.success() && stderr.contains("unknown field \"dta\""),
        "{stderr}"
    );
    let w = hub.kubectl_stdin(&["create", "--validate=warn", "-f", "-"], bad);
    assert!(
        w.status.success() && String::from_utf8_lossy(&w.stderr).contains("unknown field \"dta\""),
        "{}",
        String::from_utf8_lossy(&w.stderr)
    );
    let raw = hub.kubectl(&["get", "--raw", "/apis/nope.example.com/v1/things"]);
    assert!(!raw.status.success());
}

#[test]
fn data_survives_restart_and_kill9() {
    let mut hub = Hub::start();
    hub.ok(&["create", "namespace", "keep"]);
    hub.ok_stdin(&["create", "-f", "-"], &CM.replace("demo", "keep"));
    hub.kill9();
    hub.restart();
    assert_eq!(
        hub.ok(&["get", "cm", "cfg", "-n", "keep", "-o", "jsonpath={.data.a}"]),
        "1"
    );
    hub.stop();
    hub.restart();
    assert!(hub
        .ok(&["get", "ns", "keep", "-o", "name"])
        .contains("namespace/keep"));
}

#[test]
fn namespace_deletion_empties_it() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "gone"]);
    hub.ok_stdin(&["create", "-f", "-"], &CM.replace("demo", "gone"));
    hub.ok(&[
        "delete",
        "namespace",
        "gone",
        "--wait=true",
        "--timeout=30s",
    ]);
    let e = hub.fails(&["get", "ns", "gone"]);
    assert!(e.contains("not found"), "{e}");
    let e = hub.fails(&["get", "cm", "cfg", "-n", "gone"]);
    assert!(e.contains("not found"), "{e}");
}
