use flotilla_apis::config::v1alpha1::{ResourceInterpreter, ResourceInterpreterSpec};
use serde_json::{json, Value};

use super::*;

fn example(file: &str) -> Interpreter {
    let path = format!(
        "{}/../../examples/interpreters/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let ri: ResourceInterpreter =
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    Interpreter::compile(&ri.spec).unwrap_or_else(|e| panic!("{path}: {e:?}"))
}

fn spec(yaml: &str) -> ResourceInterpreterSpec {
    serde_yaml::from_str(yaml).unwrap()
}

fn rollout(replicas: i64) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "shop", "generation": 2},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {
                "containers": [{"name": "web", "image": "nginx",
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}],
                "volumes": [
                    {"name": "conf", "configMap": {"name": "web-conf"}},
                    {"name": "tls", "secret": {"secretName": "web-tls"}},
                    {"name": "scratch", "emptyDir": {}}
                ]
            }}
        }
    })
}

#[test]
fn the_argo_rollout_interpreter_reads_replicas_health_status_and_dependencies() {
    let i = example("argo-rollout.yaml");
    assert_eq!(i.target().kind, "Rollout");
    let r = i.replicas(&rollout(6)).unwrap().unwrap();
    assert_eq!(r.count, 6);
    assert_eq!(r.requests["cpu"], "250m");
    assert_eq!(r.requests["memory"], "64Mi");

    let mut copy = rollout(6);
    i.revise_replicas(&mut copy, 2).unwrap().unwrap();
    assert_eq!(copy["spec"]["replicas"], 2);

    let mut member = rollout(2);
    let h = i.health(&member).unwrap().unwrap();
    assert!(!h.healthy);
    assert_eq!(h.reason, "the controller has not reported yet");
    member["status"] =
        json!({"phase": "Progressing", "message": "more replicas need to be updated"});
    let h = i.health(&member).unwrap().unwrap();
    assert_eq!(
        (h.healthy, h.reason.as_str()),
        (false, "Progressing: more replicas need to be updated")
    );
    member["status"] = json!({"phase": "Healthy", "replicas": 2, "readyReplicas": 2,
        "conditions": [{"type": "Available", "status": "True"}]});
    assert!(i.health(&member).unwrap().unwrap().healthy);

    let deps = i.dependencies(&rollout(1)).unwrap().unwrap();
    let names: Vec<(&str, &str, &str)> = deps
        .iter()
        .map(|d| (d.kind.as_str(), d.namespace.as_str(), d.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("ConfigMap", "shop", "web-conf"),
            ("Secret", "shop", "web-tls")
        ]
    );
}

#[test]
fn the_cloneset_interpreter_sums_status_and_judges_health_by_generation() {
    let i = example("kruise-cloneset.yaml");
    let mut a = json!({"metadata": {"generation": 3}, "spec": {"replicas": 2},
        "status": {"observedGeneration": 3, "replicas": 2, "readyReplicas": 2,
                   "updatedReadyReplicas": 2,
                   "conditions": [{"type": "FailedScale", "status": "False"}]}});
    let b = json!({"metadata": {"generation": 3}, "spec": {"replicas": 4},
        "status": {"observedGeneration": 2, "replicas": 4, "readyReplicas": 1,
                   "updatedReadyReplicas": 0}});
    assert!(i.health(&a).unwrap().unwrap().healthy);
    let h = i.health(&b).unwrap().unwrap();
    assert_eq!(h.reason, "the controller has not seen the latest spec yet");
    a["status"]["updatedReadyReplicas"] = json!(1);
    assert_eq!(
        i.health(&a).unwrap().unwrap().reason,
        "1 of 2 replicas updated and ready"
    );
    let (ca, cb) = (i.collect(&a).unwrap(), i.collect(&b).unwrap());
    let status = i.aggregate(&[("m-1", &ca), ("m-2", &cb)]).unwrap();
    assert_eq!(status["replicas"], 6);
    assert_eq!(status["readyReplicas"], 3);
    assert_eq!(status["updatedReadyReplicas"], 1);
    assert!(
        status.get("availableReplicas").is_none(),
        "no member reports it: {status}"
    );
    assert_eq!(
        status["conditions"],
        json!([{"type": "FailedScale", "status": "False", "message": "m-1: False"}])
    );
}

