//! Strategic merge patch on lists: merging by key, sets of scalars, list directives, element
//! order (as apimachinery orders it), and lists that are replaced whole.

use serde_json::{json, Value};

use super::{case, malformed, ok, run, Case, Dialect, Want};

fn smp(name: &'static str, doc: Value, patch: Value, want: Want) -> Case {
    case(name, Dialect::Smp("Deployment"), doc, patch, want)
}

/// A Deployment whose pod spec is `spec`.
fn pod(spec: Value) -> Value {
    json!({"spec": {"template": {"spec": spec}}})
}

/// A Deployment whose metadata is `meta`.
fn meta(meta: Value) -> Value {
    json!({"metadata": meta})
}

fn names(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|n| json!({"name": n})).collect())
}

#[test]
fn lists_merged_by_key() {
    let two = pod(json!({"containers": [{"name": "web", "image": "nginx"},
            {"name": "log", "image": "fluentd"}]}));
    run(vec![
        smp(
            "an element is matched by merge key and merged",
            two.clone(),
            pod(json!({"containers": [{"name": "log", "image": "fluent-bit"}]})),
            ok(pod(
                json!({"containers": [{"name": "web", "image": "nginx"},
                    {"name": "log", "image": "fluent-bit"}]}),
            )),
        ),
        smp(
            "a new element comes before the document's trailing elements",
            two.clone(),
            pod(json!({"containers": [{"name": "proxy", "image": "envoy"}]})),
            ok(pod(json!({"containers": [
                {"name": "proxy", "image": "envoy"}, {"name": "web", "image": "nginx"},
                    {"name": "log", "image": "fluentd"}
            ]}))),
        ),
        smp(
            "a new element after a named one follows it",
            two.clone(),
            pod(json!({"containers": [{"name": "web"}, {"name": "proxy", "image": "envoy"}]})),
            ok(pod(json!({"containers": [
                {"name": "web", "image": "nginx"}, {"name": "proxy", "image": "envoy"},
                    {"name": "log", "image": "fluentd"}
            ]}))),
        ),
        smp(
            "$patch: delete removes an element",
            two.clone(),
            pod(json!({"containers": [{"$patch": "delete", "name": "log"}]})),
            ok(pod(
                json!({"containers": [{"name": "web", "image": "nginx"}]}),
            )),
        ),
        smp(
            "$patch: delete of a missing element is a no-op",
            two.clone(),
            pod(json!({"containers": [{"name": "nope", "$patch": "delete"}]})),
            ok(two.clone()),
        ),
        smp(
            "$patch: delete removes every duplicate",
            pod(json!({"containers": names(&["a", "b", "a"])})),
            pod(json!({"containers": [{"name": "a", "$patch": "delete"}]})),
            ok(pod(json!({"containers": names(&["b"])}))),
        ),
        smp(
            "$patch: replace makes the rest of the patch list the list",
            two.clone(),
            pod(json!({"containers": [{"$patch": "replace"},
                    {"name": "only", "image": "busybox", "args": null}]})),
            ok(pod(
                json!({"containers": [{"name": "only", "image": "busybox"}]}),
            )),
        ),
        smp(
            "nested lists merge by their own keys",
            pod(json!({"containers": [
                {"name": "web", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]}]})),
            pod(
                json!({"containers": [{"name": "web", "env": [{"name": "B", "value": "20"}],
                "ports": [{"containerPort": 80.0, "name": "http"}]}]}),
            ),
            ok(pod(json!({"containers": [
                {"name": "web", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}],
                 "ports": [{"containerPort": 80.0, "protocol": "TCP", "name": "http"}]}]}))),
        ),
        smp(
            "ownerReferences merge by uid",
            meta(json!({"ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "a"}]})),
            meta(
                json!({"ownerReferences": [{"uid": "u1", "controller": true},
                    {"uid": "u2", "kind": "Job", "name": "b"}]}),
            ),
            ok(meta(json!({"ownerReferences": [
                {"uid": "u1", "kind": "ReplicaSet", "name": "a", "controller": true},
                    {"uid": "u2", "kind": "Job", "name": "b"}
            ]}))),
        ),
        smp(
            "an empty patch list leaves a merged list alone",
            two.clone(),
            pod(json!({"containers": []})),
            ok(two.clone()),
        ),
        smp(
            "null removes a merged list",
            two.clone(),
            pod(json!({"containers": null})),
            ok(pod(json!({}))),
        ),
        smp(
            "a list new to the document drops directive elements",
            pod(json!({})),
            pod(json!({"initContainers": [{"name": "x", "$patch": "delete"},
                    {"name": "init", "image": "busybox", "env": null}]})),
            ok(pod(
                json!({"initContainers": [{"name": "init", "image": "busybox"}]}),
            )),
        ),
        smp(
            "volumes honour $retainKeys in elements",
            pod(json!({"volumes": [{"name": "data", "emptyDir": {}}]})),
            pod(
                json!({"volumes": [{"$retainKeys": ["configMap", "name"], "name": "data",
                    "configMap": {"name": "cfg"}}]}),
            ),
            ok(pod(
                json!({"volumes": [{"name": "data", "configMap": {"name": "cfg"}}]}),
            )),
        ),
    ]);
}

