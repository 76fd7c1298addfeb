//! A strategic merge patch against a Deployment, with the built-in schema's merge keys and
//! directives: applied or refused, never a panic.
#![no_main]
use std::sync::LazyLock;

use flotilla_api::schema::SchemaSet;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

static SCHEMAS: LazyLock<flotilla_api::schemas::Schemas> =
    LazyLock::new(flotilla_api::schemas::Schemas::new);

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let doc = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
        "spec": {"replicas": 2, "template": {"spec": {
            "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                            "env": [{"name": "A", "value": "1"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}]}}}
    });
    let set: &SchemaSet = SCHEMAS.set();
    let _ = flotilla_api::patch::strategic_merge_patch(
        &doc,
        &patch,
        set,
        "io.k8s.api.apps.v1.Deployment",
    );
});
