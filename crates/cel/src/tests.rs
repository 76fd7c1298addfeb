//! The expressions CRD rules are written with, over JSON values.

use serde_json::json;

use super::*;

#[test]
fn rules_over_json() {
    let obj = json!({"replicas": 3, "min": 1, "name": "web", "tags": ["a", "b"], "ratio": 0.5});
    let cases: &[(&str, bool)] = &[
        ("self.replicas >= self.min", true),
        ("self.replicas > 5", false),
        ("self.name.startsWith('w') && size(self.name) == 3", true),
        ("self.tags.all(t, t in ['a', 'b'])", true),
        ("self.tags.exists(t, t == 'c')", false),
        ("has(self.missing)", false),
        ("self.name.matches('^[a-z]+$')", true),
        ("self.ratio < 1.0", true),
        ("self.name.upperAscii() == 'WEB'", true),
        ("math.greatest(self.replicas, self.min) == 3", true),
        // JSON integers are ints: arithmetic with int literals.
        ("self.replicas % 2 == 1 && self.replicas + 1 == 4", true),
        ("self.tags.size() - 1 == 1", true),
    ];
    for (rule, want) in cases {
        let e = compile(rule).unwrap();
        assert_eq!(
            e.eval_bool(&[("self", Var::from(&obj))]),
            Ok(*want),
            "{rule}"
        );
    }
}

#[test]
fn old_self_is_a_transition() {
    let e = compile("self >= oldSelf").unwrap();
    assert!(e.uses("oldSelf") && e.uses("self"));
    assert!(!compile("self > 0").unwrap().uses("oldSelf"));
    assert_eq!(
        e.eval_bool(&[
            ("self", Var::from(&json!(2))),
            ("oldSelf", Var::from(&json!(3)))
        ]),
        Ok(false)
    );
}

#[test]
fn messages_and_errors() {
    let m = compile("'replicas is ' + string(self.replicas)").unwrap();
    assert_eq!(
        m.eval_string(&[("self", Var::from(&json!({"replicas": 7})))]),
        Ok("replicas is 7".to_owned())
    );
    assert!(compile("self.replicas >").is_err());
    // Worded and laid out as cel-go's parser.
    assert_eq!(
        compile("self = 42")
            .err()
            .as_deref()
            .and_then(|e| e.split('\n').nth(1)),
        Some(" | self = 42")
    );
    assert!(compile("self = 42")
        .err()
        .is_some_and(|e| e.starts_with("ERROR: <input>:1:6: Syntax error: ")));
    assert!(compile("self.x")
        .unwrap()
        .eval_bool(&[("self", Var::from(&json!({})))])
        .is_err());
    assert!(compile("1").unwrap().eval_bool(&[]).is_err());
    // The same source is compiled once.
    assert!(Arc::ptr_eq(
        &compile("self > 1").unwrap(),
        &compile("self > 1").unwrap()
    ));
}

#[test]
fn optional_old_self() {
    let e = compile("!oldSelf.hasValue() || self >= oldSelf.value()").unwrap();
    let new = json!(2);
    assert_eq!(
        e.eval_bool(&[("self", Var::from(&new)), ("oldSelf", Var::Optional(None))]),
        Ok(true)
    );
    let old = json!(3);
    assert_eq!(
        e.eval_bool(&[
            ("self", Var::from(&new)),
            ("oldSelf", Var::Optional(Some(&old)))
        ]),
        Ok(false)
    );
}

#[test]
fn a_function_this_environment_lacks_is_named() {
    let e = compile("self.noSuchFunction()").unwrap();
    let err = e
        .eval_bool(&[("self", Var::from(&json!([1, 2])))])
        .unwrap_err();
    assert_eq!(e.missing_function(&err), Some("noSuchFunction"));
    let e = compile("self.x == 1").unwrap();
    let err = e.eval_bool(&[("self", Var::from(&json!({})))]).unwrap_err();
    assert_eq!(e.missing_function(&err), None);
    let e = compile("nosuchvar == 1").unwrap();
    let err = e.eval_bool(&[]).unwrap_err();
    assert_eq!(e.missing_function(&err), None);
}