#[test]
fn element_order() {
    let live = pod(json!({"containers": names(&["a", "b", "c", "d", "e"])}));
    run(vec![
        // The preserve-order design's example:
        // live [B, C, A], patch [A', B', D] → [C, A', B', D].
        smp(
            "patch order wins; server-only elements keep their place",
            pod(json!({"containers": names(&["B", "C", "A"])})),
            pod(
                json!({"containers": [{"name": "A", "image": "a"}, {"name": "B", "image": "b"},
                {"name": "D"}]}),
            ),
            ok(pod(
                json!({"containers": [{"name": "C"}, {"name": "A", "image": "a"},
                {"name": "B", "image": "b"}, {"name": "D"}]}),
            )),
        ),
        smp(
            "$setElementOrder alone reorders",
            live.clone(),
            pod(json!({"$setElementOrder/containers": names(&["e", "d", "c", "b", "a"])})),
            ok(pod(
                json!({"containers": names(&["e", "d", "c", "b", "a"])}),
            )),
        ),
        smp(
            "$setElementOrder places a new element",
            pod(json!({"containers": names(&["a", "b"])})),
            pod(
                json!({"$setElementOrder/containers": names(&["a", "n", "b"]),
                "containers": [{"name": "n"}]}),
            ),
            ok(pod(json!({"containers": names(&["a", "n", "b"])}))),
        ),
        smp(
            "server-only elements slot in before the next element that followed them",
            pod(json!({"containers": names(&["1", "2", "9", "3", "4"])})),
            pod(json!({"$setElementOrder/containers": names(&["2", "1", "4", "3"])})),
            ok(pod(
                json!({"containers": names(&["2", "1", "9", "4", "3"])}),
            )),
        ),
        smp(
            "$setElementOrder may name elements the list lacks",
            pod(json!({"containers": names(&["a", "c"])})),
            pod(json!({"$setElementOrder/containers": names(&["c", "b", "a"])})),
            ok(pod(json!({"containers": names(&["c", "a"])}))),
        ),
        smp(
            "$setElementOrder with deletion",
            live.clone(),
            pod(json!({"$setElementOrder/containers": names(&["e", "a"]),
                "containers": [{"name": "c", "$patch": "delete"}]})),
            ok(pod(json!({"containers": names(&["b", "d", "e", "a"])}))),
        ),
        smp(
            "$setElementOrder must agree with the patch list",
            live.clone(),
            pod(json!({"$setElementOrder/containers": names(&["a", "b"]),
                "containers": names(&["b", "a"])})),
            malformed(
                "at /spec/template/spec/$setElementOrder~1containers: \
                 does not match the list at /spec/template/spec/containers: \"a\"",
            ),
        ),
        smp(
            "$setElementOrder entries need the merge key",
            live.clone(),
            pod(json!({"$setElementOrder/containers": [{"image": "x"}]})),
            malformed("$setElementOrder~1containers/0: must be an object naming the merge key"),
        ),
        smp(
            "$setElementOrder on a replaced list is ignored",
            pod(json!({"tolerations": [{"key": "a"}, {"key": "b"}]})),
            pod(json!({"$setElementOrder/tolerations": [{"key": "b"}, {"key": "a"}]})),
            ok(pod(json!({"tolerations": [{"key": "a"}, {"key": "b"}]}))),
        ),
    ]);
}

