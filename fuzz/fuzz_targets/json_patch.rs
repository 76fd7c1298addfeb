//! A JSON patch (RFC 6902) against a small object: applied or refused, never a panic, and an
//! applied patch gives JSON that serializes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let doc = json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "data": {"k": "v"}, "list": [1, 2, 3]});
    if let Ok(out) = flotilla_api::patch::json_patch(&doc, &patch) {
        serde_json::to_vec(&out).expect("a patched document serializes");
    }
});