#[test]
fn the_cronjob_interpreter_has_no_replicas_and_merges_schedules() {
    let i = example("batch-cronjob.yaml");
    let job = |schedule: &str, success: Option<&str>, active: Value| {
        let mut status = json!({"lastScheduleTime": schedule, "active": active});
        if let Some(s) = success {
            status["lastSuccessfulTime"] = json!(s);
        }
        json!({"metadata": {"namespace": "ops"}, "spec": {"schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [],
                "volumes": [{"name": "s", "configMap": {"name": "script"}}]}}}}},
            "status": status})
    };
    assert!(i.replicas(&job("t", None, json!([]))).is_none());
    assert!(i.revise_replicas(&mut json!({}), 3).is_none());
    let done = job(
        "2026-12-01T10:00:00Z",
        Some("2026-12-01T10:00:07Z"),
        json!([]),
    );
    let failed = job(
        "2026-12-01T10:05:00Z",
        Some("2026-12-01T10:00:07Z"),
        json!([]),
    );
    let running = job(
        "2026-12-01T10:05:00Z",
        None,
        json!([{"kind": "Job", "name": "backup-1"}]),
    );
    assert!(i.health(&done).unwrap().unwrap().healthy);
    assert!(i.health(&running).unwrap().unwrap().healthy);
    let h = i.health(&failed).unwrap().unwrap();
    assert_eq!(
        (h.healthy, h.reason.as_str()),
        (
            false,
            "the run scheduled at 2026-12-01T10:05:00Z has not succeeded"
        )
    );
    assert!(i.health(&json!({"spec": {}})).unwrap().unwrap().healthy);
    let collected: Vec<Collected> = [&done, &failed, &running]
        .iter()
        .map(|o| i.collect(o).unwrap())
        .collect();
    let status = i
        .aggregate(&[
            ("a", &collected[0]),
            ("b", &collected[1]),
            ("c", &collected[2]),
        ])
        .unwrap();
    assert_eq!(status["lastScheduleTime"], "2026-12-01T10:05:00Z");
    assert_eq!(status["lastSuccessfulTime"], "2026-12-01T10:00:07Z");
    assert_eq!(
        status["active"],
        json!([{"kind": "Job", "name": "backup-1"}])
    );
    let deps = i.dependencies(&done).unwrap().unwrap();
    assert_eq!(deps.len(), 1);
    assert_eq!(
        (deps[0].namespace.as_str(), deps[0].name.as_str()),
        ("ops", "script")
    );
}

#[test]
fn bad_rules_are_refused_with_their_field_and_the_cel_error() {
    let errors = Interpreter::compile(&spec(
        r#"
target: {apiVersion: "", kind: Thing}
replicas: {count: "self.spec.replicas +"}
health: {healthy: "self.status.ok", reason: "'a' +* 'b'"}
reviseReplicas: {path: "spec.template[0].replicas"}
status: {fields: [{name: "", aggregate: Sum}, {name: ok, expression: "((", aggregate: Max}]}
retain: {paths: ["spec..x"]}
"#,
    ))
    .err()
    .expect("refused");
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.target.apiVersion",
            "spec.replicas.count",
            "spec.reviseReplicas.path",
            "spec.health.reason",
            "spec.status.fields[0].name",
            "spec.status.fields[1].expression",
            "spec.retain.paths[0]",
        ]
    );
    assert!(
        errors[1].message.contains("compilation failed"),
        "{:?}",
        errors[1]
    );
}

