use std::collections::BTreeMap;

use serde_json::json;

use crate::selector::label::{LabelSelector, Operator, Requirement};
use crate::selector::Error;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Input → canonical form (sorted by key, value sets sorted and de-duplicated).
#[test]
fn parses_to_canonical_form() {
    let cases: &[(&str, &str)] = &[
        ("", ""),
        ("   ", ""),
        ("a=b", "a=b"),
        ("a==b", "a==b"),
        ("a!=b", "a!=b"),
        ("a", "a"),
        ("!a", "!a"),
        (" ! a ", "!a"),
        ("a in (y,x,y)", "a in (x,y)"),
        ("a notin (x)", "a notin (x)"),
        ("a in(x)", "a in (x)"),
        ("a in ( x , y )", "a in (x,y)"),
        ("a in ()", "a in ()"),
        ("a in (x,)", "a in (,x)"),
        ("a=", "a="),
        ("a=,b=c", "a=,b=c"),
        ("b=c, a=b", "a=b,b=c"),
        ("a>1", "a>1"),
        ("a<5", "a<5"),
        ("in=notin", "in=notin"),
        ("x in (in,notin)", "x in (in,notin)"),
        ("example.com/app=web", "example.com/app=web"),
        ("a=b\t,\nc", "a=b,c"),
        (
            "environment in (production, qa),tier notin (frontend,backend),partition",
            "environment in (production,qa),partition,tier notin (backend,frontend)",
        ),
    ];
    for (input, want) in cases {
        let sel = LabelSelector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(sel.to_string(), *want, "input {input:?}");
        // The canonical form parses back to the same selector.
        assert_eq!(
            LabelSelector::parse(want).unwrap(),
            sel,
            "round trip of {want:?}"
        );
    }
}

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and \
    must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
    '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric \
    characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
    'MyValue',  or 'my_value',  or '12345', regex used for validation is \
    '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Input → the exact message Kubernetes gives.
