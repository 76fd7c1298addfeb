use http::Method;
use serde_json::json;

use super::*;
use crate::registry::Registry;

/// (resource, URL, body metadata, refusal message if refused)
#[test]
fn a_body_names_the_object_of_its_url() {
    let snap = Registry::new().snapshot();
    let cms = snap.get("", "v1", "configmaps").cloned().unwrap();
    let nss = snap.get("", "v1", "namespaces").cloned().unwrap();
    let cm = "/api/v1/namespaces/a/configmaps/x";
    let renamed = "the name of the object (y) does not match the name on the URL (x)";
    let cases = [
        (&cms, cm, json!({"name": "x", "namespace": "a"}), None),
        (&cms, cm, json!({}), None),
        (&cms, cm, json!({"name": "", "namespace": ""}), None),
        (&cms, cm, json!({"name": "y"}), Some(renamed)),
        (
            &cms,
            cm,
            json!({"namespace": "b"}),
            Some(NAMESPACE_MISMATCH),
        ),
        (&nss, "/api/v1/namespaces/x", json!({"name": "x"}), None),
        // Cluster-scoped: a namespace in the body is cleared, not refused.
        (
            &nss,
            "/api/v1/namespaces/x",
            json!({"name": "x", "namespace": "q"}),
            None,
        ),
        (
            &nss,
            "/api/v1/namespaces/x",
            json!({"name": "y"}),
            Some(renamed),
        ),
    ];
    for (res, path, meta, refused) in cases {
        let info = RequestInfo::parse(&Method::PUT, path, false);
        let got = check(res, &info, &json!({ "metadata": meta }));
        assert_eq!(
            got.as_ref().err().map(|e| (e.code, e.message.as_str())),
            refused.map(|m| (400, m)),
            "{path} {meta}"
        );
    }
}
