//! Names accepted as kube's naming controller accepts them.

use serde_json::{json, Value};

use super::*;

fn crd(name: &str, plural: &str, kind: &str, short: &[&str]) -> Value {
    json!({"metadata": {"name": format!("{plural}.{name}")},
        "spec": {"group": name, "names": {"plural": plural, "kind": kind, "shortNames": short}}})
}

fn accepted(mut c: Value) -> Value {
    let n = accept(&c, &[]);
    c["status"]["acceptedNames"] = n.accepted;
    c
}

#[test]
fn free_names_are_accepted_with_defaults() {
    let n = accept(&crd("a.example.com", "foos", "Foo", &["f"]), &[]);
    assert!(n.ok);
    assert_eq!(
        (n.reason, n.message.as_str()),
        ("NoConflicts", "no conflicts found")
    );
    assert_eq!(
        n.accepted,
        json!({"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList", "shortNames": ["f"]})
    );
}

#[test]
fn names_another_crd_of_the_group_holds_conflict() {
    let holder = accepted(crd("a.example.com", "foos", "Foo", &["f"]));
    let cases = [
        // The kind and its list kind are both taken; kube reports the last it checked.
        (
            crd("a.example.com", "bars", "Foo", &[]),
            "ListKindConflict",
            r#""FooList" is already in use"#,
        ),
        (
            crd("a.example.com", "bars", "Bar", &["f"]),
            "ShortNamesConflict",
            r#""f" is already in use"#,
        ),
    ];
    for (c, reason, message) in cases {
        let n = accept(&c, std::slice::from_ref(&holder));
        assert!(!n.ok);
        assert_eq!((n.reason, n.message.as_str()), (reason, message));
    }
    // Another CRD named "foos.a.example.com" asking for the plural under another name.
    let mut plural = crd("a.example.com", "foos", "Other", &[]);
    plural["metadata"]["name"] = json!("others.a.example.com");
    let n = accept(&plural, std::slice::from_ref(&holder));
    assert_eq!(n.reason, "PluralConflict");
    assert_eq!(n.accepted.get("plural"), None);
    // Another group, or the holder itself, is no conflict.
    assert!(
        accept(
            &crd("b.example.com", "foos", "Foo", &["f"]),
            std::slice::from_ref(&holder)
        )
        .ok
    );
    assert!(accept(&holder, std::slice::from_ref(&holder)).ok);
}
