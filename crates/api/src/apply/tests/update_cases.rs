//! Scenario table for ordinary writes (create, update, patch), tracked as `Update`.

use serde_json::json;

use super::scenario::{check, Case, Check::*};
use super::*;

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "a create gives every field it sets to the creator",
            steps: vec![Step::Create {
                manager: "kubectl-create",
                object: deploy(nginx_spec()),
            }],
            checks: vec![
                Managers(&["kubectl-create/Update"]),
                Time("kubectl-create", "Update", 1),
                Fields(
                    "kubectl-create",
                    "Update",
                    json!({"f:spec": {
                    ".": {}, "f:replicas": {}, "f:selector": {},
                    "f:template": {".": {},
                        "f:metadata": {".": {}, "f:labels": {".": {}, "f:app": {}}},
                        "f:spec": {".": {}, "f:containers": {".": {},
                            "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {},
                                "f:ports": {".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                                    ".": {}, "f:containerPort": {}}}}}}}}}),
                ),
            ],
        },
        Case {
            name: "an update takes the fields it changes from an applier, without conflict",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                update("ctrl", |d| d["spec"]["replicas"] = json!(5)),
            ],
            checks: vec![
                Owns("ctrl", ".spec.replicas"),
                NotOwns("a", ".spec.replicas"),
                Managers(&["ctrl/Update"]),
            ],
        },
        Case {
            name: "an update that changes nothing leaves managedFields alone",
            steps: vec![ssa("a", deploy(nginx_spec())), update("ctrl", |_| {})],
            checks: vec![Unchanged],
        },
        Case {
            name: "a repeated updater accumulates fields and moves its time",
            steps: vec![
                ssa("a", deploy(json!({"minReadySeconds": 1}))),
                update("ctrl", |d| d["spec"]["replicas"] = json!(5)),
                update("ctrl", |d| d["spec"]["paused"] = json!(true)),
            ],
            checks: vec![
                Owns("ctrl", ".spec.replicas"),
                Owns("ctrl", ".spec.paused"),
                Time("ctrl", "Update", 3),
            ],
        },
        Case {
            name: "an update that changes nothing keeps the updater's time",
            steps: vec![
                ssa("a", deploy(json!({"minReadySeconds": 1}))),
                update("ctrl", |d| d["spec"]["replicas"] = json!(5)),
                update("ctrl", |d| d["spec"]["replicas"] = json!(5)),
            ],
            checks: vec![Time("ctrl", "Update", 2), Unchanged],
        },
        Case {
            name: "removed fields leave every manager",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3, "paused": true}))),
                update("b", |d| {
                    d["spec"].as_object_mut().unwrap().shift_remove("paused");
                }),
            ],
            checks: vec![
                NotOwns("a", ".spec.paused"),
                Owns("a", ".spec.replicas"),
                Managers(&["a/Apply"]),
            ],
        },
        Case {
            name: "a manager left with nothing is dropped",
            steps: vec![
                ssa("a", deploy(json!({"paused": true}))),
                update("b", |d| {
                    d["spec"].as_object_mut().unwrap().shift_remove("paused");
                }),
            ],
            checks: vec![
                Managers(&[]),
                Absent("/metadata/managedFields"),
                At("/spec", json!({})),
            ],
        },
        Case {
            name: "managedFields sent by the client are honoured",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                update("x", |d| {
                    d["metadata"]["managedFields"] = json!([{"manager": "someone", "operation": "Update",
                        "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]);
                }),
            ],
            checks: vec![
                Managers(&["someone/Update"]),
                Owns("someone", ".spec.replicas"),
            ],
        },
        Case {
            name: "a list of one empty entry clears ownership; the request's changes are tracked",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                update("x", |d| {
                    d["metadata"]["managedFields"] = json!([{}]);
                    d["spec"]["paused"] = json!(true);
                }),
            ],
            checks: vec![
                Managers(&["x/Update"]),
                Owns("x", ".spec.paused"),
                NotOwns("x", ".spec.replicas"),
            ],
        },
        Case {
            name: "an empty list does not clear ownership",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                update("x", |d| d["metadata"]["managedFields"] = json!([])),
            ],
            checks: vec![Unchanged],
        },
        Case {
            name: "sent managedFields that do not decode are ignored",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                update("x", |d| {
                    d["metadata"]["managedFields"] = json!([{"operation": "Nope"}])
                }),
            ],
            checks: vec![Unchanged],
        },
        Case {
            name: "a status update owns only status and ignores sent managedFields",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                Step::Update {
                    manager: "ctrl",
                    subresource: Some("status"),
                    edit: |d| {
                        d["status"] = json!({"replicas": 3});
                        d["spec"]["replicas"] = json!(99);
                        d["metadata"]["managedFields"] = json!([{}]);
                    },
                },
            ],
            checks: vec![
                Managers(&["a/Apply", "ctrl/Update/status"]),
                Fields(
                    "ctrl",
                    "Update",
                    json!({"f:status": {".": {}, "f:replicas": {}}}),
                ),
                Owns("a", ".spec.replicas"),
            ],
        },
        Case {
            name: "a main-resource update does not track status",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3}))),
                update("x", |d| {
                    d["status"] = json!({"replicas": 1});
                    d["spec"]["paused"] = json!(true);
                }),
            ],
            checks: vec![Fields("x", "Update", json!({"f:spec": {"f:paused": {}}}))],
        },
        Case {
            name: "the first update of an untracked object starts tracking",
            steps: vec![
                Step::Store(deploy(json!({"replicas": 3}))),
                update("x", |d| d["spec"]["paused"] = json!(true)),
            ],
            checks: vec![
                Managers(&["x/Update"]),
                Fields("x", "Update", json!({"f:spec": {"f:paused": {}}})),
            ],
        },
        Case {
            name: "the entry's apiVersion follows the request",
            steps: vec![
                Step::Create {
                    manager: "x",
                    object: deploy(json!({"replicas": 1})),
                },
                update("x", |d| {
                    d["apiVersion"] = json!("apps/v1beta2");
                    d["spec"]["replicas"] = json!(2);
                }),
            ],
            checks: vec![At(
                "/metadata/managedFields/0/apiVersion",
                json!("apps/v1beta2"),
            )],
        },
        Case {
            name: "a label update owns only the label it changed",
            steps: vec![
                Step::Create {
                    manager: "creator",
                    object: json!({"apiVersion": "apps/v1", "kind": "Deployment",
                                   "metadata": {"name": "web", "labels": {"a": "1", "b": "2"}}}),
                },
                update("y", |d| d["metadata"]["labels"]["b"] = json!("3")),
            ],
            checks: vec![
                Fields(
                    "y",
                    "Update",
                    json!({"f:metadata": {"f:labels": {"f:b": {}}}}),
                ),
                Fields(
                    "creator",
                    "Update",
                    json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}),
                ),
            ],
        },
        Case {
            name: "an update adding a list item owns the item",
            steps: vec![
                ssa(
                    "a",
                    deploy(json!({"template": {"spec": {"containers": [{"name": "nginx"}]}}})),
                ),
                update("inject", |d| {
                    d["spec"]["template"]["spec"]["containers"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!({"name": "proxy", "image": "envoy"}));
                }),
            ],
            checks: vec![
                Owns("inject", ".spec.template.spec.containers[name=\"proxy\"]"),
                Owns(
                    "inject",
                    ".spec.template.spec.containers[name=\"proxy\"].image",
                ),
                Owns("a", ".spec.template.spec.containers[name=\"nginx\"].name"),
            ],
        },
    ]
}

