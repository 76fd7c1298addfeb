//! Which writes a policy, a binding or a webhook is about: kube-apiserver's admission matchers
//! (rules with operations, groups, versions, resources and subresources, resource names and
//! scope; a namespace selector judged on the namespace's labels; an object selector judged on
//! the new or the old object's labels), shared by ValidatingAdmissionPolicies and webhooks.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Attributes;
use crate::selector::LabelSelector;

/// Does `list` (a rule's `operations`, `apiGroups`, …) hold `want` or `*`? An absent list holds
/// nothing.
fn holds(list: &Value, want: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|v| v == "*" || v == want))
}

/// Does a rule's `resources` entry name this resource and subresource? `*` is every resource
/// (not their subresources), `*/*` everything, `r/*` every subresource of r, `*/s` subresource
/// s of every resource.
fn resource_matches(entry: &str, resource: &str, sub: &str) -> bool {
    let (res, s) = entry.split_once('/').unwrap_or((entry, ""));
    let res_ok = res == "*" || res == resource;
    let sub_ok = s == sub || (s == "*" && entry != "*");
    res_ok && sub_ok && (entry != "*" || sub.is_empty())
}

/// Does one rule (`RuleWithOperations`, or `NamedRuleWithOperations` with `resourceNames`)
/// match the request?
pub(crate) fn rule_matches(rule: &Value, a: &Attributes<'_>) -> bool {
    rule_matches_at(rule, a, &a.res.version)
}

/// [`rule_matches`] for the resource served at `version`.
fn rule_matches_at(rule: &Value, a: &Attributes<'_>, version: &str) -> bool {
    if !holds(&rule["operations"], a.operation)
        || !holds(&rule["apiGroups"], &a.res.group)
        || !holds(&rule["apiVersions"], version)
    {
        return false;
    }
    let sub = a.subresource.unwrap_or("");
    let resources = rule["resources"].as_array();
    if !resources.is_some_and(|l| {
        l.iter()
            .filter_map(Value::as_str)
            .any(|e| resource_matches(e, &a.res.plural, sub))
    }) {
        return false;
    }
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Cluster" => !a.res.namespaced,
        "Namespaced" => a.res.namespaced,
        _ => true,
    };
    if !scope_ok {
        return false;
    }
    match rule["resourceNames"].as_array() {
        Some(names) if !names.is_empty() => names.iter().any(|n| n == a.name),
        _ => true,
    }
}

/// Does any of `rules` match? With `matchPolicy: Equivalent` (the default) a rule naming the
/// resource at another version the hub serves it in matches too, as kube matches equivalent
/// requests (`autoscaling/v1` and `v2` HorizontalPodAutoscalers).
pub(crate) fn any_rule_matches(rules: &Value, match_policy: &Value, a: &Attributes<'_>) -> bool {
    let rules = rules.as_array().map(Vec::as_slice).unwrap_or_default();
    if rules.iter().any(|r| rule_matches(r, a)) {
        return true;
    }
    match_policy.as_str() != Some("Exact")
        && a.equivalent_versions
            .iter()
            .any(|v| rules.iter().any(|r| rule_matches_at(r, a, v)))
}

/// The labels a namespace selector is judged on: the namespace object's own for a namespace,
/// none for another cluster-scoped object (which every namespace selector matches), else the
/// labels of the namespace the object is in.
fn namespace_matches(selector: &Value, a: &Attributes<'_>) -> bool {
    let sel = match selector {
        Value::Null => return true,
        s => match LabelSelector::from_json(s) {
            Ok(sel) => sel,
            Err(_) => return false,
        },
    };
    if sel.is_everything() {
        return true;
    }
    if a.res.group.is_empty() && a.res.plural == "namespaces" {
        let own = a.object.or(a.old_object).unwrap_or(&Value::Null);
        return sel.matches_object(own);
    }
    if !a.res.namespaced {
        return true;
    }
    match a.namespace_object {
        Some(ns) => sel.matches_object(ns),
        None => sel.matches(&BTreeMap::<String, String>::new()),
    }
}

/// An object selector matches when the new or the old object's labels satisfy it.
fn object_matches(selector: &Value, a: &Attributes<'_>) -> bool {
    let sel = match selector {
        Value::Null => return true,
        s => match LabelSelector::from_json(s) {
            Ok(sel) => sel,
            Err(_) => return false,
        },
    };
    if sel.is_everything() {
        return true;
    }
    [a.object, a.old_object]
        .into_iter()
        .flatten()
        .any(|o| sel.matches_object(o))
}

/// Do the selectors of a webhook or `matchResources` (`namespaceSelector`, `objectSelector`)
/// admit the request?
pub(crate) fn selectors_match(m: &Value, a: &Attributes<'_>) -> bool {
    namespace_matches(&m["namespaceSelector"], a) && object_matches(&m["objectSelector"], a)
}

/// Does a policy's `matchConstraints` or a binding's `matchResources` match? With `resourceRules`
/// absent (a binding that narrows by selectors only) every resource is in.
pub(crate) fn resources_match(m: &Value, a: &Attributes<'_>, rules_required: bool) -> bool {
    if !selectors_match(m, a) {
        return false;
    }
    if any_rule_matches(&m["excludeResourceRules"], &m["matchPolicy"], a) {
        return false;
    }
    match m["resourceRules"].as_array() {
        Some(rs) if !rs.is_empty() => any_rule_matches(&m["resourceRules"], &m["matchPolicy"], a),
        _ => !rules_required,
    }
}
