//! Apply scenarios about the shape of values: list maps, sets, atomic lists, maps and
//! structs, and untyped objects.

use serde_json::json;

use super::scenario::{check, Case, Check::*, *};
use super::*;

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "list maps merge by key, each applier owning its item",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx"}]))),
                ssa("b", containers(json!([{"name": "sidecar", "image": "envoy"}]))),
            ],
            checks: vec![
                At("/spec/template/spec/containers", json!([{"name": "nginx", "image": "nginx"}, {"name": "sidecar", "image": "envoy"}])),
                Owns("a", ".spec.template.spec.containers[name=\"nginx\"]"),
                Owns("b", ".spec.template.spec.containers[name=\"sidecar\"].image"),
                NotOwns("a", ".spec.template.spec.containers[name=\"sidecar\"]"),
            ],
        },
        Case {
            name: "an item the applier drops is removed, other appliers' items stay",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx"}, {"name": "log", "image": "busybox"}]))),
                ssa("b", containers(json!([{"name": "sidecar", "image": "envoy"}]))),
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx"}]))),
            ],
            checks: vec![At(
                "/spec/template/spec/containers",
                json!([{"name": "nginx", "image": "nginx"}, {"name": "sidecar", "image": "envoy"}]),
            )],
        },
        Case {
            name: "an item another applier also applies survives when one drops it",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx"}]))),
                ssa("b", containers(json!([{"name": "nginx"}]))),
                ssa("a", containers(json!([]))),
            ],
            checks: vec![At("/spec/template/spec/containers", json!([{"name": "nginx"}]))],
        },
        Case {
            name: "an item field changed by an update conflicts with the applier",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx:1"}]))),
                update("kubectl-edit", |d| d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2")),
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx:3"}]))),
            ],
            checks: vec![Conflicts(&[("kubectl-edit", IMAGE)])],
        },
        Case {
            name: "an item given up is removed even if another manager owns one of its fields",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]))),
                update("policy", |d| d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = json!("Always")),
                ssa("a", containers(json!([{"name": "log", "image": "busybox"}]))),
            ],
            checks: vec![
                At("/spec/template/spec/containers", json!([{"name": "log", "image": "busybox"}])),
                Managers(&["a/Apply"]),
            ],
        },
        Case {
            name: "nested list maps with two keys merge; the protocol key defaults to TCP",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "ports": [{"containerPort": 80}, {"containerPort": 443}]}]))),
                ssa("a", containers(json!([{"name": "nginx", "ports": [{"containerPort": 443}]}]))),
            ],
            checks: vec![
                At("/spec/template/spec/containers/0/ports", json!([{"containerPort": 443}])),
                Owns("a", ".spec.template.spec.containers[name=\"nginx\"].ports[containerPort=443,protocol=\"TCP\"].containerPort"),
            ],
        },
        Case {
            name: "an explicit protocol and the default address the same port",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "ports": [{"containerPort": 53, "protocol": "TCP"}]}]))),
                ssa("b", containers(json!([{"name": "nginx", "ports": [{"containerPort": 53, "name": "dns"}]}]))),
            ],
            checks: vec![At(
                "/spec/template/spec/containers/0/ports",
                json!([{"containerPort": 53, "protocol": "TCP", "name": "dns"}]),
            )],
        },
        Case {
            name: "sets merge, each applier owning its values",
            steps: vec![ssa("a", finalizers(json!(["x"]))), ssa("b", finalizers(json!(["y"])))],
            checks: vec![
                At("/metadata/finalizers", json!(["x", "y"])),
                Fields("a", "Apply", json!({"f:metadata": {"f:finalizers": {"v:\"x\"": {}}}})),
                Owns("b", ".metadata.finalizers[=\"y\"]"),
            ],
        },
        Case {
            name: "a set value the applier drops is removed",
            steps: vec![
                ssa("a", finalizers(json!(["x", "z"]))),
                ssa("b", finalizers(json!(["y"]))),
                ssa("a", finalizers(json!(["z"]))),
            ],
            checks: vec![At("/metadata/finalizers", json!(["z", "y"]))],
        },
        Case {
            name: "atomic lists are replaced whole and owned as one field",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "args": ["-v", "-x"]}]))),
                ssa("a", containers(json!([{"name": "nginx", "args": ["-q"]}]))),
            ],
            checks: vec![
                At("/spec/template/spec/containers/0/args", json!(["-q"])),
                Owns("a", ".spec.template.spec.containers[name=\"nginx\"].args"),
            ],
        },
        Case {
            name: "a different atomic list conflicts as one field",
            steps: vec![
                ssa("a", containers(json!([{"name": "nginx", "args": ["-v"]}]))),
                ssa("b", containers(json!([{"name": "nginx", "args": ["-v", "-x"]}]))),
            ],
            checks: vec![Conflicts(&[("a", ".spec.template.spec.containers[name=\"nginx\"].args")])],
        },
        Case {
            name: "an atomic struct is replaced whole",
            steps: vec![
                ssa("a", deploy(json!({"selector": {"matchLabels": {"app": "web"}, "matchExpressions": []}}))),
                ssa("a", deploy(json!({"selector": {"matchLabels": {"tier": "x"}}}))),
            ],
            checks: vec![At("/spec/selector", json!({"matchLabels": {"tier": "x"}})), Owns("a", ".spec.selector")],
        },
        Case {
            name: "a different atomic struct conflicts on the struct",
            steps: vec![
                ssa("a", deploy(json!({"selector": {"matchLabels": {"app": "web"}}}))),
                ssa("b", deploy(json!({"selector": {"matchLabels": {"app": "web", "tier": "x"}}}))),
            ],
            checks: vec![Conflicts(&[("a", ".spec.selector")])],
        },
        Case {
            name: "an atomic map is one field",
            steps: vec![
                ssa("a", deploy(json!({"template": {"spec": {"nodeSelector": {"disk": "ssd"}}}}))),
                ssa("b", deploy(json!({"template": {"spec": {"nodeSelector": {"zone": "a"}}}}))),
            ],
            checks: vec![Conflicts(&[("a", ".spec.template.spec.nodeSelector")])],
        },
        Case {
            name: "granular maps merge key by key",
            steps: vec![ssa("a", with_labels(json!({"x": "1"}))), ssa("b", with_labels(json!({"y": "2"})))],
            checks: vec![
                At("/metadata/labels", json!({"x": "1", "y": "2"})),
                Fields("b", "Apply", json!({"f:metadata": {"f:labels": {"f:y": {}}}})),
            ],
        },
        Case {
            name: "merge-strategy lists without list-type are list maps",
            steps: vec![
                ssa("a", deploy(json!({"template": {"spec": {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}]}}}))),
                ssa("b", deploy(json!({"template": {"spec": {"hostAliases": [{"ip": "10.0.0.2", "hostnames": ["b"]}]}}}))),
            ],
            checks: vec![
                At("/spec/template/spec/hostAliases/1/ip", json!("10.0.0.2")),
                Owns("a", ".spec.template.spec.hostAliases[ip=\"10.0.0.1\"].hostnames"),
            ],
        },
        Case {
            name: "a struct the applier no longer applies is removed when nobody owns inside it",
            steps: vec![
                ssa("a", deploy(json!({"template": {"spec": {"securityContext": {"runAsUser": 1000}}}}))),
                ssa("a", deploy(json!({"template": {"spec": {"serviceAccountName": "sa"}}}))),
            ],
            checks: vec![Absent("/spec/template/spec/securityContext"), At("/spec/template/spec/serviceAccountName", json!("sa"))],
        },
        Case {
            name: "a struct stays when another manager owns a field inside it",
            steps: vec![
                ssa("a", deploy(json!({"template": {"spec": {"securityContext": {"runAsUser": 1000}}}}))),
                update("psp", |d| d["spec"]["template"]["spec"]["securityContext"]["fsGroup"] = json!(2000)),
                ssa("a", deploy(json!({}))),
            ],
            checks: vec![At("/spec/template/spec/securityContext", json!({"fsGroup": 2000}))],
        },
        Case {
            name: "untyped objects own every map node and treat lists as atomic",
            steps: vec![ssa("op", widget(json!({"size": 3, "zones": ["a", "b"], "db": {"engine": "pg"}})))],
            checks: vec![Fields("op", "Apply", json!({"f:spec": {
                ".": {}, "f:db": {".": {}, "f:engine": {}}, "f:size": {}, "f:zones": {}}}))],
        },
        Case {
            name: "untyped fields the applier drops are removed",
            steps: vec![
                ssa("op", widget(json!({"size": 3, "db": {"engine": "pg", "version": 16}}))),
                ssa("op", widget(json!({"db": {"engine": "pg"}}))),
            ],
            checks: vec![At("/spec", json!({"db": {"engine": "pg"}}))],
        },
        Case {
            name: "untyped lists conflict as a whole",
            steps: vec![ssa("a", widget(json!({"zones": ["a"]}))), ssa("b", widget(json!({"zones": ["a", "b"]})))],
            checks: vec![Conflicts(&[("a", ".spec.zones")])],
        },
        Case {
            name: "metadata that nobody owns is left alone by apply",
            steps: vec![
                Step::Store(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "web", "uid": "u1", "resourceVersion": "7", "managedFields": [
                        {"manager": "x", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                         "fieldsV1": {"f:spec": {"f:paused": {}}}}]},
                    "spec": {"paused": true}})),
                ssa("a", replicas(1)),
            ],
            checks: vec![
                At("/metadata/uid", json!("u1")),
                At("/metadata/resourceVersion", json!("7")),
                Fields("a", "Apply", json!({"f:spec": {"f:replicas": {}}})),
                Owns("x", ".spec.paused"),
            ],
        },
        Case {
            name: "applying the same untyped configuration twice changes nothing",
            steps: vec![
                ssa("op", widget(json!({"size": 1, "db": {"engine": "pg"}, "zones": ["a"]}))),
                ssa("op", widget(json!({"size": 1, "db": {"engine": "pg"}, "zones": ["a"]}))),
            ],
            checks: vec![Unchanged],
        },
    ]
}

#[test]
fn apply_shape_scenarios() {
    let all = cases();
    assert!(all.len() >= 22, "{} cases", all.len());
    for case in all {
        check(case);
    }
}
