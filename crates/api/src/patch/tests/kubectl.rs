//! The patches kubectl really sends, each applied to the same live Deployment (or its Scale).
//! Patch bodies are written the way kubectl writes them (keys sorted, directives included).

use serde_json::{json, Value};

use super::{case, ok, run, unprocessable, Case, Dialect, Want};

fn live() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "default", "resourceVersion": "41",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"deployment.kubernetes.io/revision": "3",
                "kubectl.kubernetes.io/last-applied-configuration": "{old}"},
            "finalizers": ["example.com/protect"]
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"},
                            {"name": "B", "value": "2"}],
                         "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                        {"name": "log", "image": "fluentd:1"}
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                    "tolerations": [
                        {"key": "dedicated", "operator": "Equal", "value": "web",
                         "effect": "NoSchedule"}
                    ]
                }
            }
        },
        "status": {"replicas": 2}
    })
}

/// The live Deployment after `edit`.
fn edited(edit: impl FnOnce(&mut Value)) -> Value {
    let mut doc = live();
    edit(&mut doc);
    doc
}

fn remove(doc: &mut Value, parent: &str, name: &str) {
    if let Some(Value::Object(members)) = doc.pointer_mut(parent) {
        members.shift_remove(name);
    }
}

fn smp(name: &'static str, patch: Value, want: Want) -> Case {
    case(name, Dialect::Smp("Deployment"), live(), patch, want)
}

#[test]
fn kubectl_strategic_merge_patches() {
    run(vec![
        smp(
            "kubectl apply (client-side): three-way patch from last-applied",
            json!({
                "metadata": {"annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{new}"
                }},
                "spec": {"template": {"spec": {
                    "$setElementOrder/containers": [{"name": "web"}, {"name": "log"},
                        {"name": "proxy"}],
                    "containers": [
                        {"$setElementOrder/env": [{"name": "A"}, {"name": "C"}],
                         "env": [{"name": "C", "value": "3"}, {"$patch": "delete", "name": "B"}],
                         "image": "nginx:1.27", "name": "web"},
                        {"image": "envoy:1.30", "name": "proxy"}
                    ]
                }}}
            }),
            ok(edited(|d| {
                d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
                    json!("{new}");
                let containers = &mut d["spec"]["template"]["spec"]["containers"];
                containers[0]["image"] = json!("nginx:1.27");
                containers[0]["env"] =
                    json!([{"name": "A", "value": "1"}, {"name": "C", "value": "3"}]);
                if let Some(list) = containers.as_array_mut() {
                    list.push(json!({"image": "envoy:1.30", "name": "proxy"}));
                }
            })),
        ),
        smp(
            "kubectl apply: a field dropped from the manifest is nulled",
            json!({
                "metadata": {"annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{new}"
                }},
                "spec": {"template": {"spec": {"tolerations": null}}}
            }),
            ok(edited(|d| {
                d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
                    json!("{new}");
                remove(d, "/spec/template/spec", "tolerations");
            })),
        ),
        smp(
            "kubectl apply: strategy switched to Recreate (retainKeys)",
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": null,
                "type": "Recreate"}}}),
            ok(edited(|d| {
                d["spec"]["strategy"] = json!({"type": "Recreate"})
            })),
        ),
        smp(
            "kubectl apply: volume source switched (retainKeys in a merged list)",
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/volumes": [{"name": "data"}],
                "volumes": [{"$retainKeys": ["configMap", "name"],
                    "configMap": {"name": "web-config"}, "emptyDir": null, "name": "data"}]
            }}}}),
            ok(edited(
                |d| {
                    d["spec"]["template"]["spec"]["volumes"] =
                        json!([{"name": "data", "configMap": {"name": "web-config"}}])
                },
            )),
        ),
        smp(
            "kubectl apply: finalizer swapped",
            json!({"metadata": {
                "$deleteFromPrimitiveList/finalizers": ["example.com/protect"],
                "$setElementOrder/finalizers": ["example.com/other"],
                "finalizers": ["example.com/other"]
            }}),
            ok(edited(|d| {
                d["metadata"]["finalizers"] = json!(["example.com/other"])
            })),
        ),
        smp(
            "kubectl edit: two-way patch of the edits",
            json!({"metadata": {"labels": {"team": "core", "tier": null}},
                   "spec": {"replicas": 3, "template": {"spec": {
                       "$setElementOrder/containers": [{"name": "web"}, {"name": "log"}],
                       "containers": [{"image": "fluentd:2", "name": "log"}]}}}}),
            ok(edited(|d| {
                remove(d, "/metadata/labels", "tier");
                d["metadata"]["labels"]["team"] = json!("core");
                d["spec"]["replicas"] = json!(3);
                d["spec"]["template"]["spec"]["containers"][1]["image"] = json!("fluentd:2");
            })),
        ),
        smp(
            "kubectl set image: containers by name",
            json!({"spec": {"template": {"spec": {
                "containers": [{"image": "nginx:1.27", "name": "web"}]
            }}}}),
            ok(edited(|d| {
                d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.27")
            })),
        ),
        smp(
            "kubectl rollout restart: a template annotation",
            json!({"spec": {"template": {"metadata": {"annotations": {
                "kubectl.kubernetes.io/restartedAt": "2025-06-01T12:00:00Z"
            }}}}}),
            ok(edited(|d| {
                d["spec"]["template"]["metadata"]["annotations"] =
                    json!({"kubectl.kubernetes.io/restartedAt": "2025-06-01T12:00:00Z"});
            })),
        ),
        smp(
            "kubectl rollout pause",
            json!({"spec": {"paused": true}}),
            ok(edited(|d| d["spec"]["paused"] = json!(true))),
        ),
        // kubectl's "Update API Objects in Place" task shows the added container listed first.
        smp(
            "kubectl patch: a container added without $setElementOrder comes first",
            json!({"spec": {"template": {"spec": {
                "containers": [{"name": "redis", "image": "redis"}]
            }}}}),
            ok(edited(|d| {
                if let Some(list) = d["spec"]["template"]["spec"]["containers"].as_array_mut() {
                    list.insert(0, json!({"name": "redis", "image": "redis"}));
                }
            })),
        ),
    ]);
}

