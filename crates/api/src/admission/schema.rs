//! Schema validation, built-in kinds and CRDs alike: a built-in kind's values of the wrong JSON
//! shape are refused (400, [`shapes`]), unknown fields are dropped, and reported as
//! warnings (`fieldValidation=Warn`, the default) or refused (`Strict`) as in Kubernetes
//! ([`unknown`]); a custom resource also gets its schema's defaults and is refused (422) when
//! a value breaks the schema ([`values`], [`keywords`], [`formats`], [`lists`], [`embedded`]) or one of its
//! CEL rules ([`rules`]). An update is judged once merged with the stored object, with
//! kube's ratcheting and transition rules ([`update`], [`ratchet`]).

pub mod embedded;
pub mod fields;
pub mod formats;
pub mod keywords;
pub mod lists;
pub mod on_read;
pub mod ratchet;
pub mod rules;
pub mod shapes;
pub mod unknown;
pub mod values;

use serde_json::Value;

use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::FieldValidation;
use crate::schemas::Schemas;

/// What [`validate`] does with a custom resource's values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Values {
    /// Fill in defaults and refuse what breaks the schema (a new object).
    Refuse,
    /// Fill in defaults only: an update's body is judged once merged with the stored object
    /// ([`update`], with ratcheting).
    DefaultOnly,
}

/// Validate `obj` against the schema of `res`; returns the warnings for the client.
pub(crate) fn validate(
    schemas: &Schemas,
    res: &ResourceInfo,
    obj: &mut Value,
    level: FieldValidation,
    values_mode: Values,
) -> Result<Vec<String>> {
    let root = schemas.root_type(res);
    if root.is_empty() {
        return Ok(Vec::new());
    }
    let unknown = unknown::prune_unknown(&*schemas.set().snapshot(), &root, obj);
    if res.custom {
        match values_mode {
            Values::Refuse => check_values(schemas, res, &root, obj)?,
            Values::DefaultOnly => default_values(schemas, &root, obj),
        }
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

/// A built-in kind's body whose values have the JSON shapes of its fields (400 otherwise, as
/// kube-apiserver's decoder into the kind's Go struct answers, before any other check).
pub(crate) fn decodable(schemas: &Schemas, res: &ResourceInfo, obj: &Value) -> Result<()> {
    if res.custom {
        return Ok(());
    }
    let root = schemas.root_type(res);
    match shapes::misshapen(&*schemas.set().snapshot(), &root, obj) {
        Some(wrong) => Err(ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: json: {wrong}",
            kind = res.kind,
            version = res.version,
        ))),
        None => Ok(()),
    }
}

/// The defaults alone, for a custom resource (an apply's merged object, an update's body):
/// whether its values hold is [`update`]'s to say, on the merged object.
pub(crate) fn defaults(schemas: &Schemas, res: &ResourceInfo, obj: &mut Value) {
    if res.custom {
        default_values(schemas, &schemas.root_type(res), obj);
    }
}

/// An update's defaults, from the part of the schema that has them ([`values::defaults_plan`]).
/// A null elsewhere that the schema does not allow is dropped by the update's own walk
/// ([`update`]), which does so in every part the update changes; the rest is as stored.
fn default_values(schemas: &Schemas, root: &str, obj: &mut Value) {
    let snapshot = schemas.set().snapshot();
    if let Some(plan) = snapshot.derived("defaults", root, values::defaults_plan) {
        // The causes are the merged object's to judge.
        let _ = values::default_and_check(&plan, obj);
    }
}

/// Custom resources: fill in the schema's defaults and refuse values that break it (422).
fn check_values(schemas: &Schemas, res: &ResourceInfo, root: &str, obj: &mut Value) -> Result<()> {
    let snapshot = schemas.set().snapshot();
    let Some(schema) = snapshot.definition(root) else {
        return Ok(());
    };
    let ruled = rules::ruled(&snapshot, root);
    let mut causes = values::default_and_check(schema, obj);
    causes.extend(rules::check_if(
        ruled,
        schema,
        obj,
        None,
        rules::Rules::Create,
    ));
    refuse(res, obj, causes)
}

/// An update of a custom resource: the merged `new` against its CRD's schema and rules, with
/// ratcheting against the stored `old` ([`ratchet`]), transition rules included (422).
pub(crate) fn update(
    schemas: &Schemas,
    res: &ResourceInfo,
    old: &Value,
    new: &mut Value,
) -> Result<()> {
    if !res.custom {
        return Ok(());
    }
    let root = schemas.root_type(res);
    let snapshot = schemas.set().snapshot();
    let Some(schema) = snapshot.definition(&root) else {
        return Ok(());
    };
    let ruled = rules::ruled(&snapshot, &root);
    let causes = ratchet::causes(schema, ruled, old, new);
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
