//! Request bodies that recurse: a protobuf CustomResourceDefinition thousands of `not` schemas
//! deep (sent to its own URL and to another kind's), and JSON and YAML nested as deep.

use super::proto;
use super::raw::Target;
use crate::common::Hub;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The hub still answers (a stack overflow aborts the whole process).
fn assert_alive(hub: &Hub) {
    let out = hub.kubectl(&["get", "--raw", "/readyz"]);
    assert!(out.status.success(), "the hub died; log:\n{}", hub.log());
}

#[test]
fn protobuf_body_of_another_kind_is_refused_before_it_is_decoded() {
    let hub = Hub::start();
    let hub_api = Target::of(&hub);
    // A CRD envelope posted to configmaps: refused on its kind, whatever its depth.
    let body = proto::crd("bomb.example.com", "bombs", "Bomb", 5_000);
    let reply = hub_api.send("POST", CONFIGMAPS, PROTOBUF, &body);
    assert_eq!(
        reply.status_reason(),
        (400, "BadRequest".to_owned()),
        "{}",
        reply.text()
    );
    assert!(
        reply.text().contains("CustomResourceDefinition"),
        "{}",
        reply.text()
    );
    assert_alive(&hub);
    // The same envelope naming the right kind is decoded and stored as before.
    let reply = hub_api.send("POST", CONFIGMAPS, PROTOBUF, &proto::config_map("pb-ok"));
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert_eq!(
        hub.ok(&["get", "configmap", "pb-ok", "-o", "jsonpath={.data.k}"]),
        "v"
    );
}

#[test]
fn protobuf_schema_nested_too_deep_is_refused() {
    let hub = Hub::start();
    let hub_api = Target::of(&hub);
    let body = proto::crd("bomb.example.com", "bombs", "Bomb", 5_000);
    let reply = hub_api.send("POST", CRDS, PROTOBUF, &body);
    assert_eq!(
        reply.status_reason(),
        (400, "BadRequest".to_owned()),
        "{}",
        reply.text()
    );
    assert_alive(&hub);
    let out = hub.kubectl(&["get", "crd", "bombs.bomb.example.com"]);
    assert!(!out.status.success(), "the deep CRD was stored");
    // A CRD with a few nested schemas still arrives by protobuf.
    let body = proto::crd("fine.example.com", "fines", "Fine", 3);
    let reply = hub_api.send("POST", CRDS, PROTOBUF, &body);
    assert_eq!(reply.status, 201, "{}", reply.text());
}

#[test]
fn deep_json_and_yaml_bodies_are_refused() {
    let hub = Hub::start();
    let hub_api = Target::of(&hub);
    let deep = |open: &str, close: &str, n: usize| open.repeat(n) + "1" + &close.repeat(n);
    let json = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"deep","annotations":{{"a":"b"}}}},"x":{}}}"#,
        deep("[", "]", 5_000)
    );
    let yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx: {}\n",
        deep("[", "]", 5_000)
    );
    let yaml_blocks = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx:\n{}",
        (1..=300)
            .map(|i| format!("{}- \n", "  ".repeat(i)))
            .collect::<String>()
    );
    for (what, ct, body) in [
        ("JSON", "application/json", json),
        ("YAML flow", "application/yaml", yaml),
        ("YAML blocks", "application/yaml", yaml_blocks),
    ] {
        let reply = hub_api.send("POST", CONFIGMAPS, ct, body.as_bytes());
        assert_eq!(
            reply.status_reason(),
            (400, "BadRequest".to_owned()),
            "{what}: {}",
            reply.text()
        );
    }
    assert_alive(&hub);
    assert!(!hub.kubectl(&["get", "configmap", "deep"]).status.success());
}
