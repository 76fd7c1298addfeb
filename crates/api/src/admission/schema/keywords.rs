//! The value keywords of a structural schema that bound one node — numbers (`minimum`,
//! `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`), strings (`minLength`,
//! `maxLength`, `pattern`), lists (`minItems`, `maxItems`) and maps (`minProperties`,
//! `maxProperties`) — checked as kube-openapi's validators check them and worded as
//! apiextensions-apiserver turns their errors into field errors (`Invalid value: 0: spec.size
//! in body should be greater than or equal to 1`, `Too long: may not be more than 3 bytes`,
//! `Too many: 3: must have at most 2 items`).
//!
//! A string's `format` is [`super::formats`]'s, a list's `x-kubernetes-list-type`
//! [`super::lists`]'s. [`super::values`] walks the schema and calls [`check`] on each node once its type matches.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;
use regex::Regex;
use serde_json::{Map, Value};

/// (field path, message) causes, as [`super::values`] collects them.
pub type Causes = Vec<(String, String)>;

/// Check `v` at `path` against the bounding keywords of schema node `s`.
pub fn check(s: &Map<String, Value>, v: &Value, path: &str, causes: &mut Causes) {
    match v {
        Value::Number(_) => number(s, v, path, causes),
        Value::String(text) => {
            string(s, text, v, path, causes);
            if let Some(format) = s.get("format").and_then(Value::as_str) {
                causes.extend(super::formats::check(format, v, path));
            }
        }
        Value::Array(items) => {
            super::lists::check(s, items, path, causes);
            let n = items.len() as u64;
            if let Some(max) = uint(s, "maxItems").filter(|m| n > *m) {
                causes.push((
                    path.into(),
                    format!("Too many: {n}: must have at most {max} items"),
                ));
            }
            if let Some(min) = uint(s, "minItems").filter(|m| n < *m) {
                let detail = format!("{path} in body should have at least {min} items");
                causes.push((path.into(), format!("Invalid value: {n}: {detail}")));
            }
        }
        Value::Object(o) => {
            let n = o.len() as u64;
            if let Some(max) = uint(s, "maxProperties").filter(|m| n > *m) {
                causes.push((
                    path.into(),
                    format!("Too many: {n}: must have at most {max} items"),
                ));
            }
            if let Some(min) = uint(s, "minProperties").filter(|m| n < *m) {
                let detail = format!("{path} in body should have at least {min} properties");
                causes.push((path.into(), format!("Invalid value: {n}: {detail}")));
            }
        }
        _ => {}
    }
}

/// kube-openapi's number validator: multipleOf, then minimum, then maximum.
fn number(s: &Map<String, Value>, v: &Value, path: &str, causes: &mut Causes) {
    let Some(x) = v.as_f64() else { return };
    let flag = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut fail = |detail: String| {
        causes.push((
            path.into(),
            format!("Invalid value: {}: {detail}", shown(v)),
        ));
    };
    if let Some(m) = float(s, "multipleOf").filter(|m| *m > 0.0) {
        if !is_multiple(v, x, m) {
            fail(format!(
                "{path} in body should be a multiple of {}",
                go_float(m)
            ));
        }
    }
    if let Some(min) = float(s, "minimum") {
        if flag("exclusiveMinimum") && x <= min {
            fail(format!(
                "{path} in body should be greater than {}",
                go_float(min)
            ));
        } else if x < min {
            let bound = go_float(min);
            fail(format!(
                "{path} in body should be greater than or equal to {bound}"
            ));
        }
    }
    if let Some(max) = float(s, "maximum") {
        if flag("exclusiveMaximum") && x >= max {
            fail(format!(
                "{path} in body should be less than {}",
                go_float(max)
            ));
        } else if x > max {
            fail(format!(
                "{path} in body should be less than or equal to {}",
                go_float(max)
            ));
        }
    }
}

/// kube-openapi's string validator: maxLength, then minLength (both in characters, as
/// `utf8.RuneCount`), then pattern.
fn string(s: &Map<String, Value>, text: &str, v: &Value, path: &str, causes: &mut Causes) {
    let n = text.chars().count() as u64;
    if let Some(max) = uint(s, "maxLength").filter(|m| n > *m) {
        causes.push((
            path.into(),
            format!("Too long: may not be more than {max} bytes"),
        ));
    }
    if let Some(min) = uint(s, "minLength").filter(|m| n < *m) {
        let detail = format!("{path} in body should be at least {min} chars long");
        causes.push((
            path.into(),
            format!("Invalid value: {}: {detail}", shown(v)),
        ));
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
        let detail = match matches(pattern, text) {
            Ok(true) => return,
            Ok(false) => format!("{path} in body should match '{pattern}'"),
            Err(e) => {
                format!("{path} in body should match '{pattern}, but pattern is invalid: {e}'")
            }
        };
        causes.push((
            path.into(),
            format!("Invalid value: {}: {detail}", shown(v)),
        ));
    }
}

/// Whether `text` matches `pattern`, unanchored as Go's `MatchString`. Compiled patterns are
/// kept: a CRD's few patterns are met on every write of its objects.
fn matches(pattern: &str, text: &str) -> Result<bool, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<Regex, String>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock();
    // A CRD author controls the patterns; bound what a stream of distinct ones can hold.
    if cache.len() > 4096 {
        cache.clear();
    }
    let re = cache
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(pattern).map_err(|e| e.to_string()));
    match re {
        Ok(re) => Ok(re.is_match(text)),
        Err(e) => Err(e.clone()),
    }
}

fn is_multiple(v: &Value, x: f64, m: f64) -> bool {
    if let (Some(i), true) = (v.as_i64(), m.fract() == 0.0 && m < i64::MAX as f64) {
        return i % (m as i64) == 0;
    }
    let q = x / m;
    q.is_finite() && (q - q.round()).abs() < 1e-9
}

fn uint(s: &Map<String, Value>, k: &str) -> Option<u64> {
    s.get(k).and_then(Value::as_u64)
}

fn float(s: &Map<String, Value>, k: &str) -> Option<f64> {
    s.get(k).and_then(Value::as_f64)
}

/// A bound as Go's `%v` prints a float64 (`1`, `1.5`).
pub fn go_float(f: f64) -> String {
    format!("{f}")
}

/// A bad value as apimachinery's field errors print it: numbers plain (`0`, `1.5`), strings
/// quoted.
pub fn shown(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), go_float),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