#[test]
fn update_scenarios() {
    let all = cases();
    assert!(all.len() >= 15, "{} update cases", all.len());
    for case in all {
        check(case);
    }
}

#[test]
fn an_entry_whose_fields_do_not_change_keeps_its_fields_v1_as_stored() {
    let schema = schema();
    let track = |old: &serde_json::Value, new: &mut serde_json::Value, n: usize| {
        crate::apply::track_update(Some(old), new, "me", None, &schema, "Deployment", &at(n))
            .unwrap()
    };
    let mut old = deploy(json!({"replicas": 1}));
    // Another manager's entry, its keys in an order the encoder would not write.
    let theirs = json!({"f:spec": {"f:replicas": {}}, "f:metadata": {"f:labels": {"f:app": {}}}});
    old["metadata"]["labels"] = json!({"app": "web"});
    old["metadata"]["managedFields"] = json!([{"manager": "them", "operation": "Update",
        "apiVersion": "apps/v1", "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": theirs}]);
    let mut new = old.clone();
    new["metadata"]["labels"]["tier"] = json!("front");
    track(&old, &mut new, 1);
    let entry = |obj: &serde_json::Value, who: &str| {
        let list = obj["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(list.len(), 2, "{list:?}");
        list.iter().find(|e| e["manager"] == who).unwrap().clone()
    };
    let fields = |obj: &serde_json::Value, who: &str| entry(obj, who)["fieldsV1"].clone();
    // The top-level keys of an entry's fieldsV1, in their order.
    let keys = |obj: &serde_json::Value, who: &str| -> Vec<String> {
        fields(obj, who)
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(
        keys(&new, "them"),
        ["f:spec", "f:metadata"],
        "written back as stored"
    );
    assert_eq!(
        fields(&new, "me"),
        json!({"f:metadata": {"f:labels": {"f:tier": {}}}})
    );
    // Taking one of their fields re-encodes their entry without it.
    let mut newer = new.clone();
    newer["spec"]["replicas"] = json!(3);
    track(&new, &mut newer, 2);
    assert_eq!(
        fields(&newer, "them"),
        json!({"f:metadata": {"f:labels": {"f:app": {}}}})
    );
    // Writing again only what it owns moves my time and keeps my `fieldsV1` as stored (its
    // keys here in an order the encoder would not write).
    let mut again = newer.clone();
    let list = again["metadata"]["managedFields"].as_array_mut().unwrap();
    let mine = list.iter_mut().find(|e| e["manager"] == "me").unwrap();
    mine["fieldsV1"] =
        json!({"f:spec": {"f:replicas": {}}, "f:metadata": {"f:labels": {"f:tier": {}}}});
    let stored = again.clone();
    again["spec"]["replicas"] = json!(4);
    track(&stored, &mut again, 3);
    assert_eq!(
        keys(&again, "me"),
        ["f:spec", "f:metadata"],
        "written back as stored"
    );
    assert_eq!(
        entry(&again, "me")["time"],
        json!(at(3)),
        "the updater's time moves"
    );
}

#[test]
fn broken_stored_managed_fields_fail_and_are_dropped() {
    let schema = schema();
    let mut old = deploy(json!({"replicas": 1}));
    old["metadata"]["managedFields"] = json!([{"manager": "m", "operation": "Bogus"}]);
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(2);
    let err = crate::apply::track_update(
        Some(&old),
        &mut new,
        "x",
        None,
        &schema,
        "Deployment",
        &at(1),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("failed to decode managed fields"),
        "{err}"
    );
    assert_eq!(new.pointer("/metadata/managedFields"), None);
    assert_eq!(new["spec"]["replicas"], 2);
}

#[test]
fn apply_refuses_broken_stored_managed_fields() {
    let schema = schema();
    let mut live = deploy(json!({"replicas": 1}));
    live["metadata"]["managedFields"] =
        json!([{"manager": "m", "operation": "Update", "fieldsV1": {"x:1": {}}}]);
    let err = crate::apply::apply(
        Some(&live),
        &deploy(json!({})),
        "a",
        false,
        &schema,
        "Deployment",
        &at(1),
    )
    .unwrap_err();
    assert!(err.to_string().contains("invalid fieldsV1"), "{err}");
}

#[test]
fn an_apply_keeps_the_fields_v1_of_entries_it_does_not_change_as_stored() {
    let schema = schema();
    let mut live = deploy(json!({"replicas": 1}));
    live["metadata"]["labels"] = json!({"app": "web"});
    // Key orders the encoder would not write, in both entries.
    live["metadata"]["managedFields"] = json!([
        {"manager": "them", "operation": "Update", "apiVersion": "apps/v1",
         "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:replicas": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}},
        {"manager": "me", "operation": "Apply", "apiVersion": "apps/v1",
         "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:paused": {}}, "f:metadata": {"f:labels": {"f:tier": {}}}}}
    ]);
    live["metadata"]["labels"]["tier"] = json!("front");
    live["spec"]["paused"] = json!(false);
    let mut config = deploy(json!({"paused": false}));
    config["metadata"]["labels"] = json!({"tier": "front"});
    let keys = |obj: &serde_json::Value, who: &str| -> Vec<String> {
        let list = obj["metadata"]["managedFields"].as_array().unwrap();
        let e = list.iter().find(|e| e["manager"] == who).unwrap();
        e["fieldsV1"].as_object().unwrap().keys().cloned().collect()
    };
    let apply = |config: &serde_json::Value, when: usize| {
        crate::apply::apply(
            Some(&live),
            config,
            "me",
            false,
            &schema,
            "Deployment",
            &at(when),
        )
        .unwrap()
    };
    let same = apply(&config, 1);
    assert_eq!(keys(&same, "them"), ["f:spec", "f:metadata"]);
    assert_eq!(keys(&same, "me"), ["f:spec", "f:metadata"]);
    // Applying more re-encodes the applier's entry; theirs stays as stored.
    config["spec"]["minReadySeconds"] = json!(5);
    let more = apply(&config, 2);
    assert_eq!(keys(&more, "them"), ["f:spec", "f:metadata"]);
    assert_eq!(keys(&more, "me"), ["f:metadata", "f:spec"]);
}
