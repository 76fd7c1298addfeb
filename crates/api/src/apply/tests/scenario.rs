//! The scenario harness: what may be checked after a sequence of requests, and the objects
//! the scenario tables build on.

use serde_json::{json, Value};

use super::*;
use crate::apply::ApplyError;

pub(super) enum Check {
    /// The value at a JSON pointer.
    At(&'static str, Value),
    /// Nothing at a JSON pointer.
    Absent(&'static str),
    /// The manager owns the path.
    Owns(&'static str, &'static str),
    /// The manager does not own the path.
    NotOwns(&'static str, &'static str),
    /// The managedFields entries, in order, as "manager/Operation[/subresource]".
    Managers(&'static [&'static str]),
    /// The fieldsV1 of (manager, operation).
    Fields(&'static str, &'static str, Value),
    /// The time of (manager, operation) is the time of step n.
    Time(&'static str, &'static str, usize),
    /// The last step changed nothing at all.
    Unchanged,
    /// The last step failed with these conflicts (manager, field).
    Conflicts(&'static [(&'static str, &'static str)]),
    /// The last step failed with this message.
    Message(&'static str),
    /// The last step failed with a message containing this.
    ErrorContains(&'static str),
}

pub(super) struct Case {
    pub(super) name: &'static str,
    pub(super) steps: Vec<Step>,
    pub(super) checks: Vec<Check>,
}

pub(super) fn check(case: Case) {
    let name = case.name;
    let (before, result) = run(case.steps);
    for c in case.checks {
        match (&c, &result) {
            (Check::Conflicts(want), Err(ApplyError::Conflicts(got))) => {
                let got: Vec<(&str, &str)> = got
                    .iter()
                    .map(|c| (c.manager.as_str(), c.field.as_str()))
                    .collect();
                assert_eq!(&got, want, "{name}: conflicts");
            }
            (Check::Message(want), Err(e)) => assert_eq!(&e.to_string(), want, "{name}"),
            (Check::ErrorContains(want), Err(e)) => {
                assert!(e.to_string().contains(want), "{name}: {e} lacks {want:?}")
            }
            (_, Err(e)) => panic!("{name}: unexpected error {e}"),
            (Check::Conflicts(_) | Check::Message(_) | Check::ErrorContains(_), Ok(v)) => {
                panic!("{name}: expected an error, got {v:#}")
            }
            (Check::At(p, want), Ok(v)) => {
                assert_eq!(v.pointer(p), Some(want), "{name}: at {p} in {v:#}")
            }
            (Check::Absent(p), Ok(v)) => assert_eq!(v.pointer(p), None, "{name}: {p} in {v:#}"),
            (Check::Owns(m, p), Ok(v)) => {
                assert!(owns(v, m, p), "{name}: {m} should own {p}: {v:#}")
            }
            (Check::NotOwns(m, p), Ok(v)) => {
                assert!(!owns(v, m, p), "{name}: {m} should not own {p}: {v:#}")
            }
            (Check::Managers(want), Ok(v)) => assert_eq!(&managers(v), want, "{name}"),
            (Check::Fields(m, op, want), Ok(v)) => {
                let e = entry(v, m, op).unwrap_or_else(|| panic!("{name}: no {m}/{op} in {v:#}"));
                assert_eq!(&e["fieldsV1"], want, "{name}: fieldsV1 of {m}");
            }
            (Check::Time(m, op, n), Ok(v)) => {
                let e = entry(v, m, op).unwrap_or_else(|| panic!("{name}: no {m}/{op}"));
                assert_eq!(e["time"], at(*n), "{name}: time of {m}");
            }
            (Check::Unchanged, Ok(v)) => assert_eq!(Some(v), before.as_ref(), "{name}: changed"),
        }
    }
}

pub(super) fn replicas(n: u32) -> Value {
    deploy(json!({"replicas": n}))
}

pub(super) fn with_labels(labels: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "labels": labels}})
}

pub(super) fn containers(list: Value) -> Value {
    deploy(json!({"template": {"spec": {"containers": list}}}))
}

pub(super) fn finalizers(list: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "finalizers": list}})
}

pub(super) fn nginx_fields() -> Value {
    json!({"f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                    ".": {}, "f:containerPort": {}}}}}}}}})
}

pub(super) const IMAGE: &str = ".spec.template.spec.containers[name=\"nginx\"].image";
