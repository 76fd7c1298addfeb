//! What a member's report says about the revision its Work carries, and what a revision holds.

use serde_json::{json, Value};

use super::super::tests::work;
use super::*;

/// A Work of generation 2 whose status says `applied` for Work generation `observed`, and the
/// manifest's conditions.
fn reported(observed: i64, conditions: Value) -> Arc<Work> {
    let cond = |t: &str, s: &str, m: &str| {
        json!({"type": t, "status": s, "reason": "R", "message": m,
            "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    let mut applied = cond("Applied", "True", "");
    applied["observedGeneration"] = json!(observed);
    let mut list = vec![cond("Applied", "True", "")];
    list.extend(
        conditions
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                cond(
                    c[0].as_str().unwrap(),
                    c[1].as_str().unwrap(),
                    c[2].as_str().unwrap(),
                )
            }),
    );
    work(
        "m-1",
        json!({
            "metadata": {"generation": 2},
            "status": {
                "conditions": [applied],
                "manifestStatuses": [{
                    "identifier": {"ordinal": 0, "version": "v1", "kind": "Deployment", "name": "web"},
                    "conditions": list,
                    "observedGeneration": 5,
                }],
            },
        }),
    )
}

#[test]
fn a_member_is_healthy_on_its_revision_only_once_it_applied_it_and_says_available() {
    assert!(matches!(state_of(None, None), State::Pending(_)));
    let stale = reported(1, json!([["Available", "True", ""]]));
    assert_eq!(
        state_of(Some(&stale), None),
        State::Pending("the member has not applied this revision yet".into()),
        "an Available of the Work's previous generation says nothing of this one"
    );
    let up = reported(2, json!([["Available", "True", ""]]));
    assert_eq!(state_of(Some(&up), None), State::Healthy);
    let waiting = reported(
        2,
        json!([["Available", "False", "0 of 1 replicas available"]]),
    );
    assert_eq!(
        state_of(Some(&waiting), None),
        State::Pending("0 of 1 replicas available".into())
    );
    let broken = reported(
        2,
        json!([
            ["Available", "False", "x"],
            ["Degraded", "True", "progress deadline exceeded"]
        ]),
    );
    assert_eq!(
        state_of(Some(&broken), None),
        State::Failed("progress deadline exceeded".into())
    );
}

#[test]
fn an_interpreters_health_rule_decides_for_its_kind() {
    let spec: flotilla_apis::config::v1alpha1::ResourceInterpreterSpec =
        serde_json::from_value(json!({
            "target": {"apiVersion": "v1", "kind": "Deployment"},
            "health": {
                "healthy": "has(self.status) && self.status.observedGeneration == self.metadata.generation",
                "reason": "'not observed'",
            },
        }))
        .unwrap();
    let i = Interpreter::compile(&spec).unwrap();
    // Available by the member's conditions, but the rule reads the fed-back status.
    let up = reported(2, json!([["Available", "True", ""]]));
    assert_eq!(
        state_of(Some(&up), Some(&i)),
        State::Pending("not observed".into())
    );
    let mut fed = (*up).clone();
    let m = &mut fed.status.as_mut().unwrap().manifest_statuses[0];
    m.feedback = Some(flotilla_apis::work::v1alpha1::StatusFeedback {
        values: vec![flotilla_apis::work::v1alpha1::FeedbackValue {
            name: "status".into(),
            value: flotilla_apis::work::v1alpha1::FieldValue {
                json_raw: Some(r#"{"observedGeneration": 5}"#.into()),
                ..Default::default()
            },
        }],
    });
    assert_eq!(state_of(Some(&fed), Some(&i)), State::Healthy);
}

#[test]
fn a_revision_holds_what_rendering_keeps_and_is_named_by_it() {
    let template = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "7",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a"}},
        "spec": {"replicas": 3}, "status": {"replicas": 3}});
    let content = revision_content(&template);
    assert_eq!(
        content,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "annotations": {"team": "a"}},
            "spec": {"replicas": 3}})
    );
    let (name, hash) = revision_name("web-deployment", &content);
    assert_eq!(name, format!("web-deployment-{}", &hash[..10]));
    // Another resourceVersion, status or kubectl copy: the same revision.
    let mut again = template.clone();
    again["metadata"]["resourceVersion"] = json!("8");
    again["status"]["replicas"] = json!(1);
    assert_eq!(
        revision_name("web-deployment", &revision_content(&again)).0,
        name
    );
    let mut changed = template;
    changed["spec"]["replicas"] = json!(4);
    assert_ne!(
        revision_name("web-deployment", &revision_content(&changed)).0,
        name
    );
    assert_eq!(revision_namespace(None), "flotilla-system");
    assert_eq!(revision_namespace(Some("shop")), "shop");
}
