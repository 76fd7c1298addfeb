//! The bad-input matrix: malformed and out-of-bounds requests through the real binary, each
//! answered with kube-apiserver's status code and reason, nothing stored, and the hub still
//! serving after all of them.

use super::raw::Target;
use crate::common::Hub;

const JSON: &str = "application/json";
const YAML: &str = "application/yaml";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";
const CMS: &str = "/api/v1/namespaces/matrix/configmaps";
const CM: &str = "/api/v1/namespaces/matrix/configmaps/kept";

/// One request and the answer kube-apiserver gives it.
struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Vec<u8>,
    code: u16,
    reason: &'static str,
}

fn case(
    name: &'static str,
    method: &'static str,
    path: impl Into<String>,
    content_type: &'static str,
    body: impl Into<Vec<u8>>,
    (code, reason): (u16, &'static str),
) -> Case {
    Case {
        name,
        method,
        path: path.into(),
        content_type,
        body: body.into(),
        code,
        reason,
    }
}

fn cm(name: &str, extra: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"{extra}}}}}"#)
}

const BAD: (u16, &str) = (400, "BadRequest");
const INVALID: (u16, &str) = (422, "Invalid");
const NOT_FOUND: (u16, &str) = (404, "NotFound");
const UNSUPPORTED: (u16, &str) = (415, "UnsupportedMediaType");
const TOO_LARGE: (u16, &str) = (413, "RequestEntityTooLarge");

fn cases() -> Vec<Case> {
    let deep_json = "[".repeat(10_000) + &"]".repeat(10_000);
    let deep_yaml = "a:\n".to_owned()
        + &(1..2_000)
            .map(|i| format!("{}b:\n", " ".repeat(i)))
            .collect::<String>();
    let long_label = "x".repeat(64);
    let big_annotation = "y".repeat(300 * 1024);
    let patch_ops: String = format!(
        "[{}]",
        vec![r#"{"op":"add","path":"/data/k","value":"v"}"#; 100_000].join(",")
    );
    vec![
        // Bodies that are not what they say.
        case(
            "truncated JSON",
            "POST",
            CMS,
            JSON,
            "{\"apiVersion\":\"v1\",",
            BAD,
        ),
        case("JSON of the wrong type", "POST", CMS, JSON, "[1,2,3]", BAD),
        case("empty body", "POST", CMS, JSON, "", BAD),
        case(
            "binary garbage as JSON",
            "POST",
            CMS,
            JSON,
            vec![0xff, 0xfe, 0x00, 0x01],
            BAD,
        ),
        case("malformed YAML", "POST", CMS, YAML, "a: [b\n", BAD),
        case(
            "two YAML documents",
            "POST",
            CMS,
            YAML,
            format!("{}\n---\n{}\n", cm("y1", ""), cm("y2", "")),
            BAD,
        ),
        case(
            "garbage as protobuf",
            "POST",
            CMS,
            PROTOBUF,
            vec![0x6b, 0x38, 0x73, 0x00, 0xff, 0xff],
            BAD,
        ),
        case(
            "JSON nested 10,000 deep",
            "POST",
            CMS,
            JSON,
            deep_json.clone(),
            BAD,
        ),
        case("YAML nested 2,000 deep", "POST", CMS, YAML, deep_yaml, BAD),
        case(
            "a body over 3 MiB",
            "POST",
            CMS,
            JSON,
            cm(
                "big",
                &format!(
                    r#","annotations":{{"a":"{}"}}"#,
                    "z".repeat(4 * 1024 * 1024)
                ),
            ),
            TOO_LARGE,
        ),
        // Content types.
        case(
            "unknown content type",
            "POST",
            CMS,
            "text/plain",
            cm("t1", ""),
            UNSUPPORTED,
        ),
        case(
            "patch content type on create",
            "POST",
            CMS,
            MERGE,
            cm("t2", ""),
            UNSUPPORTED,
        ),
        case("JSON as patch type", "PATCH", CM, JSON, "{}", UNSUPPORTED),
        case(
            "unknown patch type",
            "PATCH",
            CM,
            "application/x-patch",
            "{}",
            UNSUPPORTED,
        ),
        // What the object says.
        case(
            "unknown apiVersion",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v9","kind":"ConfigMap","metadata":{"name":"v9"}}"#,
            BAD,
        ),
        case(
            "kind of another resource",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"wrongkind"}}"#,
            BAD,
        ),
        case(
            "namespace other than the URL's",
            "POST",
            CMS,
            JSON,
            cm("otherns", r#","namespace":"default""#),
            BAD,
        ),
        case(
            "no name",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#,
            INVALID,
        ),
        case(
            "name with upper case",
            "POST",
            CMS,
            JSON,
            cm("Upper", ""),
            INVALID,
        ),
        case(
            "name with a slash",
            "POST",
            CMS,
            JSON,
            cm("a/b", ""),
            INVALID,
        ),
        case(
            "name of 254 characters",
            "POST",
            CMS,
            JSON,
            cm(&"n".repeat(254), ""),
            INVALID,
        ),
        case(
            "generateName invalid",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"Bad_"}}"#,
            INVALID,
        ),
        case(
            "label value of 64 characters",
            "POST",
            CMS,
            JSON,
            cm("longlabel", &format!(r#","labels":{{"a":"{long_label}"}}"#)),
            INVALID,
        ),
        case(
            "label key invalid",
            "POST",
            CMS,
            JSON,
            cm("badkey", r#","labels":{"-a-":"b"}"#),
            INVALID,
        ),
        case(
            "annotations over 256 KiB",
            "POST",
            CMS,
            JSON,
            cm(
                "bigann",
                &format!(r#","annotations":{{"a":"{big_annotation}"}}"#),
            ),
            INVALID,
        ),
        case(
            "data key invalid",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"badkey2"},"data":{"a b":"c"}}"#,
            INVALID,
        ),
        case(
            "unknown field, Strict",
            "POST",
            format!("{CMS}?fieldValidation=Strict"),
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"strict"},"bogus":1}"#,
            BAD,
        ),
        case(
            "duplicate field, Strict",
            "POST",
            format!("{CMS}?fieldValidation=Strict"),
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup"}}"#,
            BAD,
        ),
        case(
            "bad fieldValidation",
            "POST",
            format!("{CMS}?fieldValidation=Loud"),
            JSON,
            cm("fv", ""),
            BAD,
        ),
        case(
            "bad dryRun",
            "POST",
            format!("{CMS}?dryRun=Maybe"),
            JSON,
            cm("dr", ""),
            BAD,
        ),
        // Names and namespaces in the URL.
        case(
            "namespace name invalid",
            "POST",
            "/api/v1/namespaces/Bad_NS/configmaps",
            JSON,
            cm("x", ""),
            NOT_FOUND,
        ),
        case(
            "namespace that does not exist",
            "POST",
            "/api/v1/namespaces/nowhere/configmaps",
            JSON,
            cm("x", ""),
            NOT_FOUND,
        ),
        case(
            "unknown resource",
            "GET",
            "/api/v1/namespaces/matrix/widgets",
            "",
            "",
            NOT_FOUND,
        ),
        case(
            "unknown group",
            "GET",
            "/apis/nothing.example.com/v1/things",
            "",
            "",
            NOT_FOUND,
        ),
        case(
            "POST to a named URL",
            "POST",
            CM,
            JSON,
            cm("kept", ""),
            (405, "MethodNotAllowed"),
        ),
        case(
            "update naming another object",
            "PUT",
            CM,
            JSON,
            cm("other", ""),
            BAD,
        ),
        case(
            "update without resourceVersion of a missing object",
            "PUT",
            format!("{CMS}/missing"),
            JSON,
            cm("missing", r#","resourceVersion":"1""#),
            NOT_FOUND,
        ),
        case(
            "a ConfigMap whose data is a list",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"listed"},"data":["x"]}"#,
            BAD,
        ),
        case(
            "a ConfigMap value that is an object",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nested"},"data":{"a":{"b":"c"}}}"#,
            BAD,
        ),
        case(
            "a ConfigMap value that is a number",
            "POST",
            CMS,
            JSON,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"numbered"},"data":{"a":1}}"#,
            BAD,
        ),
        case(
            "a label value that is a number (YAML)",
            "POST",
            CMS,
            YAML,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: versioned\n  labels:\n    version: 1.0\n",
            BAD,
        ),
        case(
            "labels that are a string",
            "PUT",
            CM,
            JSON,
            cm("kept", r#","labels":"a=b""#),
            BAD,
        ),
        case(
            "update with a stale resourceVersion",
            "PUT",
            CM,
            JSON,
            cm("kept", r#","resourceVersion":"1""#),
            (409, "Conflict"),
        ),
        // Reads.
        case(
            "list with a bad resourceVersion",
            "GET",
            format!("{CMS}?resourceVersion=abc"),
            "",
            "",
            BAD,
        ),
        case(
            "list with a bad resourceVersionMatch",
            "GET",
            format!("{CMS}?resourceVersion=1&resourceVersionMatch=Sometimes"),
            "",
            "",
            INVALID,
        ),
        case(
            "list with a bad continue token",
            "GET",
            format!("{CMS}?limit=1&continue=garbage"),
            "",
            "",
            BAD,
        ),
        case(
            "an invalid label selector",
            "GET",
            format!("{CMS}?labelSelector=a%20in%20(b"),
            "",
            "",
            BAD,
        ),
        case(
            "an unknown field selector",
            "GET",
            format!("{CMS}?fieldSelector=spec.bogus%3Dx"),
            "",
            "",
            BAD,
        ),
        case(
            "a malformed field selector",
            "GET",
            format!("{CMS}?fieldSelector=%3D%3D%3D"),
            "",
            "",
            BAD,
        ),
        case(
            "watch from a garbage resourceVersion",
            "GET",
            format!("{CMS}?watch=1&resourceVersion=abc&timeoutSeconds=1"),
            "",
            "",
            BAD,
        ),
        case(
            "a bad timeoutSeconds",
            "GET",
            format!("{CMS}?watch=1&timeoutSeconds=abc"),
            "",
            "",
            BAD,
        ),
        // Patches.
        case(
            "JSON patch that is not a list",
            "PATCH",
            CM,
            JSON_PATCH,
            r#"{"op":"add"}"#,
            BAD,
        ),
        case(
            "JSON patch with an unknown op",
            "PATCH",
            CM,
            JSON_PATCH,
            r#"[{"op":"explode","path":"/data"}]"#,
            (422, "Invalid"),
        ),
        case(
            "JSON patch without op",
            "PATCH",
            CM,
            JSON_PATCH,
            r#"[{"path":"/data"}]"#,
            INVALID,
        ),
        case(
            "JSON patch removing a missing path",
            "PATCH",
            CM,
            JSON_PATCH,
            r#"[{"op":"remove","path":"/data/nope"}]"#,
            INVALID,
        ),
        case(
            "JSON patch test that fails",
            "PATCH",
            CM,
            JSON_PATCH,
            r#"[{"op":"test","path":"/metadata/name","value":"no"}]"#,
            (422, "Invalid"),
        ),
        case(
            "JSON patch of 100,000 operations",
            "PATCH",
            CM,
            JSON_PATCH,
            patch_ops,
            TOO_LARGE,
        ),
        case("merge patch that is not JSON", "PATCH", CM, MERGE, "{", BAD),
        case(
            "merge patch changing the name",
            "PATCH",
            CM,
            MERGE,
            r#"{"metadata":{"name":"renamed"}}"#,
            BAD,
        ),
        case(
            "strategic merge patch with a bad directive",
            "PATCH",
            CM,
            STRATEGIC,
            r#"{"$patch":"explode"}"#,
            BAD,
        ),
        case(
            "apply without a field manager",
            "PATCH",
            CM,
            APPLY,
            cm("kept", ""),
            BAD,
        ),
        case(
            "apply of another kind",
            "PATCH",
            format!("{CM}?fieldManager=m"),
            APPLY,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"kept"}}"#,
            BAD,
        ),
        case(
            "patch of a missing object",
            "PATCH",
            format!("{CMS}/missing"),
            MERGE,
            "{}",
            NOT_FOUND,
        ),
        // Deletes.
        case("delete with a bad body", "DELETE", CM, JSON, "{", BAD),
        case(
            "delete with a wrong uid precondition",
            "DELETE",
            CM,
            JSON,
            r#"{"preconditions":{"uid":"not-it"}}"#,
            (409, "Conflict"),
        ),
        case(
            "delete with a bad propagationPolicy",
            "DELETE",
            CM,
            JSON,
            r#"{"propagationPolicy":"Sometimes"}"#,
            BAD,
        ),
    ]
}

