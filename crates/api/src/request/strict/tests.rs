use super::*;

#[test]
fn json_duplicates_are_named_by_their_path_in_order() {
    let cases: &[(&str, &[&str])] = &[
        (r#"{"a":1}"#, &[]),
        (
            r#"{"spec":{"unknownField":"foo","replicas":2,"replicas":3}}"#,
            &[r#"duplicate field "spec.replicas""#],
        ),
        (
            r#"{"a":1,"a":2,"b":[{"n":1,"n":2},{"m":{"x":1,"x":2}}],"a":3}"#,
            &[
                r#"duplicate field "a""#,
                r#"duplicate field "b[0].n""#,
                r#"duplicate field "b[1].m.x""#,
            ],
        ),
        // Equal keys in different objects are no duplicates.
        (r#"{"a":{"x":1},"b":{"x":1}}"#, &[]),
        // Not JSON: the decoder reports it, not this.
        ("{nope", &[]),
    ];
    for (body, want) in cases {
        assert_eq!(json_duplicates(body.as_bytes()), *want, "{body}");
    }
}

#[test]
fn yaml_duplicates_are_named_by_their_line_as_the_yaml_library_words_them() {
    // field_validation.go's body: the duplicate is on line 9 (the body starts with a newline).
    let body = "\napiVersion: ex.com/v1\nkind: Noxu\nmetadata:\n  name: mytest\nspec:\n  unknown: uk1\n  foo: foo1\n  foo: foo2\n  cronSpec: \"* * * * */5\"\n";
    assert_eq!(
        yaml_duplicates(body).as_deref(),
        Some("yaml: unmarshal errors:\n  line 9: key \"foo\" already set in map")
    );
    let two = "a: 1\nb:\n  c: 1\n  c: 2\n9: x\n9: y\n";
    assert_eq!(
        yaml_duplicates(two).as_deref(),
        Some(
            "yaml: unmarshal errors:\n  line 4: key \"c\" already set in map\n  line 6: key 9 already set in map"
        )
    );
    assert_eq!(yaml_duplicates("a: 1\nb: {c: 1}\n"), None);
    // YAML written as JSON (how clients send server-side applies): the same answers, the
    // duplicate's line counted in the JSON text.
    assert_eq!(yaml_duplicates(r#"{"a":1,"b":{"c":1}}"#), None);
    assert_eq!(
        yaml_duplicates("{\"a\": 1,\n \"b\": {\"c\": 1,\n  \"c\": 2}}").as_deref(),
        Some("yaml: unmarshal errors:\n  line 3: key \"c\" already set in map")
    );
    // Escapes name the same key.
    assert!(yaml_duplicates(r#"{"a":1,"\u0061":2}"#).is_some());
}

#[test]
fn yaml_errors_become_one_warning_per_line() {
    let e = "yaml: unmarshal errors:\n  line 4: key \"c\" already set in map\n  line 6: key 9 already set in map";
    assert_eq!(
        yaml_warnings(e),
        vec![
            "line 4: key \"c\" already set in map",
            "line 6: key 9 already set in map"
        ]
    );
    assert_eq!(
        yaml_warnings(&format!("error converting YAML to JSON: {e}")).len(),
        2
    );
    assert_eq!(
        yaml_warnings("duplicate field \"a\""),
        vec!["duplicate field \"a\""]
    );
}
