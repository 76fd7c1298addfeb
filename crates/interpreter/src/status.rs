//! Status fields read from each member's copy and combined on the hub.

use std::collections::BTreeMap;

use flotilla_apis::config::v1alpha1::Aggregate;
use serde_json::{json, Map, Value};

use crate::{fields, EvalError, StatusField};

/// One member's values of the interpreter's status fields, by field (`None`: the member's
/// copy has no value for it and is left out of that field).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Collected(Vec<Option<Value>>);

const RULE: &str = "status.fields";

pub(crate) fn collect(fields_: &[StatusField], obj: &Value) -> Result<Collected, EvalError> {
    let status = obj.get("status");
    let mut out = Vec::with_capacity(fields_.len());
    for f in fields_ {
        let v = match &f.expression {
            Some(e) => Some(crate::eval(e, RULE, obj)?),
            None => status.and_then(|s| fields::get(s, &f.path)).cloned(),
        };
        out.push(v.filter(|v| !v.is_null()));
    }
    Ok(Collected(out))
}

pub(crate) fn aggregate(
    fields_: &[StatusField],
    members: &[(&str, &Collected)],
) -> Result<Value, EvalError> {
    let mut status = Value::Object(Map::new());
    for (i, f) in fields_.iter().enumerate() {
        let values: Vec<(&str, &Value)> = members
            .iter()
            .filter_map(|(name, c)| c.0.get(i)?.as_ref().map(|v| (*name, v)))
            .collect();
        let Some(combined) = combine(f, &values)? else {
            continue;
        };
        crate::fields::set(&mut status, &f.path, combined).map_err(|message| EvalError {
            rule: RULE,
            message,
        })?;
    }
    Ok(status)
}

/// The members' `values` of field `f` combined; `None` when no member has one.
fn combine(f: &StatusField, values: &[(&str, &Value)]) -> Result<Option<Value>, EvalError> {
    if values.is_empty() {
        return Ok(None);
    }
    let name = f.path.join(".");
    let bad = |what: &str, member: &str, v: &Value| EvalError {
        rule: RULE,
        message: format!("{name}: {what}, but cluster {member} gave {v}"),
    };
    Ok(Some(match f.aggregate {
        Aggregate::Max | Aggregate::Min if values.iter().all(|(_, v)| v.is_string()) => {
            // Strings (RFC 3339 times: lastScheduleTime) compare as text.
            let texts = values.iter().filter_map(|(_, v)| v.as_str());
            let pick = match f.aggregate {
                Aggregate::Max => texts.max(),
                _ => texts.min(),
            };
            Value::from(pick.unwrap_or_default())
        }
        Aggregate::Sum | Aggregate::Max | Aggregate::Min => {
            let mut ints: Option<i64> = None;
            let mut floats: Option<f64> = None;
            let mut all_int = true;
            for (member, v) in values {
                let x = v
                    .as_f64()
                    .ok_or_else(|| bad("expects numbers", member, v))?;
                all_int &= v.is_i64();
                floats = Some(match (floats, f.aggregate) {
                    (None, _) => x,
                    (Some(a), Aggregate::Sum) => a + x,
                    (Some(a), Aggregate::Max) => a.max(x),
                    (Some(a), _) => a.min(x),
                });
                if let Some(i) = v.as_i64() {
                    ints = Some(match (ints, f.aggregate) {
                        (None, _) => i,
                        (Some(a), Aggregate::Sum) => a.saturating_add(i),
                        (Some(a), Aggregate::Max) => a.max(i),
                        (Some(a), _) => a.min(i),
                    });
                }
            }
            match (all_int, ints) {
                (true, Some(i)) => Value::from(i),
                _ => json!(floats.unwrap_or_default()),
            }
        }
        Aggregate::Union => {
            let mut out: Vec<Value> = Vec::new();
            for (_, v) in values {
                let items: Vec<&Value> = match v {
                    Value::Array(items) => items.iter().collect(),
                    one => vec![one],
                };
                for item in items {
                    if !out.contains(item) {
                        out.push(item.clone());
                    }
                }
            }
            Value::Array(out)
        }
        Aggregate::Conditions => conditions(values)
            .map_err(|(m, v)| bad("expects lists of conditions ({type, status})", m, v))?,
    }))
}

/// Conditions by type, in first-seen order: `True` where every member reporting the type
/// says `True`; otherwise the first other status, with the reason of the first member that
/// says it and a message naming each member that does not say `True`.
fn conditions<'a>(values: &[(&'a str, &'a Value)]) -> Result<Value, (&'a str, &'a Value)> {
    struct ByType {
        status: String,
        reason: String,
        not_true: Vec<String>,
    }
    let mut order: Vec<String> = Vec::new();
    let mut by_type: BTreeMap<String, ByType> = BTreeMap::new();
    for (member, v) in values {
        let Some(items) = v.as_array() else {
            return Err((member, v));
        };
        for c in items {
            let text = |k: &str| c.get(k).and_then(Value::as_str);
            let (Some(ty), Some(status)) = (text("type"), text("status")) else {
                return Err((member, v));
            };
            let entry = by_type.entry(ty.to_owned()).or_insert_with(|| {
                order.push(ty.to_owned());
                ByType {
                    status: "True".to_owned(),
                    reason: String::new(),
                    not_true: Vec::new(),
                }
            });
            if status != "True" {
                if entry.not_true.is_empty() {
                    entry.status = status.to_owned();
                    entry.reason = text("reason").unwrap_or_default().to_owned();
                }
                let message = text("message").unwrap_or(status);
                entry.not_true.push(format!("{member}: {message}"));
            }
        }
    }
    let out = order
        .iter()
        .map(|ty| {
            let c = &by_type[ty];
            let mut cond = json!({"type": ty, "status": c.status});
            if !c.reason.is_empty() {
                cond["reason"] = json!(c.reason);
            }
            if !c.not_true.is_empty() {
                cond["message"] = json!(c.not_true.join("; "));
            }
            cond
        })
        .collect();
    Ok(Value::Array(out))
}
