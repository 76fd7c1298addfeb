//! The assembled Work status: conditions, messages, feedback, and kept transition times.

use flotilla_apis::work::v1alpha1::{
    FeedbackRule, JsonPathRule, ResourceIdentifier, ResourceRef, WorkStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use serde_json::{json, Value};

use super::{same_status, work_status};
use crate::ManifestResult;

fn at(second: i64) -> Time {
    Time(Timestamp::from_second(second).expect("a valid test time"))
}

fn id(ordinal: i32, kind: &str, namespace: Option<&str>, name: &str) -> ResourceIdentifier {
    let (group, resource) = match kind {
        "Deployment" => ("apps", "deployments"),
        "Job" => ("batch", "jobs"),
        "Namespace" => ("", "namespaces"),
        "Widget" => ("example.com", ""),
        _ => ("", "services"),
    };
    ResourceIdentifier {
        ordinal,
        group: group.to_owned(),
        version: "v1".to_owned(),
        kind: kind.to_owned(),
        resource: resource.to_owned(),
        namespace: namespace.map(str::to_owned),
        name: name.to_owned(),
    }
}

fn applied(identifier: ResourceIdentifier, object: Value) -> ManifestResult {
    ManifestResult {
        identifier,
        applied: true,
        reason: "Applied".to_owned(),
        message: "server-side applied".to_owned(),
        resource_version: Some("812".to_owned()),
        generation: object["metadata"]["generation"].as_i64(),
        object: Some(object),
    }
}

fn failed(identifier: ResourceIdentifier, reason: &str, message: &str) -> ManifestResult {
    ManifestResult {
        identifier,
        applied: false,
        reason: reason.to_owned(),
        message: message.to_owned(),
        resource_version: None,
        generation: None,
        object: None,
    }
}

fn web(updated: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "demo", "generation": 2},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": updated,
                   "readyReplicas": updated, "availableReplicas": updated},
    })
}

fn service() -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "demo"},
           "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.12"}})
}

/// `(type, status, reason)` of each condition, and whether every one is at generation 7.
fn summary(conditions: &[Condition]) -> Vec<(String, String, String)> {
    for c in conditions {
        assert_eq!(c.observed_generation, Some(7), "{c:?}");
    }
    conditions
        .iter()
        .map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone()))
        .collect()
}

fn triples(expected: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(t, s, r)| ((*t).to_owned(), (*s).to_owned(), (*r).to_owned()))
        .collect()
}

fn message<'a>(status: &'a WorkStatus, type_: &str) -> &'a str {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map_or("", |c| c.message.as_str())
}

