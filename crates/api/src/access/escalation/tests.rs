use super::*;

#[test]
fn only_gc_fields_changing_grants_nothing() {
    let old = json!({"metadata": {"name": "r", "finalizers": ["a"], "resourceVersion": "1"},
        "rules": []});
    let cases = [
        (
            json!({"metadata": {"name": "r", "resourceVersion": "2"}, "rules": []}),
            true,
        ),
        (
            json!({"metadata": {"name": "r", "ownerReferences": [{"uid": "u"}]}, "rules": []}),
            true,
        ),
        (
            json!({"metadata": {"name": "r", "labels": {"a": "b"}, "finalizers": ["a"]},
                "rules": []}),
            false,
        ),
        (
            json!({"metadata": {"name": "r", "finalizers": ["a"]},
                "rules": [{"verbs": ["*"]}]}),
            false,
        ),
    ];
    for (new, want) in cases {
        assert_eq!(only_gc_fields_differ(&old, &new), want, "{new}");
    }
}
