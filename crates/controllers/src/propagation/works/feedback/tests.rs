use flotilla_apis::work::v1alpha1::{
    FeedbackValue, FieldValue, ResourceIdentifier, StatusFeedback, CONDITION_APPLIED,
    CONDITION_AVAILABLE,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;

fn identifier(group: &str, kind: &str) -> ResourceIdentifier {
    ResourceIdentifier {
        ordinal: 0,
        group: group.to_owned(),
        version: "v1".to_owned(),
        kind: kind.to_owned(),
        resource: String::new(),
        namespace: Some("shop".to_owned()),
        name: "web".to_owned(),
    }
}

fn value(name: &str, value: FieldValue) -> FeedbackValue {
    FeedbackValue {
        name: name.to_owned(),
        value,
    }
}

fn integer(n: i64) -> FieldValue {
    FieldValue {
        integer: Some(n),
        ..FieldValue::default()
    }
}

fn string(s: &str) -> FieldValue {
    FieldValue {
        string: Some(s.to_owned()),
        ..FieldValue::default()
    }
}

fn raw(json: &str) -> FieldValue {
    FieldValue {
        json_raw: Some(json.to_owned()),
        ..FieldValue::default()
    }
}

fn manifest(group: &str, kind: &str, values: Vec<FeedbackValue>) -> ManifestStatus {
    ManifestStatus {
        identifier: identifier(group, kind),
        feedback: Some(StatusFeedback { values }),
        ..ManifestStatus::default()
    }
}

fn cond(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        observed_generation: None,
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }
}

