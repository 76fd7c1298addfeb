//! Apply scenarios about ownership: sharing, conflicts, force, removal, controllers, scopes
//! and refused requests.

use serde_json::json;

use super::scenario::{check, Case, Check::*, *};
use super::*;
use crate::apply::Scope;

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "apply creates the object and owns what it applied",
            steps: vec![ssa("kubectl", deploy(nginx_spec()))],
            checks: vec![
                At("/spec", nginx_spec()),
                Managers(&["kubectl/Apply"]),
                Fields("kubectl", "Apply", nginx_fields()),
                Time("kubectl", "Apply", 1),
                At("/metadata/managedFields/0/apiVersion", json!("apps/v1")),
                At("/metadata/managedFields/0/fieldsType", json!("FieldsV1")),
            ],
        },
        Case {
            name: "applying the same configuration twice changes nothing, time included",
            steps: vec![ssa("kubectl", deploy(nginx_spec())), ssa("kubectl", deploy(nginx_spec()))],
            checks: vec![Unchanged, Time("kubectl", "Apply", 1)],
        },
        Case {
            name: "two appliers setting the same value share the field",
            steps: vec![ssa("a", replicas(3)), ssa("b", replicas(3))],
            checks: vec![Owns("a", ".spec.replicas"), Owns("b", ".spec.replicas"), At("/spec/replicas", json!(3))],
        },
        Case {
            name: "changing a shared field conflicts",
            steps: vec![ssa("a", replicas(3)), ssa("b", replicas(3)), ssa("a", replicas(4))],
            checks: vec![Conflicts(&[("b", ".spec.replicas")])],
        },
        Case {
            name: "a conflict with an applier is worded as Kubernetes words it",
            steps: vec![ssa("a", replicas(3)), ssa("b", replicas(5))],
            checks: vec![Message("Apply failed with 1 conflict: conflict with \"a\": .spec.replicas")],
        },
        Case {
            name: "force takes the field and drops the emptied manager",
            steps: vec![ssa("a", replicas(3)), ssa_force("b", replicas(5))],
            checks: vec![
                At("/spec/replicas", json!(5)),
                Owns("b", ".spec.replicas"),
                Managers(&["b/Apply"]),
            ],
        },
        Case {
            name: "force takes only the conflicting fields",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 3, "paused": false}))),
                ssa_force("b", replicas(5)),
            ],
            checks: vec![Owns("a", ".spec.paused"), NotOwns("a", ".spec.replicas"), Owns("b", ".spec.replicas")],
        },
        Case {
            name: "force with the same value shares instead of taking",
            steps: vec![ssa("a", replicas(3)), ssa_force("b", replicas(3))],
            checks: vec![Owns("a", ".spec.replicas"), Owns("b", ".spec.replicas")],
        },
        Case {
            name: "a field the applier stops applying is removed",
            steps: vec![ssa("a", deploy(json!({"replicas": 3, "paused": true}))), ssa("a", replicas(3))],
            checks: vec![Absent("/spec/paused"), NotOwns("a", ".spec.paused"), At("/spec/replicas", json!(3))],
        },
        Case {
            name: "a dropped field another applier owns stays",
            steps: vec![
                ssa("a", with_labels(json!({"x": "1", "y": "2"}))),
                ssa("b", with_labels(json!({"y": "2"}))),
                ssa("a", with_labels(json!({"x": "1"}))),
            ],
            checks: vec![
                At("/metadata/labels", json!({"x": "1", "y": "2"})),
                NotOwns("a", ".metadata.labels.y"),
                Owns("b", ".metadata.labels.y"),
            ],
        },
        Case {
            name: "a field dropped by both sharing appliers is removed",
            steps: vec![
                ssa("a", with_labels(json!({"x": "1", "y": "2"}))),
                ssa("b", with_labels(json!({"y": "2"}))),
                ssa("a", with_labels(json!({"x": "1"}))),
                ssa("b", with_labels(json!({}))),
            ],
            checks: vec![At("/metadata/labels", json!({"x": "1"}))],
        },
        Case {
            name: "an emptied configuration releases and removes everything the applier owned",
            steps: vec![
                ssa("a", deploy(nginx_spec())),
                ssa("a", json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}})),
            ],
            checks: vec![Managers(&[]), Absent("/spec"), Absent("/metadata/managedFields")],
        },
        Case {
            name: "a controller update takes replicas; the applier then conflicts",
            steps: vec![
                ssa("kubectl", deploy(nginx_spec())),
                update("kube-controller-manager", |d| d["spec"]["replicas"] = json!(7)),
                ssa("kubectl", deploy(json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}))),
            ],
            checks: vec![Message(
                "Apply failed with 1 conflict: conflict with \"kube-controller-manager\" using apps/v1: .spec.replicas",
            )],
        },
        Case {
            name: "an autoscaler owning replicas keeps them when the applier omits replicas",
            steps: vec![
                ssa("kubectl", deploy(nginx_spec())),
                update("hpa", |d| d["spec"]["replicas"] = json!(9)),
                ssa("kubectl", deploy(json!({"selector": {"matchLabels": {"app": "web"}}}))),
            ],
            checks: vec![
                At("/spec/replicas", json!(9)),
                Owns("hpa", ".spec.replicas"),
                NotOwns("kubectl", ".spec.replicas"),
                Absent("/spec/template"),
            ],
        },
        Case {
            name: "an applier matching the controller's value shares it without conflict",
            steps: vec![
                ssa("kubectl", replicas(3)),
                update("ctrl", |d| d["spec"]["replicas"] = json!(5)),
                ssa("kubectl", replicas(5)),
            ],
            checks: vec![Owns("ctrl", ".spec.replicas"), Owns("kubectl", ".spec.replicas")],
        },
        Case {
            name: "the same name as Update and Apply manager are two managers",
            steps: vec![
                Step::Create { manager: "kubectl", object: replicas(2) },
                ssa("kubectl", replicas(3)),
            ],
            checks: vec![Conflicts(&[("kubectl", ".spec.replicas")])],
        },
        Case {
            name: "several conflicts are listed by manager, then path",
            steps: vec![
                ssa("a", deploy(json!({"replicas": 1, "paused": true}))),
                ssa("b", deploy(json!({"minReadySeconds": 5}))),
                ssa("c", deploy(json!({"replicas": 2, "paused": false, "minReadySeconds": 6}))),
            ],
            checks: vec![
                Conflicts(&[("a", ".spec.paused"), ("a", ".spec.replicas"), ("b", ".spec.minReadySeconds")]),
                Message("Apply failed with 3 conflicts: conflicts with \"a\":\n- .spec.paused\n- .spec.replicas\nconflicts with \"b\":\n- .spec.minReadySeconds"),
            ],
        },
        Case {
            name: "status in a main-resource apply is ignored",
            steps: vec![
                ssa("a", json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                                "spec": {"replicas": 1}, "status": {"replicas": 1}})),
            ],
            checks: vec![Absent("/status"), NotOwns("a", ".status.replicas"), Owns("a", ".spec.replicas")],
        },
        Case {
            name: "an apply to status owns only status, under its own subresource entry",
            steps: vec![
                ssa("a", replicas(2)),
                Step::Apply {
                    manager: "ctrl",
                    config: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                                   "spec": {"replicas": 9}, "status": {"readyReplicas": 2}}),
                    force: false,
                    scope: Scope::status(),
                },
            ],
            checks: vec![
                At("/spec/replicas", json!(2)),
                At("/status/readyReplicas", json!(2)),
                Managers(&["a/Apply", "ctrl/Apply/status"]),
                Fields("ctrl", "Apply", json!({"f:status": {"f:readyReplicas": {}}})),
            ],
        },
        Case {
            name: "a status updater conflicts by subresource",
            steps: vec![
                ssa("a", replicas(2)),
                Step::Update { manager: "ctrl", subresource: Some("status"), edit: |d| d["status"] = json!({"replicas": 2}) },
                Step::Apply {
                    manager: "other",
                    config: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "status": {"replicas": 3}}),
                    force: false,
                    scope: Scope::status(),
                },
            ],
            checks: vec![Message(
                "Apply failed with 1 conflict: conflict with \"ctrl\" with subresource \"status\" using apps/v1: .status.replicas",
            )],
        },
        Case {
            name: "an untracked object belongs to before-first-apply",
            steps: vec![Step::Store(replicas(3)), ssa("kubectl", replicas(4))],
            checks: vec![Message(
                "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apps/v1: .spec.replicas",
            )],
        },
        Case {
            name: "before-first-apply keeps what the first applier does not touch",
            steps: vec![Step::Store(deploy(json!({"replicas": 3, "paused": true}))), ssa("kubectl", replicas(3))],
            checks: vec![
                Managers(&["kubectl/Apply", "before-first-apply/Update"]),
                Owns("before-first-apply", ".spec.paused"),
                Owns("kubectl", ".spec.replicas"),
            ],
        },
        Case {
            name: "managedFields in an apply configuration are refused",
            steps: vec![ssa("a", json!({"apiVersion": "apps/v1", "kind": "Deployment",
                                         "metadata": {"name": "web", "managedFields": []}}))],
            checks: vec![Message("metadata.managedFields must be nil")],
        },
        Case {
            name: "a configuration without kind is refused",
            steps: vec![ssa("a", json!({"apiVersion": "apps/v1", "metadata": {"name": "web"}}))],
            checks: vec![ErrorContains("must set kind")],
        },
        Case {
            name: "a configuration of another kind is refused",
            steps: vec![ssa("a", replicas(1)), ssa("a", json!({"apiVersion": "apps/v1", "kind": "Deployment2"}))],
            checks: vec![ErrorContains("is a Deployment2, the object a Deployment")],
        },
        Case {
            name: "duplicate list-map keys are refused",
            steps: vec![ssa("a", containers(json!([{"name": "x"}, {"name": "x"}])))],
            checks: vec![Message("duplicate entries for key [name=\"x\"]")],
        },
        Case {
            name: "a list-map item without its key is refused",
            steps: vec![ssa("a", containers(json!([{"image": "x"}])))],
            checks: vec![ErrorContains("omits key field \"name\"")],
        },
        Case {
            name: "null unsets a field and the applier owns it",
            steps: vec![ssa("a", replicas(3)), ssa_force("b", deploy(json!({"replicas": null})))],
            checks: vec![Absent("/spec/replicas"), Owns("b", ".spec.replicas"), Managers(&["b/Apply"])],
        },
        Case {
            name: "owning one more field with an unchanged value moves the time",
            steps: vec![
                ssa("a", replicas(3)),
                ssa("b", deploy(json!({"replicas": 3, "paused": true}))),
                ssa("a", deploy(json!({"replicas": 3, "paused": true}))),
                ssa("a", deploy(json!({"replicas": 3, "paused": true}))),
            ],
            checks: vec![Time("a", "Apply", 3), Time("b", "Apply", 2), Unchanged],
        },
        Case {
            name: "entries are written Apply first, then oldest Update first",
            steps: vec![
                Step::Create { manager: "creator", object: deploy(json!({"paused": false})) },
                update("ctrl", |d| d["spec"]["minReadySeconds"] = json!(3)),
                ssa("z-applier", replicas(1)),
                ssa("a-applier", deploy(json!({"template": {"spec": {"serviceAccountName": "sa"}}}))),
            ],
            checks: vec![Managers(&["z-applier/Apply", "a-applier/Apply", "creator/Update", "ctrl/Update"])],
        },
        Case {
            name: "re-applying after a controller took a field changes nothing",
            steps: vec![
                ssa("kubectl", deploy(nginx_spec())),
                update("hpa", |d| d["spec"]["replicas"] = json!(9)),
                ssa("kubectl", deploy(json!({"selector": {"matchLabels": {"app": "web"}}}))),
                ssa("kubectl", deploy(json!({"selector": {"matchLabels": {"app": "web"}}}))),
            ],
            checks: vec![Unchanged, At("/spec/replicas", json!(9)), Time("kubectl", "Apply", 3)],
        },
        Case {
            name: "an autoscaler's replicas survive an applier that never set them",
            steps: vec![
                ssa("kubectl", deploy(json!({"paused": false}))),
                update("hpa", |d| d["spec"]["replicas"] = json!(4)),
                ssa("kubectl", deploy(json!({"paused": true}))),
            ],
            checks: vec![
                At("/spec", json!({"paused": true, "replicas": 4})),
                Managers(&["kubectl/Apply", "hpa/Update"]),
            ],
        },
        Case {
            name: "a main-resource apply keeps the live status",
            steps: vec![
                ssa("a", replicas(3)),
                Step::Update {
                    manager: "ctrl",
                    subresource: Some("status"),
                    edit: |d| d["status"] = json!({"replicas": 3}),
                },
                ssa("a", replicas(4)),
            ],
            checks: vec![At("/status", json!({"replicas": 3})), Owns("ctrl", ".status.replicas")],
        },
        Case {
            name: "an apply to the status of a missing object is refused",
            steps: vec![Step::Apply {
                manager: "a",
                config: json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": {}}),
                force: false,
                scope: Scope::status(),
            }],
            checks: vec![Message(
                "cannot apply to the status subresource of an object that does not exist",
            )],
        },
    ]
}

#[test]
fn apply_ownership_scenarios() {
    let all = cases();
    assert!(all.len() >= 30, "{} cases", all.len());
    for case in all {
        check(case);
    }
}