#[test]
fn sets_of_scalars() {
    let fin = |f: &[&str]| meta(json!({"finalizers": f}));
    run(vec![
        smp(
            "$setElementOrder alone reorders a set",
            fin(&["a", "b", "c"]),
            meta(json!({"$setElementOrder/finalizers": ["c", "a", "b"]})),
            ok(fin(&["c", "a", "b"])),
        ),
        smp(
            "a union without duplicates",
            fin(&["a", "b"]),
            fin(&["b", "c", "c"]),
            ok(fin(&["a", "b", "c"])),
        ),
        smp(
            "a new value comes first, as apimachinery does",
            fin(&["a", "b"]),
            fin(&["c"]),
            ok(fin(&["c", "a", "b"])),
        ),
        smp(
            "$deleteFromPrimitiveList removes values",
            fin(&["a", "b", "c"]),
            meta(json!({"$deleteFromPrimitiveList/finalizers": ["b", "x"]})),
            ok(fin(&["a", "c"])),
        ),
        smp(
            "$deleteFromPrimitiveList on an absent list adds nothing",
            meta(json!({})),
            meta(json!({"$deleteFromPrimitiveList/finalizers": ["b"]})),
            ok(meta(json!({}))),
        ),
        // The preserve-order design's finalizers example, as apimachinery really orders it.
        smp(
            "$setElementOrder with additions and deletions",
            fin(&["b", "e", "a", "c", "d"]),
            meta(json!({"$setElementOrder/finalizers": ["a", "b", "f"],
                "$deleteFromPrimitiveList/finalizers": ["c"], "finalizers": ["f"]})),
            ok(fin(&["e", "a", "b", "f", "d"])),
        ),
        smp(
            "$setElementOrder must hold the patch's values",
            fin(&["a"]),
            meta(json!({"$setElementOrder/finalizers": ["a"], "finalizers": ["z"]})),
            malformed("does not match the list at /metadata/finalizers: \"z\""),
        ),
        smp(
            "objects in a set are malformed",
            fin(&["a"]),
            meta(json!({"finalizers": [{"$patch": "replace"}]})),
            malformed("at /metadata/finalizers/0: is an object, but this list holds scalars"),
        ),
        smp(
            "$deleteFromPrimitiveList needs a list",
            fin(&["a"]),
            meta(json!({"$deleteFromPrimitiveList/finalizers": "a"})),
            malformed("/metadata/$deleteFromPrimitiveList~1finalizers: must be a list of values"),
        ),
    ]);
}

#[test]
fn replaced_lists() {
    let tol = pod(json!({"tolerations": [{"key": "a", "operator": "Exists"},
            {"key": "b", "operator": "Exists"}]}));
    let args =
        pod(json!({"containers": [{"name": "web", "args": ["--a", "--b"], "command": ["run"]}]}));
    run(vec![
        smp(
            "tolerations are replaced wholesale",
            tol.clone(),
            pod(json!({"tolerations": [{"key": "c", "effect": null}]})),
            ok(pod(json!({"tolerations": [{"key": "c"}]}))),
        ),
        smp(
            "args and command are replaced",
            args.clone(),
            pod(json!({"containers": [{"name": "web", "args": ["--c"], "command": []}]})),
            ok(pod(
                json!({"containers": [{"name": "web", "args": ["--c"], "command": []}]}),
            )),
        ),
        smp(
            "$deleteFromPrimitiveList works on a replaced list too",
            args,
            pod(json!({"containers": [{"name": "web", "$deleteFromPrimitiveList/args": ["--a"]}]})),
            ok(pod(
                json!({"containers": [{"name": "web", "args": ["--b"], "command": ["run"]}]}),
            )),
        ),
        smp(
            "delete markers in a replaced list agree with replacing it",
            tol,
            pod(json!({"tolerations": [{"key": "a", "$patch": "delete"}, {"key": "z"}]})),
            ok(pod(json!({"tolerations": [{"key": "z"}]}))),
        ),
        case(
            "lists of an unknown type are replaced",
            Dialect::SmpNoSchema,
            json!({"items": [{"name": "a", "v": 1}]}),
            json!({"items": [{"name": "a", "w": 2}]}),
            ok(json!({"items": [{"name": "a", "w": 2}]})),
        ),
    ]);
}

#[test]
fn malformed_list_patches() {
    let two = pod(json!({"containers": names(&["a", "b"])}));
    run(vec![
        smp(
            "an element without its merge key",
            two.clone(),
            pod(json!({"containers": [{"name": "a"}, {"image": "x"}]})),
            malformed("at /spec/template/spec/containers/1: has no merge key `name`"),
        ),
        smp(
            "a $patch: delete without the merge key",
            two.clone(),
            pod(json!({"containers": [{"$patch": "delete"}]})),
            malformed("/spec/template/spec/containers/0: `$patch: delete` needs the merge key"),
        ),
        smp(
            "$patch: merge inside a list",
            two.clone(),
            pod(json!({"containers": [{"$patch": "merge"}]})),
            malformed("`$patch: merge` is not supported in a list"),
        ),
        smp(
            "an unknown directive inside an element",
            two.clone(),
            pod(json!({"containers": [{"name": "a", "$position": 0}]})),
            malformed("at /spec/template/spec/containers/0/$position: unknown directive"),
        ),
        smp(
            "an unknown $patch in a list",
            two.clone(),
            pod(json!({"containers": [{"$patch": "upsert", "name": "a"}]})),
            malformed("`$patch` value \"upsert\"; in a list use \"delete\" or \"replace\""),
        ),
        smp(
            "a scalar in a list merged by key",
            two,
            pod(json!({"containers": ["a"]})),
            malformed(
                "at /spec/template/spec/containers/0: is a string, \
                 but elements of a list merged by `name` must be objects",
            ),
        ),
    ]);
}
