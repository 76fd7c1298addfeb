//! A JSON merge patch (RFC 7386): applied or refused; applying it twice changes nothing more.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let doc = json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "data": {"k": "v"}});
    if let Ok(once) = flotilla_api::patch::merge_patch(&doc, &patch) {
        let twice = flotilla_api::patch::merge_patch(&once, &patch).expect("applies again");
        assert_eq!(once, twice, "a merge patch is idempotent");
    }
});
