use serde_json::json;

use super::*;

fn res(plural: &str) -> ResourceInfo {
    let reg = crate::registry::Registry::new();
    let snap = reg.snapshot();
    let r = snap.get("", "v1", plural).map(|r| (**r).clone());
    r.expect("served")
}

fn message(plural: &str, obj: Value) -> Option<String> {
    check(&res(plural), &obj).err().map(|e| e.message)
}

#[test]
fn config_map_data_is_limited_to_one_mebibyte_over_both_maps() {
    let half = "x".repeat(MAX_DATA_SIZE / 2);
    let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![0u8; n]);
    let at_limit = json!({"metadata": {"name": "big"},
        "data": {"a": half, "b": half}});
    assert_eq!(message("configmaps", at_limit), None);
    let over = json!({"metadata": {"name": "big"}, "data": {"a": half},
        "binaryData": {"b": b64(MAX_DATA_SIZE / 2 + 1)}});
    assert_eq!(
        message("configmaps", over).as_deref(),
        Some(r#"ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes"#)
    );
    // binaryData counts decoded bytes, not the base64 text.
    let encoded = json!({"metadata": {"name": "bin"},
        "binaryData": {"b": b64(MAX_DATA_SIZE - 10)}});
    assert_eq!(message("configmaps", encoded), None);
    // Multi-byte characters count as their UTF-8 bytes, as Go's len() does.
    let wide = json!({"metadata": {"name": "wide"},
        "data": {"a": "é".repeat(MAX_DATA_SIZE / 2 + 1)}});
    assert!(message("configmaps", wide).is_some());
}

#[test]
fn secret_data_and_string_data_are_limited_together() {
    let b64 = base64::engine::general_purpose::STANDARD.encode(vec![1u8; MAX_DATA_SIZE]);
    let full = json!({"metadata": {"name": "s"}, "data": {"a": b64}});
    assert_eq!(message("secrets", full.clone()), None);
    let mut over = full.clone();
    over["stringData"] = json!({"b": "x"});
    assert_eq!(
        message("secrets", over).as_deref(),
        Some(r#"Secret "s" is invalid: data: Too long: must have at most 1048576 bytes"#)
    );
    // A stringData key replaces the data key of the same name.
    let mut replaced = full;
    replaced["stringData"] = json!({"a": "x"});
    assert_eq!(message("secrets", replaced), None);
}

#[test]
fn keys_are_config_keys_in_one_map_only() {
    let e = message(
        "configmaps",
        json!({"metadata": {"name": "k"}, "data": {"a b": "1", "ok": "2"}, "binaryData": {"ok": ""}}),
    )
    .unwrap_or_default();
    assert!(
        e.starts_with(r#"ConfigMap "k" is invalid: [data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters"#),
        "{e}"
    );
    assert!(
        e.contains(r#"data[ok]: Invalid value: "ok": duplicate of key present in binaryData"#),
        "{e}"
    );
    let e = message(
        "secrets",
        json!({"metadata": {"name": "s"}, "data": {"..x": ""}}),
    );
    assert_eq!(
        e.as_deref(),
        Some(r#"Secret "s" is invalid: data[..x]: Invalid value: "..x": must not start with '..'"#)
    );
    assert_eq!(
        message(
            "configmaps",
            json!({"metadata": {"name": "fine"}, "data": {"a.b_C-1": "v"}})
        ),
        None
    );
}
