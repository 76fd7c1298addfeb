use super::*;

#[test]
fn decodes_json_and_yaml_and_rejects_garbage() {
    let j = decode_body(BodyFormat::Json, br#"{"a":1}"#).unwrap();
    assert_eq!(j["a"], 1);
    let y = decode_body(BodyFormat::Yaml, b"a: 1\nb: [x]\n").unwrap();
    assert_eq!(y["b"][0], "x");
    assert_eq!(
        decode_body(BodyFormat::Json, b"{nope").unwrap_err().code,
        400
    );
    assert_eq!(
        decode_body(BodyFormat::Yaml, b"a: 1\n---\nb: 2\n")
            .unwrap_err()
            .code,
        400
    );
    let big = vec![b' '; MAX_BODY + 1];
    let e = decode_body(BodyFormat::Json, &big).unwrap_err();
    assert_eq!(
        (e.code, e.reason, e.message.as_str()),
        (
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 3145728"
        )
    );
    assert_eq!(
        BodyFormat::from_content_type(Some("text/html"))
            .unwrap_err()
            .code,
        415
    );
}

#[test]
fn bodies_nested_too_deep_are_bad_requests_in_every_format() {
    use crate::limits::MAX_DEPTH;
    let flow = |n: usize| "[".repeat(n) + "1" + &"]".repeat(n);
    let blocks =
        |n: usize| -> String { (0..n).map(|i| format!("{}- \n", "  ".repeat(i))).collect() };
    for (what, format, body) in [
        ("JSON", BodyFormat::Json, flow(MAX_DEPTH + 1)),
        ("JSON far too deep", BodyFormat::Json, flow(100_000)),
        (
            "YAML flow",
            BodyFormat::Yaml,
            format!("a: {}", flow(MAX_DEPTH)),
        ),
        ("YAML blocks", BodyFormat::Yaml, blocks(MAX_DEPTH + 1)),
        ("YAML far too deep", BodyFormat::Yaml, flow(100_000)),
        (
            "apply",
            BodyFormat::ApplyPatch,
            format!("a: {}", flow(MAX_DEPTH)),
        ),
        ("merge patch", BodyFormat::MergePatch, flow(MAX_DEPTH + 1)),
    ] {
        let e = decode_body(format, body.as_bytes()).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"), "{what}: {e}");
    }
    let deepest = decode_body(BodyFormat::Yaml, blocks(MAX_DEPTH).as_bytes()).unwrap();
    assert_eq!(
        crate::limits::depth_within(&deepest, MAX_DEPTH),
        Some(MAX_DEPTH)
    );
}

#[test]
fn yaml_aliases_cannot_multiply_a_body() {
    // Each level names the one before nine times: 9^9 leaves from a few hundred bytes.
    let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        yaml.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let e = decode_body(BodyFormat::Yaml, yaml.as_bytes()).unwrap_err();
    assert_eq!(e.code, 400, "{e}");
}

#[test]
fn a_protobuf_body_of_another_type_is_refused_before_decoding() {
    let cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}
    });
    let body = crate::protobuf::encode_k8s_protobuf(&cm).unwrap();
    let expect = |api_version, kind| Expect { api_version, kind };
    let ok = decode_typed_body(BodyFormat::Protobuf, &body, expect(Some("v1"), "ConfigMap"));
    assert_eq!(ok.unwrap()["metadata"]["name"], "a");
    for (want, message) in [
        (
            expect(Some("v1"), "Secret"),
            "the kind in the data (ConfigMap)",
        ),
        (
            expect(Some("apps/v1"), "ConfigMap"),
            "the API version in the data (v1)",
        ),
    ] {
        let e = decode_typed_body(BodyFormat::Protobuf, &body, want).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e.message.contains(message), "{}", e.message);
    }
    // Any version, for types every group serves.
    let any = expect(None, "ConfigMap");
    assert!(decode_typed_body(BodyFormat::Protobuf, &body, any).is_ok());
}