#[test]
fn kubectl_merge_and_json_patches() {
    let scale = json!({
        "apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "41"},
        "spec": {"replicas": 2}, "status": {"replicas": 2, "selector": "app=web"}
    });
    let mut scaled = scale.clone();
    scaled["spec"]["replicas"] = json!(5);
    run(vec![
        case(
            "kubectl label: merge patch adding a label",
            Dialect::Merge,
            live(),
            json!({"metadata": {"labels": {"env": "prod"}}}),
            ok(edited(|d| d["metadata"]["labels"]["env"] = json!("prod"))),
        ),
        case(
            "kubectl label tier-: merge patch removing a label",
            Dialect::Merge,
            live(),
            json!({"metadata": {"labels": {"tier": null}}}),
            ok(edited(|d| remove(d, "/metadata/labels", "tier"))),
        ),
        case(
            "kubectl annotate --overwrite --resource-version",
            Dialect::Merge,
            live(),
            json!({"metadata": {"annotations": {"note": "hi"}, "resourceVersion": "41"}}),
            ok(edited(|d| {
                d["metadata"]["annotations"]["note"] = json!("hi")
            })),
        ),
        case(
            "kubectl scale: merge patch on the scale subresource",
            Dialect::Merge,
            scale,
            json!({"spec": {"replicas": 5}}),
            ok(scaled),
        ),
        case(
            "kubectl patch --type json: append a toleration",
            Dialect::Json,
            live(),
            json!([{"op": "add", "path": "/spec/template/spec/tolerations/-",
                "value": {"key": "gpu", "operator": "Exists"}}]),
            ok(edited(|d| {
                if let Some(list) = d["spec"]["template"]["spec"]["tolerations"].as_array_mut() {
                    list.push(json!({"key": "gpu", "operator": "Exists"}));
                }
            })),
        ),
        case(
            "kubectl patch --type json: a stale resourceVersion test fails",
            Dialect::Json,
            live(),
            json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "40"},
                   {"op": "replace", "path": "/spec/replicas", "value": 9}]),
            unprocessable("/metadata/resourceVersion is \"41\", not \"40\""),
        ),
    ]);
}
