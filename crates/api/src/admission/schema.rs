//! Schema validation, built-in kinds and CRDs alike: unknown fields are dropped, and reported as
//! warnings (`fieldValidation=Warn`, the default) or refused (`Strict`) as in Kubernetes
//! ([`unknown`]); a custom resource also gets its schema's defaults and is refused (422) when
//! a value breaks the schema ([`values`], [`keywords`], [`formats`], [`lists`], [`embedded`]) or one of its
//! CEL rules ([`rules`]; transition rules against the stored object: [`transitions`]).

pub mod embedded;
pub mod formats;
pub mod keywords;
pub mod lists;
pub mod rules;
pub mod unknown;
pub mod values;

use serde_json::Value;

use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::FieldValidation;
use crate::schemas::Schemas;

/// Validate `obj` against the schema of `res`; returns the warnings for the client.
pub(crate) fn validate(
    schemas: &Schemas,
    res: &ResourceInfo,
    obj: &mut Value,
    level: FieldValidation,
) -> Result<Vec<String>> {
    let root = schemas.root_type(res);
    if root.is_empty() {
        return Ok(Vec::new());
    }
    let unknown = unknown::prune_unknown(schemas.set(), &root, obj);
    if res.custom {
        check_values(schemas, res, &root, obj)?;
    }
    let messages: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    match level {
        FieldValidation::Strict if !messages.is_empty() => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            messages.join(", ")
        ))),
        FieldValidation::Warn => Ok(messages),
        _ => Ok(Vec::new()),
    }
}

/// The values part alone (no unknown fields: the object is the server's own merge, as an
/// apply's), for a custom resource: its schema's defaults, and 422 for values that break it.
pub(crate) fn values(schemas: &Schemas, res: &ResourceInfo, obj: &mut Value) -> Result<()> {
    if !res.custom {
        return Ok(());
    }
    let root = schemas.root_type(res);
    if root.is_empty() {
        return Ok(());
    }
    check_values(schemas, res, &root, obj)
}

/// Custom resources: fill in the schema's defaults and refuse values that break it (422).
fn check_values(schemas: &Schemas, res: &ResourceInfo, root: &str, obj: &mut Value) -> Result<()> {
    let snapshot = schemas.set().snapshot();
    let Some(schema) = snapshot.definition(root) else {
        return Ok(());
    };
    let mut causes = values::default_and_check(schema, obj);
    causes.extend(rules::check(schema, obj, None, rules::Rules::Plain));
    refuse(res, obj, causes)
}

/// An update's transition rules (`oldSelf`), for a custom resource: `new` against the stored
/// `old` (422 when one does not hold).
pub(crate) fn transitions(
    schemas: &Schemas,
    res: &ResourceInfo,
    old: &Value,
    new: &Value,
) -> Result<()> {
    if !res.custom {
        return Ok(());
    }
    let root = schemas.root_type(res);
    let snapshot = schemas.set().snapshot();
    let Some(schema) = snapshot.definition(&root) else {
        return Ok(());
    };
    let causes = rules::check(schema, new, Some(old), rules::Rules::Transitions);
    refuse(res, new, causes)
}

fn refuse(res: &ResourceInfo, obj: &Value, causes: Vec<(String, String)>) -> Result<()> {
    if causes.is_empty() {
        return Ok(());
    }
    // kube-apiserver names the kind with its group in the message (`Cluster.cluster.flotilla.io
    // "x" is invalid`), and without it in the details.
    let mut e = ApiError::invalid_object(res, obj, causes);
    e.message = format!("{}.{}{}", res.kind, res.group, &e.message[res.kind.len()..]);
    Err(e)
}