/// (what, results, Applied (status, reason, message), Available (status, reason, message))
type WorkCase = (
    &'static str,
    Vec<ManifestResult>,
    [&'static str; 3],
    [&'static str; 3],
);

#[test]
fn work_conditions() {
    let deploy = id(0, "Deployment", Some("demo"), "web");
    let svc = id(1, "Service", Some("demo"), "web");
    let job = id(2, "Job", Some("demo"), "migrate");
    let widget = id(3, "Widget", None, "w");
    let ns = id(4, "Namespace", None, "demo");
    let cases: Vec<WorkCase> = vec![
        ("empty Work", vec![], ["True", "Applied", "no manifests"], ["True", "Available", "no manifests"]),
        ("all applied and rolled out",
            vec![applied(deploy.clone(), web(3)), applied(svc.clone(), service())],
            ["True", "Applied", "2 of 2 manifests applied"], ["True", "Available", "2 of 2 manifests available"]),
        ("applied, rollout in progress",
            vec![applied(deploy.clone(), web(1)), applied(svc.clone(), service())],
            ["True", "Applied", "2 of 2 manifests applied"],
            ["False", "ResourceNotAvailable", "1 of 2 manifests not available: Deployment demo/web: rollout in progress: 1 of 3 updated"]),
        ("a conflict surfaces as Conflict among other failures",
            vec![applied(deploy.clone(), web(3)), failed(svc.clone(), "ApplyFailed", "admission webhook denied"),
                 failed(job.clone(), "Conflict", "Job demo/migrate exists in the member and is not flotilla's")],
            ["False", "Conflict", "2 of 3 manifests not applied: Service demo/web: admission webhook denied; Job demo/migrate: Job demo/migrate exists"],
            ["False", "ResourceNotAvailable", "2 of 3 manifests not available: Service demo/web: not applied; Job demo/migrate: not applied"]),
        ("a shared reason is kept",
            vec![failed(widget.clone(), "KindNotServed", "example.com/v1 Widget is not served"), applied(ns.clone(), json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}, "status": {"phase": "Active"}}))],
            ["False", "KindNotServed", "1 of 2 manifests not applied: Widget w: example.com/v1 Widget is not served"],
            ["False", "ResourceNotAvailable", "Widget w: not applied"]),
        ("different reasons without a conflict",
            vec![failed(widget.clone(), "KindNotServed", "not served"), failed(svc.clone(), "ApplyFailed", "timeout")],
            ["False", "ApplyFailed", "2 of 2 manifests not applied"], ["False", "ResourceNotAvailable", "2 of 2"]),
        ("read-only, missing in the member",
            vec![failed(svc.clone(), "ResourceNotFound", "Service demo/web does not exist in the member")],
            ["False", "ResourceNotFound", "1 of 1 manifest not applied"],
            ["False", "ResourceNotAvailable", "Service demo/web: Service demo/web does not exist"]),
        ("only three are named",
            (0..5).map(|i| failed(id(i, "Service", Some("demo"), &format!("s{i}")), "ApplyFailed", "denied")).collect(),
            ["False", "ApplyFailed", "5 of 5 manifests not applied: Service demo/s0: denied; Service demo/s1: denied; Service demo/s2: denied; and 2 more"],
            ["False", "ResourceNotAvailable", "; and 2 more"]),
    ];
    for (what, results, [a_status, a_reason, a_message], [v_status, v_reason, v_message]) in cases {
        let status = work_status(None, &results, &[], Some(7), at(1000));
        assert_eq!(
            summary(&status.conditions),
            triples(&[
                ("Applied", a_status, a_reason),
                ("Available", v_status, v_reason)
            ]),
            "{what}"
        );
        assert!(
            message(&status, "Applied").contains(a_message),
            "{what}: Applied message {:?}",
            message(&status, "Applied")
        );
        assert!(
            message(&status, "Available").contains(v_message),
            "{what}: Available message {:?}",
            message(&status, "Available")
        );
        assert_eq!(status.manifest_statuses.len(), results.len(), "{what}");
    }
}

#[test]
fn manifest_statuses() {
    let rules = [FeedbackRule {
        resource: ResourceRef {
            group: "apps".to_owned(),
            resource: "deployments".to_owned(),
            namespace: Some("demo".to_owned()),
            name: "web".to_owned(),
        },
        json_paths: vec![JsonPathRule {
            name: "image".to_owned(),
            path: ".spec.template.spec.containers[0].image".to_owned(),
        }],
    }];
    let mut deployment = web(1);
    deployment["spec"]["template"] =
        json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}});
    let failed_job = json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "namespace": "demo", "generation": 1},
        "status": {"failed": 7, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                                 "message": "Job has reached the specified backoff limit"}]},
    });
    let results = vec![
        applied(id(0, "Deployment", Some("demo"), "web"), deployment),
        applied(id(1, "Job", Some("demo"), "migrate"), failed_job),
        failed(
            id(2, "Service", Some("demo"), "web"),
            "Conflict",
            "not flotilla's",
        ),
        failed(
            id(3, "Service", Some("demo"), "gone"),
            "ResourceNotFound",
            "does not exist",
        ),
    ];
    let status = work_status(None, &results, &rules, Some(7), at(1000));
    let expected = [
        triples(&[
            ("Applied", "True", "Applied"),
            ("Available", "False", "ResourceNotAvailable"),
            ("Degraded", "False", "AsExpected"),
        ]),
        triples(&[
            ("Applied", "True", "Applied"),
            ("Available", "False", "ResourceNotAvailable"),
            ("Degraded", "True", "ResourceNotAvailable"),
        ]),
        triples(&[
            ("Applied", "False", "Conflict"),
            ("Available", "Unknown", "NotApplied"),
        ]),
        triples(&[
            ("Applied", "False", "ResourceNotFound"),
            ("Available", "False", "ResourceNotFound"),
        ]),
    ];
    for (m, (want, result)) in status
        .manifest_statuses
        .iter()
        .zip(expected.iter().zip(&results))
    {
        assert_eq!(&summary(&m.conditions), want, "{}", m.identifier.name);
        assert_eq!(m.identifier, result.identifier);
        assert_eq!(m.observed_resource_version, result.resource_version);
        assert_eq!(m.observed_generation, result.generation);
        assert!(m
            .conditions
            .iter()
            .all(|c| c.last_transition_time == at(1000)));
    }
    let degraded = &status.manifest_statuses[1].conditions[2];
    assert_eq!(
        degraded.message,
        "job failed: BackoffLimitExceeded: Job has reached the specified backoff limit"
    );
    let values = |i: usize| -> Vec<String> {
        status.manifest_statuses[i]
            .feedback
            .iter()
            .flat_map(|f| &f.values)
            .map(|v| v.name.clone())
            .collect()
    };
    assert_eq!(
        values(0),
        [
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
            "image"
        ]
    );
    assert_eq!(values(1), ["failed"]);
    assert!(status.manifest_statuses[2].feedback.is_none());
}

