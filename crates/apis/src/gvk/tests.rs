use serde_json::json;

use super::*;

#[test]
fn core_and_named_groups() {
    assert_eq!(split_api_version("v1"), ("", "v1"));
    assert_eq!(split_api_version("apps/v1"), ("apps", "v1"));
    assert_eq!(
        group_kind(&json!({"apiVersion": "batch/v1", "kind": "Job"})),
        ("batch", "Job")
    );
    assert_eq!(group_kind(&json!({"kind": 3})), ("", ""));
}
