//! Strategic merge patch on objects and maps: merging, nulls, `$patch` on maps, `$retainKeys`,
//! unknown types, and the errors a user can make.

use serde_json::{json, Value};

use super::{case, malformed, ok, run, Case, Dialect, Want};

fn smp(name: &'static str, doc: Value, patch: Value, want: Want) -> Case {
    case(name, Dialect::Smp("Deployment"), doc, patch, want)
}

fn deploy() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web", "tier": "front"}},
            "strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {"spec": {"nodeSelector": {"disk": "ssd", "zone": "a"},
                "containers": [{"name": "web", "image": "nginx"}]}}
        }
    })
}

/// `deploy()` with `value` at `pointer` (which must exist).
fn deploy_with(pointer: &str, value: Value) -> Value {
    let mut doc = deploy();
    if let Some(slot) = doc.pointer_mut(pointer) {
        *slot = value;
    }
    doc
}

/// `deploy()` without the member at `pointer`.
fn deploy_without(pointer: &str) -> Value {
    let mut doc = deploy();
    let (parent, name) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    if let Some(Value::Object(members)) = doc.pointer_mut(parent) {
        members.shift_remove(name);
    }
    doc
}

#[test]
fn maps_and_scalars() {
    let mut labels_added = deploy();
    labels_added["metadata"]["labels"]["team"] = json!("x");
    let mut new_subtree = deploy();
    new_subtree["spec"]["template"]["metadata"] = json!({"labels": {"app": "web"}});
    run(vec![
        smp(
            "a scalar replaces",
            deploy(),
            json!({"spec": {"replicas": 5}}),
            ok(deploy_with("/spec/replicas", json!(5))),
        ),
        smp(
            "maps merge recursively",
            deploy(),
            json!({"metadata": {"labels": {"team": "x"}}}),
            ok(labels_added),
        ),
        smp(
            "null deletes a key",
            deploy(),
            json!({"metadata": {"labels": {"tier": null}}}),
            ok(deploy_with("/metadata/labels", json!({"app": "web"}))),
        ),
        smp(
            "null for an absent key is not stored",
            deploy(),
            json!({"metadata": {"annotations": null}}),
            ok(deploy()),
        ),
        smp(
            "nulls and directives inside a new subtree are resolved",
            deploy(),
            json!({"spec": {"template": {"metadata": {"labels": {"app": "web", "gone": null},
                "annotations": {"$patch": "delete"}}}}}),
            ok(new_subtree),
        ),
        smp(
            "an object replaces a scalar",
            deploy_with("/spec/replicas", json!("x")),
            json!({"spec": {"replicas": {"a": 1, "b": null}}}),
            ok(deploy_with("/spec/replicas", json!({"a": 1}))),
        ),
        smp(
            "an empty patch changes nothing",
            deploy(),
            json!({}),
            ok(deploy()),
        ),
        smp(
            "a $-prefixed key in a map is data",
            deploy(),
            json!({"spec": {"template": {"spec": {"nodeSelector": {"$odd": "1"}}}}}),
            ok(deploy_with(
                "/spec/template/spec/nodeSelector",
                json!({"disk": "ssd", "zone": "a", "$odd": "1"}),
            )),
        ),
    ]);
}

#[test]
fn patch_directive_on_maps() {
    run(vec![
        smp(
            "$patch: replace replaces a map",
            deploy(),
            json!({"spec": {"selector": {"matchLabels": {"$patch": "replace", "app": "web2"}}}}),
            ok(deploy_with(
                "/spec/selector/matchLabels",
                json!({"app": "web2"}),
            )),
        ),
        smp(
            "$patch: replace on a struct drops unnamed fields",
            deploy(),
            json!({"spec": {"strategy": {"$patch": "replace", "type": "Recreate"}}}),
            ok(deploy_with("/spec/strategy", json!({"type": "Recreate"}))),
        ),
        smp(
            "$patch: replace on an absent map stores it",
            deploy_without("/metadata/labels"),
            json!({"metadata": {"labels": {"$patch": "replace", "a": "b"}}}),
            ok(deploy_with("/metadata/labels", json!({"a": "b"}))),
        ),
        smp(
            "$patch: delete deletes a map",
            deploy(),
            json!({"spec": {"strategy": {"rollingUpdate": {"$patch": "delete"}}}}),
            ok(deploy_with(
                "/spec/strategy",
                json!({"type": "RollingUpdate"}),
            )),
        ),
        smp(
            "$patch: delete on an absent map is a no-op",
            deploy(),
            json!({"metadata": {"annotations": {"$patch": "delete"}}}),
            ok(deploy()),
        ),
        smp(
            "$patch: merge on a map is the default",
            deploy(),
            json!({"metadata": {"labels": {"$patch": "merge", "tier": null}}}),
            ok(deploy_with("/metadata/labels", json!({"app": "web"}))),
        ),
        smp(
            "$patch: replace at the top level",
            deploy(),
            json!({"$patch": "replace", "kind": "Deployment"}),
            ok(json!({"kind": "Deployment"})),
        ),
        smp(
            "$patch: delete at the top level is refused",
            deploy(),
            json!({"$patch": "delete"}),
            malformed("would delete the whole object"),
        ),
        smp(
            "an unknown $patch value",
            deploy(),
            json!({"spec": {"strategy": {"$patch": "remove"}}}),
            malformed("at /spec/strategy/$patch: unknown `$patch` value \"remove\""),
        ),
    ]);
}

