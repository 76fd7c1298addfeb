//! The CEL rules of a CRD's schema (`x-kubernetes-validations`), evaluated as
//! apiextensions-apiserver evaluates them: each rule at the node that declares it, with `self`
//! bound to the value there and, for a transition rule (one that reads `oldSelf`), `oldSelf`
//! bound to the stored object's value at the same place — a transition rule runs only on an
//! update where that old value exists (or, with `optionalOldSelf`, also where it does not,
//! `oldSelf` then an optional). A rule that does not hold is a cause worded as kube's
//! (`spec: Invalid value: "object": <message>`), its `message`, `messageExpression`, `reason`
//! and `fieldPath` honoured. The expressions are [`flotilla_cel`]'s, compiled once.

mod crd;
pub mod types;

use serde_json::{Map, Value};

use flotilla_cel::cost::Shape;
use flotilla_cel::Var;

use crate::schema::Snapshot;

use super::keywords::Causes;
pub use crd::{budget_message, crd_causes, crd_causes_since};

/// kube-apiserver's limit on what one evaluation of a rule may cost.
const CALL_LIMIT: u64 = 1_000_000;
/// kube-apiserver's limit on what all rules' evaluations on one object may cost.
const OBJECT_BUDGET: u64 = 10_000_000;

/// Which rules a walk evaluates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rules {
    /// Every rule that needs no old value (`old` is ignored): an update's merged object.
    Plain,
    /// As [`Rules::Plain`], and the transition rules with `optionalOldSelf` (`oldSelf` none):
    /// a create.
    Create,
    /// Only transition rules, where `old` has a value (or, with `optionalOldSelf`, where it
    /// may not): an update's new object against the stored one.
    Transitions,
}

/// The causes of the rules under `schema` that `new` breaks (against `old`, for transitions).
pub fn check(schema: &Value, new: &Value, old: Option<&Value>, which: Rules) -> Causes {
    check_if(has_rules(schema), schema, new, old, which)
}

/// Whether the schema of definition `root` has rules: learned once per schema snapshot
/// ([`Snapshot::derived`]), not walked for on every write of its kind.
pub fn ruled(snapshot: &Snapshot, root: &str) -> bool {
    snapshot
        .derived("rules", root, |s| has_rules(s).then_some(Value::Bool(true)))
        .is_some()
}

/// [`check`] of a schema that `ruled` says has rules or not ([`ruled`]).
pub fn check_if(
    ruled: bool,
    schema: &Value,
    new: &Value,
    old: Option<&Value>,
    which: Rules,
) -> Causes {
    let mut causes = Vec::new();
    // Most schemas have no rules (Works, bindings): their objects are not walked at all.
    if !ruled {
        return causes;
    }
    walk(
        schema,
        new,
        old,
        "",
        which,
        &mut causes,
        &mut Some(OBJECT_BUDGET),
    );
    causes
}

/// Whether `schema` or any schema inside it has `x-kubernetes-validations`.
fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(s) => s
            .iter()
            .any(|(k, v)| k == "x-kubernetes-validations" || has_rules(v)),
        Value::Array(items) => items.iter().any(has_rules),
        _ => false,
    }
}

fn walk(
    schema: &Value,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    which: Rules,
    causes: &mut Causes,
    budget: &mut Option<u64>,
) {
    let Some(s) = schema.as_object() else { return };
    if let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) {
        for rule in rules.iter().filter_map(Value::as_object) {
            evaluate(s, rule, v, old, path, which, causes, budget);
        }
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Object(o) => {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, p) in props {
                    if let Some(child) = o.get(k) {
                        let was = old.and_then(|x| x.get(k));
                        walk(p, child, was, &join(k), which, causes, budget);
                    }
                }
            }
            if let Some(add) = s.get("additionalProperties").filter(|a| a.is_object()) {
                for (k, child) in o {
                    let was = old.and_then(|x| x.get(k));
                    walk(
                        add,
                        child,
                        was,
                        &format!("{path}[{k}]"),
                        which,
                        causes,
                        budget,
                    );
                }
            }
        }
        Value::Array(items) => {
            let Some(item) = s.get("items") else { return };
            for (i, x) in items.iter().enumerate() {
                let was = old.and_then(|o| correlated(s, x, o));
                walk(item, x, was, &format!("{path}[{i}]"), which, causes, budget);
            }
        }
        _ => {}
    }
}

/// The old item a new list item is the same as, where kube correlates them: a `map` list's
/// item with the same keys, a `set` list's equal item; items of atomic lists have none.
fn correlated<'a>(s: &Map<String, Value>, item: &Value, old: &'a Value) -> Option<&'a Value> {
    let olds = old.as_array()?;
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => olds.iter().find(|o| *o == item),
        Some("map") => {
            let keys = s.get("x-kubernetes-list-map-keys")?.as_array()?;
            let same = |o: &Value| {
                keys.iter()
                    .filter_map(Value::as_str)
                    .all(|k| o.get(k) == item.get(k))
            };
            olds.iter().find(|o| same(o))
        }
        _ => None,
    }
}

