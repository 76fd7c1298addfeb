use super::*;

#[test]
fn invalid_names_each_cause_by_its_type() {
    let e = ApiError::invalid(
        "ConfigMap",
        "big",
        "",
        vec![(
            "[]".into(),
            "Too long: must have at most 1048576 bytes".into(),
        )],
    );
    assert_eq!(
        e.message,
        r#"ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes"#
    );
    let s = e.to_status();
    assert_eq!(s["code"], 422);
    assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueTooLong");
    assert_eq!(s["details"]["causes"][0]["field"], "[]");
    let e = ApiError::invalid(
        "ConfigMap",
        "",
        "",
        vec![
            (
                "metadata.name".into(),
                "Required value: name or generateName is required".into(),
            ),
            ("data[a b]".into(), "Invalid value: \"a b\": nope".into()),
        ],
    );
    let causes = &e.to_status()["details"]["causes"];
    assert_eq!(causes[0]["reason"], "FieldValueRequired");
    assert_eq!(causes[1]["reason"], "FieldValueInvalid");
    assert!(e
        .message
        .starts_with(r#"ConfigMap "" is invalid: [metadata.name: Required"#));
}
