//! The quick check agrees with the walk that names duplicates, on bodies with and without.

use super::has_json_duplicates;
use crate::request::strict::json_duplicates;

#[test]
fn finds_a_duplicate_exactly_when_the_naming_walk_does() {
    let many_keys: String = {
        let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        format!("{{{}}}", keys.join(","))
    };
    let many_keys_repeated = many_keys.replace("\"k39\"", "\"k3\"");
    let cases: &[(&str, bool)] = &[
        (r#"{"a":1,"b":{"c":[1,{"d":2}]}}"#, false),
        (r#"{"a":1,"a":2}"#, true),
        (r#"{"a":{"b":1,"b":1}}"#, true),
        (r#"{"a":[{"x":1},{"x":1,"y":2,"x":3}]}"#, true),
        // Equal once unescaped.
        (r#"{"a":1,"\u0061":2}"#, true),
        // The same key in sibling objects is no duplicate.
        (r#"{"a":{"k":1},"b":{"k":1}}"#, false),
        // Not JSON: nothing before the error repeats.
        (r#"{"a":1,"b":"#, false),
        (r#"{"a":1,"a":"#, true),
        (&many_keys, false),
        (&many_keys_repeated, true),
        ("[]", false),
        ("", false),
    ];
    for (body, want) in cases {
        let quick = has_json_duplicates(body.as_bytes());
        assert_eq!(quick, *want, "{body}");
        assert_eq!(
            quick,
            !json_duplicates(body.as_bytes()).is_empty(),
            "agrees with the naming walk: {body}"
        );
    }
}