#[test]
fn rules_failing_at_run_time_are_errors_naming_the_rule() {
    let i = Interpreter::compile(&spec(
        r#"
target: {apiVersion: v1, kind: Thing}
replicas: {count: "self.spec.size", requests: "self.spec.size"}
health: {healthy: "self.spec.size"}
status: {fields: [{name: n, aggregate: Sum}]}
dependencies: {expression: "[{'kind': 'ConfigMap'}]"}
"#,
    ))
    .unwrap();
    let obj = json!({"spec": {"size": "big"}});
    let e = i.replicas(&obj).unwrap().unwrap_err();
    assert_eq!(e.rule, "replicas.count");
    assert!(e.message.contains("expected a replica count"), "{e}");
    let e = i.replicas(&json!({"spec": {}})).unwrap().unwrap_err();
    assert_eq!(e.rule, "replicas.count");
    let e = i
        .replicas(&json!({"spec": {"size": 3}}))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.rule, "replicas.requests");
    assert_eq!(i.health(&obj).unwrap().unwrap_err().rule, "health.healthy");
    let e = i.dependencies(&obj).unwrap().unwrap_err();
    assert!(e.message.contains("apiVersion, kind and name"), "{e}");
    let (a, b) = (
        i.collect(&json!({"status": {"n": 1}})).unwrap(),
        i.collect(&json!({"status": {"n": "x"}})).unwrap(),
    );
    let e = i.aggregate(&[("m-1", &a), ("m-2", &b)]).unwrap_err();
    assert_eq!(e.message, "n: expects numbers, but cluster m-2 gave \"x\"");
    let explained = i.explain(&obj);
    assert_eq!(explained[0].0, "replicas");
    assert!(explained[0].1.is_err());
}

#[test]
fn retained_fields_keep_the_members_value() {
    let i = Interpreter::compile(&spec(
        "target: {apiVersion: v1, kind: Thing}\nretain: {paths: [spec.paused, spec.deep.x]}",
    ))
    .unwrap();
    let mut desired = json!({"spec": {"paused": false, "image": "b"}});
    i.retain(
        &mut desired,
        &json!({"spec": {"paused": true, "image": "a", "deep": {"x": 1}}}),
    );
    assert_eq!(
        desired,
        json!({"spec": {"paused": true, "image": "b", "deep": {"x": 1}}})
    );
    let mut desired = json!({"spec": {"paused": false}});
    i.retain(&mut desired, &json!({"spec": {}}));
    assert_eq!(desired, json!({"spec": {"paused": false}}));
    // What the hub writes leaves them out, so the member's own values stay.
    let mut desired = json!({"spec": {"paused": false, "image": "b", "deep": {"x": 2, "y": 3}}});
    i.release(&mut desired);
    assert_eq!(desired, json!({"spec": {"image": "b", "deep": {"y": 3}}}));
    i.release(&mut desired);
    let mut odd = json!({"spec": "not an object"});
    i.release(&mut odd);
    assert_eq!(odd, json!({"spec": "not an object"}));
}

#[test]
fn numbers_keep_their_type_when_combined() {
    let i = Interpreter::compile(&spec(
        "target: {apiVersion: v1, kind: T}\nstatus: {fields: [{name: a, aggregate: Max}, {name: b, aggregate: Min}, {name: c.d, aggregate: Sum}, {name: u, aggregate: Union}]}",
    ))
    .unwrap();
    let m1 = i
        .collect(&json!({"status": {"a": 1, "b": 2.5, "c": {"d": 1}, "u": ["x", "y"]}}))
        .unwrap();
    let m2 = i
        .collect(&json!({"status": {"a": 3, "b": 1, "c": {"d": 2}, "u": "z"}}))
        .unwrap();
    let s = i.aggregate(&[("m1", &m1), ("m2", &m2)]).unwrap();
    assert_eq!(
        s,
        json!({"a": 3, "b": 1.0, "c": {"d": 3}, "u": ["x", "y", "z"]})
    );
}

#[test]
fn the_oldest_interpreter_of_a_kind_is_chosen() {
    let ri = |name: &str, kind: &str, created: &str| {
        let mut ri: ResourceInterpreter = serde_json::from_value(json!({
            "apiVersion": "config.flotilla.io/v1alpha1", "kind": "ResourceInterpreter",
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {"target": {"apiVersion": "x.io/v1", "kind": kind}}}))
        .unwrap();
        ri.metadata.name = Some(name.to_owned());
        ri
    };
    let all = [
        ri("b", "Thing", "2026-01-02T00:00:00Z"),
        ri("c", "Thing", "2026-01-01T00:00:00Z"),
        ri("a", "Thing", "2026-01-01T00:00:00Z"),
        ri("z", "Other", "2025-01-01T00:00:00Z"),
    ];
    let chosen = choose(&all, "x.io/v1", "Thing").unwrap();
    assert_eq!(chosen.metadata.name.as_deref(), Some("a"));
    assert!(choose(&all, "x.io/v2", "Thing").is_none());
}