#[test]
fn service_cluster_ips_from_feedback() {
    // A dual-stack member: clusterIPs (primary first) then clusterIP, each once.
    let dual = manifest(
        "",
        "Service",
        vec![
            value("clusterIP", string("10.96.0.10")),
            value("clusterIPs", raw(r#"["10.96.0.10","fd00::a"]"#)),
        ],
    );
    assert_eq!(
        member_status(&dual),
        Some(json!({ "clusterIPs": ["10.96.0.10", "fd00::a"] }))
    );
    // Headless: no ClusterIP to answer with.
    let headless = manifest(
        "",
        "Service",
        vec![
            value("clusterIP", string("None")),
            value("clusterIPs", raw(r#"["None"]"#)),
        ],
    );
    assert_eq!(member_status(&headless), Some(json!({})));
    // Not a Service: a value named clusterIP is a user's rule, kept as it is.
    let other = manifest("apps", "Deployment", vec![value("clusterIP", string("x"))]);
    assert_eq!(member_status(&other), Some(json!({ "clusterIP": "x" })));
}

#[test]
fn member_status_from_feedback() {
    let deploy = manifest(
        "apps",
        "Deployment",
        vec![
            value("replicas", integer(2)),
            value("readyReplicas", integer(2)),
            value("observedGeneration", integer(3)),
            // A user's JSONPath rule.
            value(
                "paused",
                FieldValue {
                    boolean: Some(false),
                    ..FieldValue::default()
                },
            ),
            value("images", raw(r#"["nginx:1.27","envoy:1.30"]"#)),
            value("broken", raw("{not json")),
            value("nothing", FieldValue::default()),
        ],
    );
    assert_eq!(
        member_status(&deploy),
        Some(json!({
            "replicas": 2, "readyReplicas": 2, "observedGeneration": 3, "paused": false,
            "images": ["nginx:1.27", "envoy:1.30"], "broken": "{not json",
        }))
    );

    let service = manifest(
        "",
        "Service",
        vec![
            value("clusterIP", string("10.96.0.10")),
            value(
                "loadBalancerIngress",
                raw(r#"[{"ip":"203.0.113.1","ipMode":"VIP"}]"#),
            ),
        ],
    );
    assert_eq!(
        member_status(&service),
        Some(json!({
            "clusterIPs": ["10.96.0.10"],
            "loadBalancer": { "ingress": [{ "ip": "203.0.113.1", "ipMode": "VIP" }] },
        }))
    );

    let job = manifest(
        "batch",
        "Job",
        vec![
            value("succeeded", integer(1)),
            value("startTime", string("2026-03-01T10:00:00Z")),
            value("completionTime", string("2026-03-01T10:01:00Z")),
        ],
    );
    assert_eq!(
        member_status(&job),
        Some(json!({
            "succeeded": 1, "startTime": "2026-03-01T10:00:00Z",
            "completionTime": "2026-03-01T10:01:00Z",
        }))
    );

    assert_eq!(member_status(&manifest("apps", "Deployment", vec![])), None);
    let none = ManifestStatus {
        identifier: identifier("apps", "Deployment"),
        ..ManifestStatus::default()
    };
    assert_eq!(member_status(&none), None);
}

#[test]
fn health_from_the_available_condition() {
    let with = |conditions: Vec<Condition>| ManifestStatus {
        conditions,
        ..ManifestStatus::default()
    };
    let applied = cond(CONDITION_APPLIED, "True", "Applied", "");
    for (available, expected) in [
        (Some("True"), ResourceHealth::Healthy),
        (Some("False"), ResourceHealth::Unhealthy),
        (Some("Unknown"), ResourceHealth::Unknown),
        (None, ResourceHealth::Unknown),
    ] {
        let mut conditions = vec![applied.clone()];
        conditions.extend(available.map(|s| cond(CONDITION_AVAILABLE, s, "R", "")));
        assert_eq!(health(&with(conditions)), expected, "{available:?}");
    }
}

#[test]
fn binding_items() {
    let mut ok = manifest("apps", "Deployment", vec![value("replicas", integer(2))]);
    ok.conditions = vec![
        cond(CONDITION_APPLIED, "True", "Applied", "applied"),
        cond(CONDITION_AVAILABLE, "True", "Available", ""),
    ];
    assert_eq!(
        item("east", Some(&ok)),
        AggregatedStatusItem {
            cluster_name: "east".to_owned(),
            status: Some(json!({ "replicas": 2 })),
            applied: true,
            applied_message: None,
            health: Some(ResourceHealth::Healthy),
        }
    );

    let mut conflict = manifest("apps", "Deployment", vec![]);
    conflict.conditions = vec![cond(
        CONDITION_APPLIED,
        "False",
        "Conflict",
        "deployments/web exists and is not managed by flotilla",
    )];
    let conflicted = item("west", Some(&conflict));
    assert!(!conflicted.applied);
    assert_eq!(
        conflicted.applied_message.as_deref(),
        Some("deployments/web exists and is not managed by flotilla")
    );
    assert_eq!(conflicted.status, None);
    assert_eq!(conflicted.health, Some(ResourceHealth::Unknown));

    conflict.conditions = vec![cond(CONDITION_APPLIED, "False", "KindNotServed", "")];
    assert_eq!(
        item("west", Some(&conflict)).applied_message.as_deref(),
        Some("KindNotServed")
    );

    let pending = item("north", None);
    assert_eq!(pending.cluster_name, "north");
    assert!(!pending.applied);
    assert_eq!(
        pending.applied_message.as_deref(),
        Some("not yet applied in the member")
    );
    assert_eq!(pending.status, None);
}

#[test]
fn a_whole_status_fed_back_is_the_members_status_and_object() {
    let clones = manifest(
        "apps.kruise.io",
        "CloneSet",
        vec![value(
            WHOLE_STATUS,
            raw(r#"{"readyReplicas": 2, "conditions": [{"type": "Ready", "status": "True"}]}"#),
        )],
    );
    let status = json!({"readyReplicas": 2, "conditions": [{"type": "Ready", "status": "True"}]});
    assert_eq!(member_status(&clones), Some(status.clone()));
    let mut reported = clones.clone();
    reported.observed_generation = Some(4);
    let obj = member_object(
        &json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
        &reported,
    );
    assert_eq!(obj["status"], status);
    assert_eq!(obj["metadata"]["generation"], 4);
    assert_eq!(obj["spec"]["replicas"], 2);
}
