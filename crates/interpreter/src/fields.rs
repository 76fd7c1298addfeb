//! Dotted field paths (`spec.replicas`) read from and written into JSON objects.

use serde_json::{Map, Value};

/// Split a dotted path; every segment non-empty and free of brackets.
pub(crate) fn parse(path: &str) -> Result<Vec<String>, String> {
    let path = path.strip_prefix('.').unwrap_or(path);
    if path.is_empty() {
        return Err("Required value: a dotted field path such as spec.replicas".to_owned());
    }
    let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
    if segments
        .iter()
        .any(|s| s.is_empty() || s.contains(['[', ']', ' ']))
    {
        return Err(
            "a field path is names joined by dots (spec.replicas); list indexes and empty \
             names are not allowed"
                .to_owned(),
        );
    }
    Ok(segments)
}

/// The value at `path` in `obj`, if every step is an object holding the next name.
pub(crate) fn get<'a>(obj: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(obj, |v, name| v.as_object()?.get(name))
}

/// Removes the field at `path` from `obj`, if it is there.
pub(crate) fn remove(obj: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents
        .iter()
        .try_fold(obj, |v, name| v.as_object_mut()?.get_mut(name));
    if let Some(map) = parent.and_then(Value::as_object_mut) {
        map.remove(last);
    }
}

/// Set `value` at `path` in `obj`, creating the objects on the way; an error if a step is
/// something other than an object (or null).
pub(crate) fn set(obj: &mut Value, path: &[String], value: Value) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("an empty field path".to_owned());
    };
    let mut at = obj;
    for (i, name) in parents.iter().enumerate() {
        if at.is_null() {
            *at = Value::Object(Map::new());
        }
        let Some(map) = at.as_object_mut() else {
            return Err(format!(
                "cannot write {}: {} is not an object",
                path.join("."),
                path[..i].join(".")
            ));
        };
        at = map.entry(name.clone()).or_insert(Value::Null);
    }
    if at.is_null() {
        *at = Value::Object(Map::new());
    }
    match at.as_object_mut() {
        Some(map) => {
            map.insert(last.clone(), value);
            Ok(())
        }
        None => Err(format!(
            "cannot write {}: {} is not an object",
            path.join("."),
            parents.join(".")
        )),
    }
}
