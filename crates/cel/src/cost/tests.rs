//! Cost estimates against the limits Kubernetes applies, on the upstream e2e suite's rules.

use serde_json::json;

use super::*;
use crate::compile;

/// kube-apiserver's per-expression limits: the static estimate, and one evaluation.
const STATIC_LIMIT: u64 = 10_000_000;
const CALL_LIMIT: u64 = 1_000_000;
/// What fits in a request: an unbounded string's length, an unbounded list of strings' items.
const UNBOUNDED_STRING: u64 = 3 * 1024 * 1024 - 2;
const UNBOUNDED_STRINGS: u64 = (3 * 1024 * 1024 - 2) / 3;

fn cost(rule: &str, shape: &Shape) -> u64 {
    compile(rule).unwrap().estimated_cost(&[("self", shape)])
}

#[test]
fn bounded_rules_fit_the_budget() {
    let ints = |n| Shape::List(Box::new(Shape::Scalar), n);
    let spec = Shape::Object(
        [
            ("x".to_owned(), Shape::Scalar),
            ("y".to_owned(), Shape::Scalar),
            ("firstArray".to_owned(), ints(1000)),
            ("secondArray".to_owned(), ints(1000)),
            ("largeArray".to_owned(), ints(725)),
        ]
        .into(),
    );
    for rule in [
        "self.x + self.y > 0",
        "self.firstArray.isSorted() && self.secondArray.isSorted() && ((self.firstArray.sum() + self.secondArray.sum()) % 2 == 0)",
        "self.largeArray.all(x, self.largeArray.all(y, y == x))",
    ] {
        let c = cost(rule, &spec);
        assert!(c > 0 && c < STATIC_LIMIT, "{rule}: {c}");
    }
    assert!(cost("self.x + self.y > 0", &spec) < 10);
}

#[test]
fn unbounded_strings_are_costly() {
    let strings = Shape::List(Box::new(Shape::String(UNBOUNDED_STRING)), UNBOUNDED_STRINGS);
    let once = cost("self.all(s, s == 'string constant')", &strings);
    assert!(once > 1_000_000, "{once}");
    // Under an unbounded list the rule runs once per item: far past the budget.
    assert!(once.saturating_mul(UNBOUNDED_STRINGS) > 100 * STATIC_LIMIT);
    // A maxLength bounds it.
    let bounded = Shape::List(Box::new(Shape::String(40)), 10);
    assert!(cost("self.all(s, s == 'string constant')", &bounded) < 100);
    let s = Shape::String(UNBOUNDED_STRING);
    assert!(cost("self.matches('^[a-z]+$')", &s) > cost("self.startsWith('a')", &s));
}

#[test]
fn one_evaluation_costs_what_its_values_hold() {
    let rule = "self.largeArray.all(x, self.largeArray.all(y, y == x))";
    let small = json!({"largeArray": [2, 2]});
    let large = json!({"largeArray": vec![20; 725]});
    let e = compile(rule).unwrap();
    assert!(e.estimated_cost(&[("self", &Shape::of(&small))]) < 100);
    assert!(e.estimated_cost(&[("self", &Shape::of(&large))]) > CALL_LIMIT);
}

#[test]
fn shapes_of_values() {
    let v = json!({"a": "xyz", "l": ["a", "bcd"], "n": 1});
    let Shape::Object(f) = Shape::of(&v) else {
        panic!("an object")
    };
    assert_eq!(f["a"], Shape::String(3));
    assert_eq!(f["l"], Shape::List(Box::new(Shape::String(3)), 2));
    assert_eq!(f["n"], Shape::Scalar);
}
