//! Tables for the building blocks: list merge order, printed paths, and set algebra.

use serde_json::{json, Value};

use super::schema;
use crate::apply::merge::merge;
use crate::apply::typed::{Ty, Types};
use crate::apply::{FieldSet, Path};

fn names(list: &[&str]) -> Value {
    Value::Array(list.iter().map(|n| json!({"name": n})).collect())
}

#[test]
fn list_map_merge_order() {
    let schema = schema();
    let types = Types {
        schema: &schema,
        key_defaults: &[],
    };
    let ty = Ty::ListMap(
        vec!["name".into()],
        Box::new(Ty::Struct("Container".into())),
    );
    // (live, applied, result): applied items keep the applied order, live-only items stay
    // where they stood relative to their neighbours.
    let cases: Vec<(&[&str], &[&str], &[&str])> = vec![
        (&[], &["a", "b"], &["a", "b"]),
        (&["a", "b"], &[], &["a", "b"]),
        (&["a", "b"], &["a", "b"], &["a", "b"]),
        (&["a", "b"], &["c"], &["a", "b", "c"]),
        (&["a", "b", "c"], &["c", "a"], &["b", "c", "a"]),
        (&["a", "x", "b"], &["a", "b", "c"], &["a", "x", "b", "c"]),
        (&["x", "a"], &["b", "a"], &["x", "b", "a"]),
        (&["b", "a"], &["a", "b"], &["a", "b"]),
    ];
    for (live, applied, want) in cases {
        let got = merge(&types, &ty, Some(&names(live)), &names(applied)).unwrap();
        assert_eq!(got, names(want), "live {live:?} applied {applied:?}");
    }
}

#[test]
fn list_map_merge_merges_items_field_by_field() {
    let schema = schema();
    let types = Types {
        schema: &schema,
        key_defaults: &[],
    };
    let ty = Ty::ListMap(
        vec!["name".into()],
        Box::new(Ty::Struct("Container".into())),
    );
    let live = json!([{"name": "a", "image": "x", "args": ["1", "2"]}]);
    let applied = json!([{"name": "a", "args": ["3"], "imagePullPolicy": "Always"}]);
    let got = merge(&types, &ty, Some(&live), &applied).unwrap();
    assert_eq!(
        got,
        json!([{"name": "a", "image": "x", "args": ["3"], "imagePullPolicy": "Always"}])
    );
}

#[test]
fn printed_paths_parse_back() {
    let cases = [
        ".spec.replicas",
        ".spec.template.spec.containers[name=\"nginx\"].image",
        ".spec.template.spec.containers[name=\"nginx\"].ports[containerPort=80,protocol=\"TCP\"]",
        ".metadata.finalizers[=\"foregroundDeletion\"]",
        ".spec.args[3]",
        ".spec.weird[name=\"a]b,c=d\"]",
        ".status.conditions[type=\"Ready\"].status",
    ];
    for text in cases {
        let path = Path::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(path.to_string(), text);
    }
}

#[test]
fn bad_paths_are_refused() {
    for text in ["spec", ".", ".a[", ".a[=nope]", ".a[name]", ".a..b"] {
        assert!(Path::parse(text).is_err(), "{text} parsed");
    }
}

fn set(paths: &[&str]) -> FieldSet {
    FieldSet::from_paths(paths.iter().copied()).unwrap()
}

#[test]
fn set_algebra() {
    type Op = fn(&FieldSet, &FieldSet) -> FieldSet;
    type Paths = &'static [&'static str];
    let cases: Vec<(&str, Op, Paths, Paths, Paths)> = vec![
        (
            "union",
            FieldSet::union,
            &[".a", ".b.c"],
            &[".b.d"],
            &[".a", ".b.c", ".b.d"],
        ),
        (
            "intersection",
            FieldSet::intersection,
            &[".a", ".b.c", ".b.d"],
            &[".b.c", ".e"],
            &[".b.c"],
        ),
        (
            "difference is member-wise",
            FieldSet::difference,
            &[".a", ".a.b"],
            &[".a"],
            &[".a.b"],
        ),
        (
            "recursive difference drops subtrees",
            FieldSet::recursive_difference,
            &[".a", ".a.b", ".c"],
            &[".a"],
            &[".c"],
        ),
        (
            "restrict keeps subtrees",
            FieldSet::restrict_to,
            &[".status.a", ".spec.b", ".status"],
            &[".status"],
            &[".status", ".status.a"],
        ),
    ];
    for (name, op, a, b, want) in cases {
        let got: Vec<String> = op(&set(a), &set(b))
            .paths()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, want, "{name}");
    }
    assert!(set(&[".a.b"]).difference(&set(&[".a.b"])).is_empty());
    // `meets` says whether `difference` removes anything, in both directions.
    for (a, b, meet) in [
        (&[".a", ".a.b"][..], &[".a"][..], true),
        (&[".a.b"], &[".a"], false),
        (&[".a.b", ".c"], &[".x", ".a.b"], true),
        (&[".a.b.c"], &[".a.b.d", ".a.c"], false),
    ] {
        assert_eq!(set(a).meets(&set(b)), meet, "{a:?} meets {b:?}");
        assert_eq!(set(b).meets(&set(a)), meet, "{b:?} meets {a:?}");
        assert_eq!(set(a).difference(&set(b)) != set(a), meet, "{a:?} - {b:?}");
    }
    // `covers` says whether `union` adds anything.
    for (a, b, covers) in [
        (&[".a", ".a.b"][..], &[".a.b"][..], true),
        (&[".a.b"], &[".a"], false),
        (&[".a.b", ".c"], &[".c", ".a.b"], true),
        (&[".a.b.c"], &[".a.b.c", ".a.b.d"], false),
        (&[".x"], &[], true),
    ] {
        assert_eq!(set(a).covers(&set(b)), covers, "{a:?} covers {b:?}");
        assert_eq!(set(a).union(&set(b)) == set(a), covers, "{a:?} + {b:?}");
    }
    assert!(set(&[".a.b"]).contains(&Path::parse(".a.b").unwrap().0));
    assert!(!set(&[".a.b"]).contains(&Path::parse(".a").unwrap().0));
}