#[test]
fn retain_keys() {
    run(vec![
        smp(
            "switching to Recreate clears rollingUpdate",
            deploy(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
            ok(deploy_with("/spec/strategy", json!({"type": "Recreate"}))),
        ),
        smp(
            "$retainKeys keeps listed keys the patch doesn't touch",
            deploy(),
            json!({"spec": {"strategy": {"$retainKeys": ["rollingUpdate", "type"],
                "rollingUpdate": {"maxSurge": 1}}}}),
            ok(deploy_with(
                "/spec/strategy",
                json!({"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
            )),
        ),
        smp(
            "$retainKeys must list what the patch sets",
            deploy(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1}}}}),
            malformed("at /spec/strategy/$retainKeys: does not list `rollingUpdate`"),
        ),
        smp(
            "$retainKeys must be a list of names",
            deploy(),
            json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
            malformed("must be a list of field names, got a string"),
        ),
    ]);
}

#[test]
fn unknown_types_and_fields() {
    let cr = json!({"spec": {"size": 1, "tags": ["a", "b"], "nested": {"x": 1, "y": 2}}});
    run(vec![
        case(
            "no schema: maps merge and lists are replaced",
            Dialect::SmpNoSchema,
            cr.clone(),
            json!({"spec": {"tags": ["c"], "nested": {"y": null, "z": 3}}}),
            ok(json!({"spec": {"size": 1, "tags": ["c"], "nested": {"x": 1, "z": 3}}})),
        ),
        case(
            "no schema: $patch: replace still works",
            Dialect::SmpNoSchema,
            cr.clone(),
            json!({"spec": {"nested": {"$patch": "replace", "w": 0}}}),
            ok(json!({"spec": {"size": 1, "tags": ["a", "b"], "nested": {"w": 0}}})),
        ),
        case(
            "no schema: an unknown directive is malformed",
            Dialect::SmpNoSchema,
            cr,
            json!({"spec": {"$replace": true}}),
            malformed("at /spec/$replace: unknown directive `$replace`"),
        ),
        smp(
            "an unknown field of a known type merges like a merge patch",
            deploy(),
            json!({"spec": {"paused": true, "extra": {"l": [1]}}}),
            ok({
                let mut d = deploy();
                d["spec"]["paused"] = json!(true);
                d["spec"]["extra"] = json!({"l": [1]});
                d
            }),
        ),
        case(
            "patchStrategy replace on an object replaces it",
            Dialect::Smp("Widget"),
            json!({"settings": {"mode": "a", "extra": 1}}),
            json!({"settings": {"mode": "b", "gone": null}}),
            ok(json!({"settings": {"mode": "b"}})),
        ),
        case(
            "patchStrategy replace on a keyed list replaces it",
            Dialect::Smp("Widget"),
            json!({"parts": [{"name": "a", "n": 1}]}),
            json!({"parts": [{"name": "a", "m": 2}]}),
            ok(json!({"parts": [{"name": "a", "m": 2}]})),
        ),
        case(
            "a $-prefixed field the schema declares is data",
            Dialect::Smp("JSONSchemaProps"),
            json!({"type": "object"}),
            json!({"$ref": "#/definitions/x"}),
            ok(json!({"type": "object", "$ref": "#/definitions/x"})),
        ),
    ]);
}

#[test]
fn malformed_patches() {
    run(vec![
        smp(
            "the patch is a list",
            deploy(),
            json!([{"op": "add"}]),
            malformed("must be a JSON object, got a list"),
        ),
        smp(
            "an unknown directive names its place",
            deploy(),
            json!({"spec": {"template": {"$patchh": "replace"}}}),
            malformed("at /spec/template/$patchh: unknown directive `$patchh`"),
        ),
        smp(
            "$setElementOrder/ without a field",
            deploy(),
            json!({"spec": {"$setElementOrder/": []}}),
            malformed("`$setElementOrder/` names no field"),
        ),
        smp(
            "list directives need a list",
            deploy(),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": "a"}}),
            malformed("at /metadata/finalizers: is a string, but `$setElementOrder` or"),
        ),
    ]);
}
