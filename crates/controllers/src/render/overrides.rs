//! Applying one rule's [`Overriders`] to an object, with Karmada's semantics.
//!
//! Order within a rule (Karmada's): `imageOverrider`, `commandOverrider`, `argsOverrider`,
//! `labelsOverrider`, `annotationsOverrider`, then `plaintext` last, so a JSON patch can
//! still correct what the dedicated overriders wrote. Within a kind, list order.
//!
//! * `plaintext`: RFC 6902 `add`/`remove`/`replace` at a JSON pointer. `add` needs the parent
//!   to exist (and `-` appends to a list); `replace` and `remove` need the target to exist.
//! * `imageOverrider`: see [`super::image`]. Without a predicate it changes every container and
//!   init container of a Pod or a workload's pod template (other kinds are left alone); with
//!   `predicate.path` it changes exactly that image field, which must exist.
//! * `commandOverrider`/`argsOverrider`: in the container (or init container) named
//!   `containerName`, `add` appends the values (creating the list), `remove` drops every
//!   occurrence of them. A kind without a pod template, or a template without that container,
//!   is left alone (the rule may target several kinds).
//! * `labelsOverrider`/`annotationsOverrider` on the object's own metadata: `add` sets each
//!   key, `replace` sets only keys already present, `remove` deletes the keys.
//!
//! No overrider may write an identity field (apiVersion, kind, metadata.name, .namespace,
//! .generateName, or an object holding one): what a policy propagates stays the object it
//! selected, in its namespace ([`flotilla_apis::scope`]). [`super::render`] checks the result
//! too, whatever wrote it.

use flotilla_apis::policy::v1alpha1::{
    CommandArgsOperator, CommandArgsOverrider, ImageOverrider, LabelAnnotationOverrider,
    OverriderOperator, Overriders,
};
use flotilla_apis::scope::{touches_identity, IDENTITY_REASON};
use serde_json::{Map, Value};

use super::image::{pod_spec_pointer, ImageRef};
use crate::{Error, Result};

/// Applies one rule's overriders to `obj`, in the order of the module docs. On an error `obj`
/// may be partly changed; render a fresh copy.
pub fn apply_overrides(obj: &mut Value, overriders: &Overriders) -> Result<()> {
    for o in &overriders.image_overrider {
        apply_image(obj, o)?;
    }
    for o in &overriders.command_overrider {
        apply_command_args(obj, o, "command");
    }
    for o in &overriders.args_overrider {
        apply_command_args(obj, o, "args");
    }
    for o in &overriders.labels_overrider {
        apply_map(obj, o, "labels");
    }
    for o in &overriders.annotations_overrider {
        apply_map(obj, o, "annotations");
    }
    for o in &overriders.plaintext {
        let err = |reason: String| Error::Override {
            overrider: "plaintext",
            path: o.path.clone(),
            reason,
        };
        if touches_identity(&o.path) {
            return Err(err(IDENTITY_REASON.to_owned()));
        }
        let value = o.value.as_ref().map(|v| &v.0);
        patch(obj, o.operator, &o.path, value).map_err(err)?;
    }
    Ok(())
}

fn apply_image(obj: &mut Value, o: &ImageOverrider) -> Result<()> {
    let paths = match &o.predicate {
        Some(p) => vec![p.path.clone()],
        None => image_paths(obj),
    };
    for path in paths {
        let err = |reason: String| Error::Override {
            overrider: "imageOverrider",
            path: path.clone(),
            reason,
        };
        // A predicate may name any string field; an image-shaped name is still a name.
        if touches_identity(&path) {
            return Err(err(IDENTITY_REASON.to_owned()));
        }
        let field = obj
            .pointer_mut(&path)
            .ok_or_else(|| err("there is no such field".to_owned()))?;
        let image = field
            .as_str()
            .ok_or_else(|| err("the field is not a string".to_owned()))?;
        let mut parsed = ImageRef::parse(image).map_err(err)?;
        parsed.apply(o).map_err(err)?;
        *field = Value::String(parsed.to_string());
    }
    Ok(())
}

/// Pointers to every container and init container image of the object's pod template.
fn image_paths(obj: &Value) -> Vec<String> {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let Some(spec_path) = pod_spec_pointer(kind) else {
        return Vec::new();
    };
    let Some(spec) = obj.pointer(spec_path) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for list in ["containers", "initContainers"] {
        let containers = spec.get(list).and_then(Value::as_array);
        for (i, c) in containers.into_iter().flatten().enumerate() {
            if c.get("image").is_some_and(Value::is_string) {
                paths.push(format!("{spec_path}/{list}/{i}/image"));
            }
        }
    }
    paths
}