/// `budget` is what the object's rules may still cost; `None` once a rule has stopped them
/// (as kube-apiserver runs no further rule past a cost limit).
#[allow(clippy::too_many_arguments)]
fn evaluate(
    s: &Map<String, Value>,
    rule: &Map<String, Value>,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    which: Rules,
    causes: &mut Causes,
    budget: &mut Option<u64>,
) {
    let Some(left) = *budget else { return };
    let text = |k: &str| rule.get(k).and_then(Value::as_str).map(str::trim);
    let Some(source) = text("rule") else { return };
    // A rule that does not compile is refused with its CRD; one stored before that stays inert.
    let Ok(expr) = flotilla_cel::compile(source) else {
        return;
    };
    let transition = expr.uses("oldSelf");
    let optional = rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
    let vars: Vec<(&str, Var<'_>)> = match (which, transition, old) {
        (Rules::Plain | Rules::Create, false, _) => vec![("self", v.into())],
        // optionalOldSelf: the rule also runs where there is no old value, oldSelf an optional.
        (Rules::Create, true, _) | (Rules::Transitions, true, None) if optional => {
            vec![("self", v.into()), ("oldSelf", Var::Optional(None))]
        }
        (Rules::Transitions, true, Some(was)) if optional => {
            vec![("self", v.into()), ("oldSelf", Var::Optional(Some(was)))]
        }
        (Rules::Transitions, true, Some(was)) => vec![("self", v.into()), ("oldSelf", was.into())],
        _ => return,
    };
    let schema_type = s.get("type").and_then(Value::as_str).unwrap_or("");
    let at = match text("fieldPath").map(|f| f.trim_start_matches('.')) {
        Some(f) if !f.is_empty() && path.is_empty() => f.to_owned(),
        Some(f) if !f.is_empty() => format!("{path}.{f}"),
        _ if path.is_empty() => "<nil>".to_owned(),
        _ => path.to_owned(),
    };
    let shown_rule = text("message").filter(|m| !m.is_empty()).unwrap_or(source);
    // What this evaluation would cost, from the values it reads (cel-go stops at the limit).
    let shape = Shape::of(v);
    let old_shape = old.map(Shape::of).unwrap_or(Shape::Scalar);
    let cost = expr.estimated_cost(&[("self", &shape), ("oldSelf", &old_shape)]);
    if cost > CALL_LIMIT {
        causes.push((
            path_or_nil(path),
            format!("Invalid value: \"{schema_type}\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {shown_rule}"),
        ));
        *budget = None;
        return;
    }
    if cost > left {
        causes.push((
            path_or_nil(path),
            format!("Invalid value: \"{schema_type}\": validation failed due to running out of cost budget, no further validation rules will be run"),
        ));
        *budget = None;
        return;
    }
    *budget = Some(left - cost);
    let held = match expr.eval_bool(&vars) {
        Ok(held) => held,
        // A function this CEL lacks, or a macro it does not expand (the two-variable
        // comprehensions: `all(i, v, …)` reads `i` as a variable): only self and oldSelf are
        // variables of a rule, so any other undeclared name is that.
        Err(e)
            if expr.missing_function(&e).is_some()
                || e.starts_with("Undeclared reference to '") =>
        {
            unsupported(source, &e);
            return;
        }
        Err(e) => {
            let detail = format!("{e} evaluating rule: {shown_rule}");
            causes.push((
                path_or_nil(path),
                format!("Invalid value: \"{schema_type}\": {detail}"),
            ));
            return;
        }
    };
    if held {
        return;
    }
    let default = match text("message").filter(|m| !m.is_empty()) {
        Some(m) => m.to_owned(),
        None => format!("failed rule: {source}"),
    };
    let message = text("messageExpression")
        .and_then(|m| flotilla_cel::compile(m).ok())
        .and_then(|m| m.eval_string(&vars).ok())
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty() && !m.contains('\n'))
        .unwrap_or(default);
    let body = match text("reason") {
        Some("FieldValueForbidden") => format!("Forbidden: {message}"),
        Some("FieldValueRequired") => format!("Required value: {message}"),
        Some("FieldValueDuplicate") => format!("Duplicate value: \"{schema_type}\""),
        _ => format!("Invalid value: \"{schema_type}\": {message}"),
    };
    causes.push((at, body));
}

/// A rule that calls one of Kubernetes' own CEL functions flotilla's CEL lacks is inert rather
/// than a refusal of every object (kube-apiserver would evaluate it; the members, which have
/// the CRD too, still do): said once per rule in the log.
fn unsupported(source: &str, err: &str) {
    static SAID: std::sync::OnceLock<parking_lot::Mutex<std::collections::HashSet<String>>> =
        std::sync::OnceLock::new();
    let mut said = SAID.get_or_init(Default::default).lock();
    if said.len() < 1024 && said.insert(source.to_owned()) {
        tracing::warn!(
            rule = source,
            error = err,
            "CRD validation rule not enforced: its function is not supported"
        );
    }
}

/// kube prints the root's (nil) field path as `<nil>`.
fn path_or_nil(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_owned()
    } else {
        path.to_owned()
    }
}

#[cfg(test)]
mod tests;
