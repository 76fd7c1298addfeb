//! Patches that grow the object they patch: too many operations, `copy` into itself until it
//! is 2^40 times its size, results too deep to read back or larger than an object may be.

use serde_json::{json, Value};

use super::raw::Target;
use crate::common::{json, Hub};

const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const BLOB: &str = "/apis/input.example.com/v1/namespaces/default/blobs/b";

/// A hub with kind `Blob` (any JSON under `spec`) and one Blob `b` with `spec.x.a`.
fn hub_with_blob() -> (Hub, Target) {
    let hub = Hub::start();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "blobs.input.example.com"},
        "spec": {
            "group": "input.example.com",
            "scope": "Namespaced",
            "names": {"plural": "blobs", "singular": "blob", "kind": "Blob", "listKind": "BlobList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": true
                }}
            }]
        }
    });
    hub.ok_stdin(&["create", "-f", "-"], &crd.to_string());
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/blobs.input.example.com",
    ]);
    let blob = json!({
        "apiVersion": "input.example.com/v1", "kind": "Blob",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"x": {"a": "hello"}}
    });
    hub.ok_stdin(&["create", "-f", "-"], &blob.to_string());
    let target = Target::of(&hub);
    (hub, target)
}

/// The Blob's spec as read back, which must be what it was before the refused patch.
fn assert_spec_unchanged(hub_api: &Target) {
    let reply = hub_api.get(BLOB);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["spec"], json!({"x": {"a": "hello"}}));
}

fn patch(hub_api: &Target, content_type: &str, patch: &Value) -> super::raw::Reply {
    hub_api.send("PATCH", BLOB, content_type, patch.to_string().as_bytes())
}

#[test]
fn json_patch_with_too_many_operations_is_refused() {
    let (_hub, hub_api) = hub_with_blob();
    let ops: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/spec/x/a", "value": "hello"}))
        .collect();
    let reply = patch(&hub_api, JSON_PATCH, &Value::Array(ops));
    assert_eq!(
        reply.status_reason(),
        (413, "RequestEntityTooLarge".to_owned()),
        "{}",
        reply.text()
    );
    // At the limit, kube-apiserver's 10,000, a patch still applies.
    let ops: Vec<Value> = (0..10_000)
        .map(|_| json!({"op": "test", "path": "/spec/x/a", "value": "hello"}))
        .collect();
    let reply = patch(&hub_api, JSON_PATCH, &Value::Array(ops));
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn json_patch_copying_into_itself_is_stopped_while_it_grows() {
    let (hub, hub_api) = hub_with_blob();
    // Each copy of /spec/x into a new member of itself doubles it: 40 would make it 2^40
    // times larger.
    let ops: Vec<Value> = (0..40)
        .map(|i| json!({"op": "copy", "from": "/spec/x", "path": format!("/spec/x/y{i}")}))
        .collect();
    let reply = patch(&hub_api, JSON_PATCH, &Value::Array(ops));
    assert_eq!(
        reply.status_reason(),
        (422, "Invalid".to_owned()),
        "{}",
        reply.text()
    );
    assert_spec_unchanged(&hub_api);
    assert!(hub.kubectl(&["get", "--raw", "/readyz"]).status.success());
}

#[test]
fn patch_result_deeper_than_the_hub_reads_is_refused() {
    let (hub, hub_api) = hub_with_blob();
    // Each value is as deep as a body may be; added one inside the other, the result is not.
    let mut value = json!("leaf");
    for _ in 0..100 {
        value = json!({ "d": value });
    }
    let inner = format!("/spec/deep{}", "/d".repeat(99));
    let ops = json!([
        {"op": "add", "path": "/spec/deep", "value": value},
        {"op": "add", "path": format!("{inner}/more"), "value": value},
    ]);
    let reply = patch(&hub_api, JSON_PATCH, &ops);
    assert_eq!(
        reply.status_reason(),
        (422, "Invalid".to_owned()),
        "{}",
        reply.text()
    );
    assert_spec_unchanged(&hub_api);
    // Listing still shows the object whole (an unreadable object would be null).
    let list = json(&hub.ok(&["get", "blobs", "-o", "json"]));
    assert_eq!(list["items"][0]["spec"], json!({"x": {"a": "hello"}}));
}

#[test]
fn patch_result_larger_than_an_object_may_be_is_refused() {
    let (_hub, hub_api) = hub_with_blob();
    // Two patches of 2 MiB each, each under the 3 MiB request limit; together over it.
    let chunk = "z".repeat(2 * 1024 * 1024);
    let reply = patch(&hub_api, MERGE_PATCH, &json!({"spec": {"one": chunk}}));
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = patch(&hub_api, MERGE_PATCH, &json!({"spec": {"two": chunk}}));
    assert_eq!(
        reply.status_reason(),
        (413, "RequestEntityTooLarge".to_owned()),
        "{}",
        reply.text()
    );
    let stored = hub_api.get(BLOB).json();
    assert!(
        stored["spec"].get("two").is_none(),
        "the oversized result was stored"
    );
}
