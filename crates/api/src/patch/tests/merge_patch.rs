//! RFC 7386 JSON merge patch: every example of the RFC's appendix A, then the public entry
//! point's rules for Kubernetes objects.

use serde_json::{json, Value};

use super::{case, malformed, ok, run, Case, Dialect, Want};
use crate::patch::merge_patch::apply;

fn mp(name: &'static str, doc: Value, patch: Value, want: Want) -> Case {
    case(name, Dialect::Merge, doc, patch, want)
}

/// Appendix A lists (target, patch, result); some targets and patches aren't objects, so these
/// run the RFC's algorithm directly rather than the object-only entry point.
#[test]
fn rfc7386_appendix_a() {
    let examples = [
        (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
        (
            json!({"a": "b"}),
            json!({"b": "c"}),
            json!({"a": "b", "b": "c"}),
        ),
        (json!({"a": "b"}), json!({"a": null}), json!({})),
        (
            json!({"a": "b", "b": "c"}),
            json!({"a": null}),
            json!({"b": "c"}),
        ),
        (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
        (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
        (
            json!({"a": {"b": "c"}}),
            json!({"a": {"b": "d", "c": null}}),
            json!({"a": {"b": "d"}}),
        ),
        (
            json!({"a": [{"b": "c"}]}),
            json!({"a": [1]}),
            json!({"a": [1]}),
        ),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a": "b"}), json!(["c"]), json!(["c"])),
        (json!({"a": "foo"}), json!(null), json!(null)),
        (json!({"a": "foo"}), json!("bar"), json!("bar")),
        (
            json!({"e": null}),
            json!({"a": 1}),
            json!({"e": null, "a": 1}),
        ),
        (
            json!([1, 2]),
            json!({"a": "b", "c": null}),
            json!({"a": "b"}),
        ),
        (
            json!({}),
            json!({"a": {"bb": {"ccc": null}}}),
            json!({"a": {"bb": {}}}),
        ),
    ];
    for (i, (target, patch, want)) in examples.iter().enumerate() {
        assert_eq!(
            &apply(Some(target), patch),
            want,
            "RFC 7386 appendix A example {}",
            i + 1
        );
    }
}

#[test]
fn kubernetes_objects() {
    let deploy = json!({
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"},
            "annotations": {"a": "1"}},
        "spec": {"replicas": 1,
            "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
    });
    run(vec![
        mp(
            "nested objects merge and keep their key order",
            deploy.clone(),
            json!({"metadata": {"labels": {"app": "api", "team": "x"}}}),
            ok(json!({
                "metadata": {"name": "web", "labels": {"app": "api", "tier": "front", "team": "x"},
                    "annotations": {"a": "1"}},
                "spec": {"replicas": 1,
                    "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
            })),
        ),
        mp(
            "null deletes at any depth",
            deploy.clone(),
            json!({"metadata": {"labels": {"tier": null}, "annotations": null}}),
            ok(json!({
                "metadata": {"name": "web", "labels": {"app": "web"}},
                "spec": {"replicas": 1,
                    "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
            })),
        ),
        mp(
            "lists are replaced, never merged",
            deploy.clone(),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar"}]}}}}),
            ok(json!({
                "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"},
                    "annotations": {"a": "1"}},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "sidecar"}]}}}
            })),
        ),
        mp(
            "a scalar replaces an object",
            json!({"spec": {"a": 1}}),
            json!({"spec": "none"}),
            ok(json!({"spec": "none"})),
        ),
        mp(
            "nulls inside a new object are dropped",
            json!({}),
            json!({"spec": {"a": null, "b": {"c": null, "d": 1}}}),
            ok(json!({"spec": {"b": {"d": 1}}})),
        ),
        mp(
            "nulls inside lists are kept",
            json!({}),
            json!({"l": [null, {"a": null}]}),
            ok(json!({"l": [null, {"a": null}]})),
        ),
        mp(
            "an empty patch changes nothing",
            deploy.clone(),
            json!({}),
            ok(deploy.clone()),
        ),
        mp(
            "a list patch is malformed for an object",
            deploy.clone(),
            json!([{"op": "add"}]),
            malformed("a merge patch must be a JSON object, got a list"),
        ),
        mp(
            "a null patch is malformed for an object",
            deploy.clone(),
            json!(null),
            malformed("got null"),
        ),
        mp(
            "a string patch is malformed for an object",
            deploy,
            json!("x"),
            malformed("got a string"),
        ),
    ]);
}