#[test]
fn bad_input_gets_kube_apiservers_answer_and_nothing_is_stored() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "matrix"]);
    hub.ok(&[
        "-n",
        "matrix",
        "create",
        "configmap",
        "kept",
        "--from-literal=k=v",
    ]);
    let before = hub.ok(&["-n", "matrix", "get", "configmap", "kept", "-o", "json"]);
    let target = Target::of(&hub);
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let reply = target.send(c.method, &c.path, c.content_type, &c.body);
        let got = reply.status_reason();
        if got != (c.code, c.reason.to_owned()) {
            wrong.push(format!(
                "{}: got {} {}, want {} {}: {}",
                c.name,
                got.0,
                got.1,
                c.code,
                c.reason,
                reply.text().chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    // Nothing stored: the namespace holds what it held, the object is unchanged.
    let names = hub.ok(&[
        "-n",
        "matrix",
        "get",
        "configmaps",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert_eq!(names, "kept kube-root-ca.crt");
    let after = hub.ok(&["-n", "matrix", "get", "configmap", "kept", "-o", "json"]);
    assert_eq!(before, after);
    let ready = hub.kubectl(&["get", "--raw", "/readyz"]);
    assert!(
        ready.status.success(),
        "the hub stopped serving; log:\n{}",
        hub.log()
    );
}
