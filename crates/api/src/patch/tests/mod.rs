//! Table-driven tests for the three patch dialects.
//!
//! Each case names a document, a patch and what must come of it: a result (compared as
//! serialized JSON, so key order counts) or an error of a given kind whose message contains a
//! given text. A table runs every case and reports all failures at once.

mod json_patch;
mod json_patch_limits;
mod kubectl;
mod merge_patch;
mod schema;
mod strategic;
mod strategic_lists;

use serde_json::Value;

use super::{strategic_merge_patch, PatchError};
use crate::schema::lookup::NoSchema;

/// Which function a case runs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Dialect {
    Json,
    Merge,
    /// Strategic merge patch from this root type of the Kubernetes-like test schema.
    Smp(&'static str),
    /// Strategic merge patch with no schema at all (custom resources without one).
    SmpNoSchema,
}

/// What a case expects.
pub(super) enum Want {
    Ok(Value),
    Malformed(&'static str),
    Unprocessable(&'static str),
}

pub(super) struct Case {
    pub(super) name: &'static str,
    pub(super) dialect: Dialect,
    pub(super) doc: Value,
    pub(super) patch: Value,
    pub(super) want: Want,
}

pub(super) fn case(
    name: &'static str,
    dialect: Dialect,
    doc: Value,
    patch: Value,
    want: Want,
) -> Case {
    Case {
        name,
        dialect,
        doc,
        patch,
        want,
    }
}

pub(super) fn ok(value: Value) -> Want {
    Want::Ok(value)
}

pub(super) fn malformed(needle: &'static str) -> Want {
    Want::Malformed(needle)
}

pub(super) fn unprocessable(needle: &'static str) -> Want {
    Want::Unprocessable(needle)
}

fn apply(case: &Case) -> Result<Value, PatchError> {
    match case.dialect {
        Dialect::Json => super::json_patch(&case.doc, &case.patch),
        Dialect::Merge => super::merge_patch(&case.doc, &case.patch),
        Dialect::Smp(root) => strategic_merge_patch(&case.doc, &case.patch, &schema::kube(), root),
        Dialect::SmpNoSchema => {
            strategic_merge_patch(&case.doc, &case.patch, &NoSchema, "Anything")
        }
    }
}

/// Equal as written, key order included (`Value`'s `==` ignores key order).
fn same_text(a: &Value, b: &Value) -> bool {
    serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Run every case; panic listing each one that failed.
pub(super) fn run(cases: Vec<Case>) {
    let mut failures = Vec::new();
    let mut names = std::collections::HashSet::new();
    for case in &cases {
        assert!(
            names.insert(case.name),
            "two cases are named {:?}",
            case.name
        );
        let before = case.doc.to_string();
        let got = apply(case);
        assert_eq!(
            before,
            case.doc.to_string(),
            "{}: the input document was modified",
            case.name
        );
        let failure = match (&case.want, got) {
            (Want::Ok(want), Ok(got)) if same_text(want, &got) => None,
            (Want::Ok(want), Ok(got)) => {
                Some(format!("want\n{}\ngot\n{}", pretty(want), pretty(&got)))
            }
            (Want::Malformed(needle), Err(PatchError::Malformed(msg)))
            | (Want::Unprocessable(needle), Err(PatchError::Unprocessable(msg)))
                if msg.contains(needle) =>
            {
                None
            }
            (Want::Ok(_), Err(err)) => Some(format!("want a result, got error {err:?}")),
            (Want::Malformed(needle), got) => {
                Some(format!("want Malformed containing {needle:?}, got {got:?}"))
            }
            (Want::Unprocessable(needle), got) => Some(format!(
                "want Unprocessable containing {needle:?}, got {got:?}"
            )),
        };
        if let Some(failure) = failure {
            failures.push(format!("--- {} ({:?})\n{failure}", case.name, case.dialect));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