#[test]
fn transition_times_are_kept_while_status_holds() {
    let deploy = id(0, "Deployment", Some("demo"), "web");
    let svc = id(1, "Service", Some("demo"), "web");
    let first = work_status(
        None,
        &[
            applied(deploy.clone(), web(1)),
            applied(svc.clone(), service()),
        ],
        &[],
        Some(7),
        at(1000),
    );

    // Same input later: the same status, so the caller writes nothing.
    let again = work_status(
        Some(&first),
        &[
            applied(deploy.clone(), web(1)),
            applied(svc.clone(), service()),
        ],
        &[],
        Some(7),
        at(2000),
    );
    assert!(same_status(&first, &again));

    // The rollout finishes, and a manifest is added in front (ordinals move): only what changed
    // is stamped anew, manifests are matched by name.
    let mut moved_deploy = deploy.clone();
    moved_deploy.ordinal = 1;
    let mut moved_svc = svc.clone();
    moved_svc.ordinal = 2;
    let results = [
        applied(
            id(0, "Namespace", None, "demo"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}),
        ),
        applied(moved_deploy, web(3)),
        applied(moved_svc, service()),
    ];
    let later = work_status(Some(&first), &results, &[], Some(7), at(3000));
    let times = |m: usize| -> Vec<(String, i64)> {
        later.manifest_statuses[m]
            .conditions
            .iter()
            .map(|c| (c.type_.clone(), c.last_transition_time.0.as_second()))
            .collect()
    };
    let pairs = |v: &[(&str, i64)]| -> Vec<(String, i64)> {
        v.iter().map(|(t, s)| ((*t).to_owned(), *s)).collect()
    };
    assert_eq!(
        times(0),
        pairs(&[("Applied", 3000), ("Available", 3000), ("Degraded", 3000)])
    );
    assert_eq!(
        times(1),
        pairs(&[("Applied", 1000), ("Available", 3000), ("Degraded", 1000)])
    );
    assert_eq!(
        times(2),
        pairs(&[("Applied", 1000), ("Available", 1000), ("Degraded", 1000)])
    );
    let work_times: Vec<i64> = later
        .conditions
        .iter()
        .map(|c| c.last_transition_time.0.as_second())
        .collect();
    assert_eq!(
        work_times,
        [1000, 3000],
        "Applied held, Available turned True"
    );
    assert!(!same_status(&first, &later));
}

#[test]
fn now_is_cut_to_whole_seconds_as_stored() {
    let now = Time(Timestamp::new(1000, 999_999_999).expect("a valid test time"));
    let status = work_status(None, &[], &[], None, now);
    for c in &status.conditions {
        assert_eq!(c.last_transition_time, at(1000));
        assert_eq!(c.observed_generation, None);
    }
    // Written to the hub and read back, it compares equal to what was computed.
    let read_back: WorkStatus =
        serde_json::from_value(serde_json::to_value(&status).expect("serializes")).expect("parses");
    assert!(same_status(&status, &read_back));
}
