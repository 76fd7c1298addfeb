//! `x-kubernetes-list-type: set` and `map` lists hold no two equal items (sets) or no two
//! items with equal `x-kubernetes-list-map-keys` (maps), as apiextensions-apiserver's
//! `listtype` validation checks: every later duplicate is a `Duplicate value` cause at its
//! index, the value printed as Go prints it (`"a"`, `1`, `map[string]interface {}{"name":"a"}`).

use serde_json::Value;

use super::keywords::Causes;

/// Check list `items` at `path` against the list type of schema node `s`.
pub fn check(s: &serde_json::Map<String, Value>, items: &[Value], path: &str, causes: &mut Causes) {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => {
            for i in later_duplicates(items) {
                let shown = go_value(&items[i]);
                causes.push((format!("{path}[{i}]"), format!("Duplicate value: {shown}")));
            }
        }
        Some("map") => {
            let keys: Vec<&str> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let key_of = |x: &Value| -> Value {
                let mut key = serde_json::Map::new();
                for k in &keys {
                    if let Some(v) = x.get(*k) {
                        key.insert((*k).to_owned(), v.clone());
                    }
                }
                Value::Object(key)
            };
            let item_keys: Vec<Value> = items.iter().map(key_of).collect();
            for i in later_duplicates(&item_keys) {
                let shown = go_value(&item_keys[i]);
                causes.push((format!("{path}[{i}]"), format!("Duplicate value: {shown}")));
            }
        }
        _ => {}
    }
}

/// Indexes of the items equal to an earlier one.
fn later_duplicates(items: &[Value]) -> Vec<usize> {
    (0..items.len())
        .filter(|&i| items[..i].contains(&items[i]))
        .collect()
}

/// A value as Go's `%#v` prints the unstructured form (maps sorted by key), as
/// `field.Duplicate` shows it; strings and numbers as `ErrorBody` prints them.
fn go_value(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String((*k).clone()), go_value(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
        other => super::keywords::shown(other),
    }
}

#[cfg(test)]
mod tests;