fn apply_command_args(obj: &mut Value, o: &CommandArgsOverrider, field: &str) {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let Some(spec) = pod_spec_pointer(kind).and_then(|p| obj.pointer_mut(p)) else {
        return;
    };
    for list in ["containers", "initContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for c in containers
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            if c.get("name").and_then(Value::as_str) != Some(o.container_name.as_str()) {
                continue;
            }
            let values = c.entry(field).or_insert_with(|| Value::Array(Vec::new()));
            if !values.is_array() {
                *values = Value::Array(Vec::new());
            }
            let Some(values) = values.as_array_mut() else {
                continue;
            };
            match o.operator {
                CommandArgsOperator::Add => {
                    values.extend(o.value.iter().cloned().map(Value::String));
                }
                CommandArgsOperator::Remove => {
                    values.retain(|v| !v.as_str().is_some_and(|s| o.value.iter().any(|r| r == s)));
                }
            }
            if values.is_empty() {
                c.shift_remove(field);
            }
        }
    }
}

fn apply_map(obj: &mut Value, o: &LabelAnnotationOverrider, field: &str) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    let entries = meta
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entries.is_object() {
        *entries = Value::Object(Map::new());
    }
    let Some(entries) = entries.as_object_mut() else {
        return;
    };
    for (key, value) in &o.value {
        match o.operator {
            OverriderOperator::Add => {
                entries.insert(key.clone(), Value::String(value.clone()));
            }
            OverriderOperator::Replace => {
                if let Some(v) = entries.get_mut(key) {
                    *v = Value::String(value.clone());
                }
            }
            OverriderOperator::Remove => {
                entries.shift_remove(key);
            }
        }
    }
    if entries.is_empty() {
        meta.shift_remove(field);
    }
}

/// One RFC 6902 operation; the error says why it cannot apply.
fn patch(
    obj: &mut Value,
    op: OverriderOperator,
    path: &str,
    value: Option<&Value>,
) -> Result<(), String> {
    let value = || {
        value
            .cloned()
            .ok_or_else(|| format!("{op:?} needs a value"))
    };
    let tokens: Vec<String> = match path {
        "" => Vec::new(),
        p => p
            .strip_prefix('/')
            .ok_or("a JSON pointer starts with '/'")?
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    };
    let Some((last, parents)) = tokens.split_last() else {
        return match op {
            OverriderOperator::Remove => Err("the whole object cannot be removed".to_owned()),
            _ => {
                *obj = value()?;
                Ok(())
            }
        };
    };
    let mut at = obj;
    for (depth, token) in parents.iter().enumerate() {
        let missing = || format!("{:?} does not exist", parents[..=depth].join("/"));
        at = match at {
            Value::Object(map) => map.get_mut(token).ok_or_else(missing)?,
            Value::Array(list) => {
                let len = list.len();
                list.get_mut(index(token, len)?).ok_or_else(missing)?
            }
            _ => {
                return Err(format!(
                    "{token:?} is below a value that is not an object or list"
                ))
            }
        };
    }
    match at {
        Value::Object(map) => match op {
            OverriderOperator::Add => {
                map.insert(last.clone(), value()?);
            }
            OverriderOperator::Replace => {
                let v = value()?;
                *map.get_mut(last).ok_or("there is nothing to replace")? = v;
            }
            OverriderOperator::Remove => {
                map.shift_remove(last).ok_or("there is nothing to remove")?;
            }
        },
        Value::Array(list) => match op {
            OverriderOperator::Add if last == "-" => list.push(value()?),
            OverriderOperator::Add => {
                let i = index(last, list.len() + 1)?;
                list.insert(i, value()?);
            }
            OverriderOperator::Replace => {
                let v = value()?;
                let i = index(last, list.len())?;
                list[i] = v;
            }
            OverriderOperator::Remove => {
                let i = index(last, list.len())?;
                list.remove(i);
            }
        },
        _ => return Err("the parent is not an object or list".to_owned()),
    }
    Ok(())
}

/// A list index token below `len`.
fn index(token: &str, len: usize) -> Result<usize, String> {
    let valid = !token.is_empty()
        && token.chars().all(|c| c.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'));
    match token.parse::<usize>() {
        Ok(i) if valid && i < len => Ok(i),
        _ => Err(format!("{token:?} is not an index into a list of {len}")),
    }
}

#[cfg(test)]
mod tests;
