//! A CRD's rules judged when the CRD is written, as kube-apiserver judges them: each
//! `x-kubernetes-validations` rule must parse, type-check against the schema at its node (a
//! field the schema lacks is `undefined field 'z'`), be a `bool` (its `messageExpression` a
//! `string`), and fit the cost budget — 10,000,000 units per rule, counted as many times as
//! the rule can run (the product of the enclosing lists' and maps' bounds), and 100,000,000
//! for the whole schema. `optionalOldSelf` needs a rule that reads `oldSelf`, and `oldSelf`
//! cannot be read under an atomic list (whose items are not correlated). Causes are worded and
//! placed as kube's (422 with the CRD).

mod fields;

use std::collections::HashMap;

use flotilla_cel::typecheck::{check_typed, Type};
use serde_json::Value;

use super::super::keywords::Causes;
use super::types::{min_size, shape_of, type_of, SchemaFields, MAX_REQUEST_BYTES};

/// kube's per-rule static cost limit.
const RULE_LIMIT: u64 = 10_000_000;
/// kube's limit for the sum of a schema's rule costs.
const CRD_LIMIT: u64 = 100_000_000;

/// Every cause a CRD's schemas give (rules, and `uniqueItems: true`, which kube forbids).
pub fn crd_causes(crd: &Value) -> Causes {
    let mut causes = Vec::new();
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
    for (i, v) in versions.into_iter().flatten().enumerate() {
        if let Some(schema) = v.pointer("/schema/openAPIV3Schema") {
            let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
            let mut w = Walk {
                schema,
                causes: &mut causes,
                total: 0,
                expensive: Vec::new(),
            };
            w.node(schema, "", &path, true, Some(1), None);
            let (total, mut expensive) = (w.total, w.expensive);
            if total > CRD_LIMIT {
                expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
                for (at, _) in expensive.into_iter().take(4) {
                    causes.push((at, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema".into()));
                }
                let msg = budget_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    total,
                    CRD_LIMIT,
                );
                causes.push((path, format!("Forbidden: {msg}")));
            }
        }
    }
    causes
}

/// The causes a write of `crd` brings: on an update (`old` given), a cause the stored CRD had
/// already is not repeated, so the CRD's own status and finalizer writes, and CRDs stored
/// before a check existed, stay writable (as kube-apiserver ratchets the cost of unchanged
/// schemas).
pub fn crd_causes_since(old: Option<&Value>, crd: &Value) -> Causes {
    let new = crd_causes(crd);
    match old {
        Some(old) if !new.is_empty() => {
            let before = crd_causes(old);
            new.into_iter().filter(|c| !before.contains(c)).collect()
        }
        _ => new,
    }
}

/// kube's wording of a cost over its limit.
pub fn budget_message(what: &str, cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    let factor = if f > 100.0 {
        "more than 100x".to_owned()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    };
    format!("{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
}

struct Walk<'a> {
    schema: &'a Value,
    causes: &'a mut Causes,
    total: u64,
    /// Rules costing at least 1% of the schema's limit, for the message when it is exceeded.
    expensive: Vec<(String, u64)>,
}

impl Walk<'_> {
    /// `at` is the node's JSON pointer in the schema, `path` its field path in the CRD,
    /// `card` how many times it can occur (None: unbounded), `atomic` the path of the atomic
    /// list it is under.
    fn node(
        &mut self,
        s: &Value,
        at: &str,
        path: &str,
        root: bool,
        card: Option<u64>,
        atomic: Option<&str>,
    ) {
        let Some(o) = s.as_object() else { return };
        if o.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
            self.causes.push((
                format!("{path}.uniqueItems"),
                "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic".into(),
            ));
        }
        let rules = o.get("x-kubernetes-validations").and_then(Value::as_array);
        for (j, rule) in rules.into_iter().flatten().enumerate() {
            let rule_path = format!("{path}.x-kubernetes-validations[{j}]");
            let wrong = fields::causes(s, rule, &rule_path);
            // As kube: a rule whose fields are wrong is not compiled.
            if wrong.is_empty() {
                self.rule(s, rule, at, &rule_path, root, card, atomic);
            }
            self.causes.extend(wrong);
        }
        let bound = |k: &str| o.get(k).and_then(Value::as_u64);
        let times = |n: Option<u64>| match (card, n) {
            (Some(c), Some(n)) => Some(c.saturating_mul(n)),
            _ => None,
        };
        if let Some(props) = o.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                let ptr = format!(
                    "{at}/properties/{}",
                    k.replace('~', "~0").replace('/', "~1")
                );
                let embedded = p.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
                self.node(
                    p,
                    &ptr,
                    &format!("{path}.properties[{k}]"),
                    embedded,
                    card,
                    atomic,
                );
            }
        }
        if let Some(items) = o.get("items") {
            let list_type = o.get("x-kubernetes-list-type").and_then(Value::as_str);
            let atomic_here = !matches!(list_type, Some("map" | "set"));
            let under = if atomic_here { Some(path) } else { atomic };
            let embedded = items.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
            let child_card = times(bound("maxItems"));
            self.node(
                items,
                &format!("{at}/items"),
                &format!("{path}.items"),
                embedded,
                child_card,
                under,
            );
        }
        if let Some(add) = o.get("additionalProperties").filter(|a| a.is_object()) {
            let embedded = add.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
            let child_card = times(bound("maxProperties"));
            self.node(
                add,
                &format!("{at}/additionalProperties"),
                &format!("{path}.additionalProperties"),
                embedded,
                child_card,
                atomic,
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rule(
        &mut self,
        s: &Value,
        rule: &Value,
        at: &str,
        path: &str,
        root: bool,
        card: Option<u64>,
        atomic: Option<&str>,
    ) {
        let text = |k: &str| rule.get(k).and_then(Value::as_str).unwrap_or("");
        let optional = rule.get("optionalOldSelf").and_then(Value::as_bool);
        let source = text("rule");
        // kube prints the rule as Go's %#v of apiextensions.ValidationRule.
        let shown = format!(
            "apiextensions.ValidationRule{{Rule:{:?}, Message:{:?}, MessageExpression:{:?}, Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:{:?}, OptionalOldSelf:{}}}",
            source,
            text("message"),
            text("messageExpression"),
            text("fieldPath"),
            match optional {
                Some(_) => "(*bool)(0xc000000001)".to_owned(),
                None => "(*bool)(nil)".to_owned(),
            }
        );
        let self_type = type_of(s, at, root);
        let old_type = if optional == Some(true) {
            Type::Dyn
        } else {
            self_type.clone()
        };
        let vars: HashMap<String, Type> = [
            ("self".to_owned(), self_type),
            ("oldSelf".to_owned(), old_type),
        ]
        .into();
        let fields = SchemaFields { root: self.schema };
        let shape = shape_of(s, root);
        let shapes = [("self", &shape), ("oldSelf", &shape)];
        match flotilla_cel::compile(source) {
            Err(e) => self.causes.push((
                format!("{path}.rule"),
                format!("Invalid value: {shown}: compilation failed: {e}"),
            )),
            Ok(expr) => {
                let (t, errors) = check_typed(source, &vars, &fields);
                if !errors.is_empty() {
                    self.causes.push((
                        format!("{path}.rule"),
                        format!(
                            "Invalid value: {shown}: compilation failed: {}",
                            errors.join("\n")
                        ),
                    ));
                } else if !matches!(t, Type::Bool | Type::Dyn) {
                    self.causes.push((
                        format!("{path}.rule"),
                        format!("Invalid value: {shown}: cel expression must evaluate to a bool"),
                    ));
                }
                let once = expr.estimated_cost(&shapes);
                // Unbounded above: as many times as values of this node fit in a request.
                let times = card.unwrap_or(MAX_REQUEST_BYTES / (min_size(s) + 1));
                let cost = once.saturating_mul(times);
                if cost > RULE_LIMIT {
                    let msg = budget_message("estimated rule cost", cost, RULE_LIMIT);
                    self.causes
                        .push((format!("{path}.rule"), format!("Forbidden: {msg}")));
                }
                self.observe(&format!("{path}.rule"), cost);
                let uses_old = expr.uses("oldSelf");
                match (uses_old, atomic, optional) {
                    (true, Some(list), _) => self.causes.push((
                        format!("{path}.rule"),
                        format!("Invalid value: {source:?}: oldSelf cannot be used on the uncorrelatable portion of the schema within {list}"),
                    )),
                    (false, _, Some(b)) => self.causes.push((
                        format!("{path}.optionalOldSelf"),
                        format!("Invalid value: {b}: may not be set if oldSelf is not used in rule"),
                    )),
                    _ => {}
                }
            }
        }
        let message_expr = text("messageExpression");
        if message_expr.is_empty() {
            return;
        }
        let at_msg = format!("{path}.messageExpression");
        match flotilla_cel::compile(message_expr) {
            Err(e) => self.causes.push((
                at_msg,
                format!("Invalid value: {shown}: messageExpression compilation failed: {e}"),
            )),
            Ok(expr) => {
                let (t, errors) = check_typed(message_expr, &vars, &fields);
                if !errors.is_empty() {
                    self.causes.push((
                        at_msg.clone(),
                        format!(
                            "Invalid value: {shown}: messageExpression compilation failed: {}",
                            errors.join("\n")
                        ),
                    ));
                } else if !matches!(t, Type::String | Type::Dyn) {
                    self.causes.push((
                        at_msg.clone(),
                        format!(
                            "Invalid value: {shown}: messageExpression must evaluate to a string"
                        ),
                    ));
                }
                let cost = expr.estimated_cost(&shapes);
                if cost > RULE_LIMIT {
                    let msg = budget_message("estimated messageExpression cost", cost, RULE_LIMIT);
                    self.causes
                        .push((at_msg.clone(), format!("Forbidden: {msg}")));
                }
                self.observe(&at_msg, cost);
            }
        }
    }

    fn observe(&mut self, path: &str, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost >= CRD_LIMIT / 100 {
            self.expensive.push((path.to_owned(), cost));
        }
    }
}

#[cfg(test)]
mod tests;
