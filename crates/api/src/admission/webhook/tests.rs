use serde_json::json;

use super::denied;

#[test]
fn a_denial_is_worded_as_kube_words_it() {
    let by = "admission webhook \"w.example.com\" denied the request";
    let cases = [
        (
            json!({"code": 403, "reason": "Forbidden", "message": "no"}),
            403,
            "Forbidden",
            format!("{by}: no"),
        ),
        (
            json!({"reason": "Invalid"}),
            400,
            "Invalid",
            format!("{by}: Invalid"),
        ),
        (json!(null), 400, "", format!("{by} without explanation")),
        (
            json!({"code": 200, "message": "ok?"}),
            400,
            "",
            format!("{by}: ok?"),
        ),
    ];
    for (status, code, reason, message) in cases {
        let e = denied("w.example.com", &status);
        assert_eq!(
            (e.code, e.reason, e.message),
            (code, reason, message),
            "{status}"
        );
    }
}