#[test]
fn rejects_with_kubernetes_messages() {
    let long = "x".repeat(64);
    let cases: Vec<(String, String)> = vec![
        ("a=b c".into(), "found 'c', expected: ',' or 'end of string'".into()),
        ("a=b,".into(), "found '', expected: identifier after ','".into()),
        (",a".into(), "found ',', expected: !, identifier, or 'end of string'".into()),
        ("=a".into(), "found '=', expected: !, identifier, or 'end of string'".into()),
        ("a b".into(), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt".into()),
        ("a!b".into(), "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt".into()),
        ("!a=b".into(), "found '=', expected: ',' or 'end of string'".into()),
        ("a in x".into(), "unable to parse requirement: found 'x' expected: '('".into()),
        ("a in (x".into(), "unable to parse requirement: found '', expected: ',' or ')'".into()),
        ("a in (x y)".into(), "unable to parse requirement: found 'y', expected: ',' or ')'".into()),
        ("a in (=)".into(), "unable to parse requirement: found '=', expected: ',', ')' or identifier".into()),
        ("a=(b)".into(), "unable to parse requirement: found '(', expected: identifier".into()),
        ("!".into(), "unable to parse requirement: found '', expected: identifier".into()),
        ("a>b".into(), "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer".into()),
        ("a b=c".into(), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt".into()),
        ("-a=b".into(), format!("unable to parse requirement: key: Invalid value: \"-a\": {NAME_PART}")),
        ("a/b/c".into(), "unable to parse requirement: key: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into()),
        ("/a".into(), "unable to parse requirement: key: Invalid value: \"/a\": prefix part must be non-empty".into()),
        ("Example.com/a".into(), "unable to parse requirement: key: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into()),
        (format!("{long}=b"), format!("unable to parse requirement: key: Invalid value: \"{long}\": name part must be no more than 63 characters")),
        (format!("a={long}"), format!("unable to parse requirement: values[0][a]: Invalid value: \"{long}\": must be no more than 63 characters")),
        ("a=b-".into(), format!("unable to parse requirement: values[0][a]: Invalid value: \"b-\": {LABEL_VALUE}")),
        ("a in (ok,-bad)".into(), format!("unable to parse requirement: values[0][a]: Invalid value: \"-bad\": {LABEL_VALUE}")),
    ];
    for (input, want) in cases {
        let got = LabelSelector::parse(&input).expect_err(&input).to_string();
        assert_eq!(got, want, "input {input:?}");
    }
}

#[test]
fn matches_label_sets() {
    let set = labels(&[("app", "web"), ("tier", "front"), ("replicas", "3")]);
    let cases: &[(&str, bool)] = &[
        ("", true),
        ("app=web", true),
        ("app==web", true),
        ("app=db", false),
        ("app!=db", true),
        ("app!=web", false),
        ("missing!=x", true),
        ("app in (db,web)", true),
        ("app in (db)", false),
        ("missing in (x)", false),
        ("app notin (db)", true),
        ("app notin (web)", false),
        ("missing notin (x)", true),
        ("app", true),
        ("missing", false),
        ("!missing", true),
        ("!app", false),
        ("app=web,tier=front", true),
        ("app=web,tier=back", false),
        ("replicas>2", true),
        ("replicas>3", false),
        ("replicas<4", true),
        ("app>1", false),
        ("missing<100", false),
        ("missing=", false),
    ];
    for (input, want) in cases {
        let sel = LabelSelector::parse(input).unwrap();
        assert_eq!(sel.matches(&set), *want, "{input:?} against {set:?}");
    }
}

#[test]
fn matches_json_labels_and_objects() {
    let obj = json!({"metadata": {"name": "x", "labels": {"app": "web", "n": 1}}});
    let bare = json!({"metadata": {"name": "y"}});
    let cases: &[(&str, bool, bool)] = &[
        ("app=web", true, false),
        ("!app", false, true),
        // A non-string label value never matches (the API does not store one).
        ("n", false, false),
        ("app notin (db)", true, true),
        ("", true, true),
    ];
    for (input, on_obj, on_bare) in cases {
        let sel = LabelSelector::parse(input).unwrap();
        assert_eq!(
            sel.matches_object(&obj),
            *on_obj,
            "{input:?} on labelled object"
        );
        assert_eq!(
            sel.matches_object(&bare),
            *on_bare,
            "{input:?} on bare object"
        );
        let map = obj["metadata"]["labels"].as_object().unwrap();
        assert_eq!(sel.matches(map), *on_obj, "{input:?} on JSON map");
    }
}

/// `metav1.LabelSelector` JSON → canonical string, or the error message.
#[test]
fn converts_metav1_label_selectors() {
    let cases: Vec<(serde_json::Value, Result<&str, &str>)> = vec![
        (json!({}), Ok("")),
        (json!({"matchLabels": {}, "matchExpressions": []}), Ok("")),
        (json!({"matchLabels": {"b": "2", "a": "1"}}), Ok("a=1,b=2")),
        (
            json!({"matchLabels": {"app": "web"}, "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "owner", "operator": "Exists", "values": []}
            ]}),
            Ok("app=web,!canary,env notin (prod),owner,tier in (a,b)"),
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
            Err("\"Gt\" is not a valid label selector operator"),
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
            Err("values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"),
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            Err("values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"),
        ),
        (
            json!({"matchLabels": {"a b": "c"}}),
            Err("key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ),
        (json!("app=web"), Err("a label selector must be an object with matchLabels and/or matchExpressions, not \"app=web\"")),
    ];
    for (input, want) in cases {
        let got = LabelSelector::from_json(&input)
            .map(|s| s.to_string())
            .map_err(|e| e.to_string());
        assert_eq!(
            got.as_deref().map_err(String::as_str),
            want,
            "input {input}"
        );
    }
}

#[test]
fn null_selects_nothing_and_empty_everything() {
    let any = labels(&[("a", "b")]);
    let none = LabelSelector::from_json(&serde_json::Value::Null).unwrap();
    assert!(none.is_nothing() && !none.is_everything());
    assert!(!none.matches(&any) && !none.matches(&labels(&[])));
    let all = LabelSelector::from_json(&json!({})).unwrap();
    assert!(all.is_everything() && all.matches(&any) && all.matches(&labels(&[])));
    let from_set = LabelSelector::from_set(&labels(&[("a", "b")])).unwrap();
    assert!(from_set.matches(&any) && !from_set.matches(&labels(&[])));
    assert!(LabelSelector::from_set(&labels(&[]))
        .unwrap()
        .is_everything());
}

#[test]
fn requirement_constructor_validates() {
    type Case<'a> = (&'a str, Operator, Vec<&'a str>, Result<&'a str, Error>);
    let cases: Vec<Case> = vec![
        ("a", Operator::In, vec!["y", "x", "x"], Ok("a in (x,y)")),
        ("a", Operator::Equals, vec!["x", "y"], Err(Error::Requirement("values: Invalid value: []string{\"x\", \"y\"}: exact-match compatibility requires one single value".into()))),
        ("a", Operator::GreaterThan, vec![], Err(Error::Requirement("values: Invalid value: []string{}: for 'Gt', 'Lt' operators, exactly one value is required".into()))),
        ("", Operator::Exists, vec![], Err(Error::Requirement("key: Invalid value: \"\": name part must be non-empty; ".to_string() + NAME_PART))),
    ];
    for (key, op, values, want) in cases {
        let got = Requirement::new(key, op, values.iter().map(|s| s.to_string()).collect())
            .map(|r| r.to_string());
        assert_eq!(got, want.map(str::to_string), "{key} {op:?} {values:?}");
    }
}
