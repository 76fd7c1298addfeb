//! One table per keyword: (schema node, value, expected messages at `spec.x`), in
//! kube-apiserver's words.

use serde_json::{json, Value};

use super::*;

type Case = (Value, Value, Vec<&'static str>);

fn run(keyword: &str, cases: &[Case]) {
    for (schema, value, want) in cases {
        let mut causes = Vec::new();
        let s = schema.as_object().cloned().unwrap_or_default();
        check(&s, value, "spec.x", &mut causes);
        let got: Vec<&str> = causes.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(got, *want, "{keyword}: {schema} with {value}");
        assert!(causes.iter().all(|(f, _)| f == "spec.x"), "{keyword}");
    }
}

#[test]
fn minimum() {
    run(
        "minimum",
        &[
            (json!({"minimum": 1}), json!(1), vec![]),
            (
                json!({"minimum": 1}),
                json!(0),
                vec!["Invalid value: 0: spec.x in body should be greater than or equal to 1"],
            ),
            (
                json!({"minimum": 1.5}),
                json!(1.25),
                vec!["Invalid value: 1.25: spec.x in body should be greater than or equal to 1.5"],
            ),
            (
                json!({"minimum": 1, "exclusiveMinimum": true}),
                json!(1),
                vec!["Invalid value: 1: spec.x in body should be greater than 1"],
            ),
            (
                json!({"minimum": 1, "exclusiveMinimum": true}),
                json!(2),
                vec![],
            ),
        ],
    );
}

#[test]
fn maximum() {
    run(
        "maximum",
        &[
            (json!({"maximum": 10}), json!(10), vec![]),
            (
                json!({"maximum": 10}),
                json!(11),
                vec!["Invalid value: 11: spec.x in body should be less than or equal to 10"],
            ),
            (
                json!({"maximum": 10, "exclusiveMaximum": true}),
                json!(10),
                vec!["Invalid value: 10: spec.x in body should be less than 10"],
            ),
            (
                json!({"maximum": 0.5}),
                json!(2.0),
                vec!["Invalid value: 2: spec.x in body should be less than or equal to 0.5"],
            ),
        ],
    );
}

#[test]
fn multiple_of() {
    run(
        "multipleOf",
        &[
            (json!({"multipleOf": 2}), json!(4), vec![]),
            (
                json!({"multipleOf": 2}),
                json!(5),
                vec!["Invalid value: 5: spec.x in body should be a multiple of 2"],
            ),
            (json!({"multipleOf": 0.5}), json!(1.5), vec![]),
            (
                json!({"multipleOf": 0.5}),
                json!(1.2),
                vec!["Invalid value: 1.2: spec.x in body should be a multiple of 0.5"],
            ),
        ],
    );
}

#[test]
fn bounds_together_report_each_failure() {
    run(
        "multipleOf+minimum",
        &[(
            json!({"multipleOf": 3, "minimum": 5, "maximum": 9}),
            json!(4),
            vec![
                "Invalid value: 4: spec.x in body should be a multiple of 3",
                "Invalid value: 4: spec.x in body should be greater than or equal to 5",
            ],
        )],
    );
}

#[test]
fn lengths() {
    run(
        "minLength/maxLength",
        &[
            (
                json!({"minLength": 2, "maxLength": 3}),
                json!("abc"),
                vec![],
            ),
            (
                json!({"minLength": 2}),
                json!("a"),
                vec![r#"Invalid value: "a": spec.x in body should be at least 2 chars long"#],
            ),
            (
                json!({"maxLength": 3}),
                json!("abcd"),
                vec!["Too long: may not be more than 3 bytes"],
            ),
            // Characters, not bytes, are counted (utf8.RuneCount).
            (json!({"maxLength": 2}), json!("éé"), vec![]),
        ],
    );
}

#[test]
fn pattern() {
    run(
        "pattern",
        &[
            (json!({"pattern": "^[a-z]+$"}), json!("abc"), vec![]),
            // Unanchored, as Go's MatchString.
            (json!({"pattern": "[0-9]"}), json!("a1b"), vec![]),
            (
                json!({"pattern": "^[a-z]+$"}),
                json!("aB"),
                vec![r#"Invalid value: "aB": spec.x in body should match '^[a-z]+$'"#],
            ),
        ],
    );
}

#[test]
fn items_and_properties() {
    run(
        "minItems/maxItems/minProperties/maxProperties",
        &[
            (json!({"minItems": 1, "maxItems": 2}), json!([1]), vec![]),
            (
                json!({"minItems": 2}),
                json!([1]),
                vec!["Invalid value: 1: spec.x in body should have at least 2 items"],
            ),
            (
                json!({"maxItems": 2}),
                json!([1, 2, 3]),
                vec!["Too many: 3: must have at most 2 items"],
            ),
            (
                json!({"minProperties": 2}),
                json!({"a": 1}),
                vec!["Invalid value: 1: spec.x in body should have at least 2 properties"],
            ),
            (
                json!({"maxProperties": 1}),
                json!({"a": 1, "b": 2}),
                vec!["Too many: 2: must have at most 1 items"],
            ),
        ],
    );
}

#[test]
fn keywords_of_other_types_are_ignored() {
    run(
        "mixed",
        &[
            (json!({"minimum": 5, "maxItems": 0}), json!("abc"), vec![]),
            (json!({"minLength": 5}), json!(1), vec![]),
        ],
    );
}
