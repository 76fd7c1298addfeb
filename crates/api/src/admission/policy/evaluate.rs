//! Judging one write by the ValidatingAdmissionPolicies that match it, as kube-apiserver's
//! validating policy dispatcher does: per policy and binding, resolve the params, evaluate
//! `variables` and `matchConditions`, then each validation; act on failures by the binding's
//! `validationActions`, and on errors by the policy's `failurePolicy`. The first denial refuses
//! the write, worded as kube words it.

use serde_json::{json, Map, Value};

use super::matching::resources_match;
use super::{Attributes, GROUP};
use crate::error::{ApiError, Result};
use crate::registry::Snapshot;
use crate::selector::LabelSelector;
use crate::Api;
use flotilla_cel::Var;

/// A denial: which policy and binding, why, with which Status reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Denial {
    pub policy: String,
    pub binding: String,
    pub message: String,
    pub reason: String,
}

/// The stored objects of one admissionregistration resource.
pub(crate) fn stored(api: &Api, snap: &Snapshot, plural: &str) -> Vec<Value> {
    let Some(res) = snap.get(GROUP, "v1", plural) else {
        return Vec::new();
    };
    let (objs, _, _) = api.cache.list(&res.key_prefix(None), None, None, |_| true);
    objs.iter().map(|o| o.value()).collect()
}

/// Judge the write `a`: Ok when admitted (warnings of Warn bindings raised on the way), the
/// first Deny otherwise.
pub(crate) fn validate(api: &Api, a: &Attributes<'_>) -> Result<()> {
    let snap = api.registry.snapshot();
    let policies = stored(api, &snap, "validatingadmissionpolicies");
    if policies.is_empty() {
        return Ok(());
    }
    let bindings = stored(api, &snap, "validatingadmissionpolicybindings");
    let params = |policy: &Value, binding: &Value| resolve_params(api, &snap, policy, binding, a);
    match judge(&policies, &bindings, a, params) {
        None => Ok(()),
        Some(d) => Err(denial_error(a, &d)),
    }
}

/// Params of a binding: one evaluation per param object (`[None]` without a paramKind), or an
/// error that configures the binding wrongly.
pub(crate) type Params = std::result::Result<Vec<Option<Value>>, String>;

/// The pure part of [`validate`]: the first denial of `policies` with their `bindings`, with
/// params from `params`. Warn and Audit decisions are raised and logged here.
pub(crate) fn judge(
    policies: &[Value],
    bindings: &[Value],
    a: &Attributes<'_>,
    mut params: impl FnMut(&Value, &Value) -> Params,
) -> Option<Denial> {
    let mut denials = Vec::new();
    for policy in policies {
        let spec = &policy["spec"];
        let pname = policy["metadata"]["name"].as_str().unwrap_or("");
        if !resources_match(&spec["matchConstraints"], a, true) {
            continue;
        }
        let fail = spec["failurePolicy"].as_str() != Some("Ignore");
        for binding in bindings {
            if binding["spec"]["policyName"].as_str() != Some(pname) {
                continue;
            }
            let mr = &binding["spec"]["matchResources"];
            if !mr.is_null() && !resources_match(mr, a, false) {
                continue;
            }
            let bname = binding["metadata"]["name"].as_str().unwrap_or("");
            let deny = |message: String, reason: &str| Denial {
                policy: pname.to_string(),
                binding: bname.to_string(),
                message,
                reason: reason.to_string(),
            };
            let config_error =
                |e: String| fail.then(|| deny(format!("failed to configure binding: {e}"), ""));
            let ps = match params(policy, binding) {
                Ok(ps) => ps,
                Err(e) => {
                    denials.extend(config_error(e));
                    continue;
                }
            };
            if ps.is_empty() {
                let action = binding["spec"]["paramRef"]["parameterNotFoundAction"].as_str();
                if action == Some("Deny") {
                    denials.extend(config_error(
                        "no params found for policy binding with `Deny` parameterNotFoundAction"
                            .into(),
                    ));
                }
                continue;
            }
            for p in &ps {
                for (message, reason) in failures(spec, a, p.as_ref(), fail) {
                    act(binding, pname, bname, &message);
                    if has_action(binding, "Deny") {
                        denials.push(deny(message, &reason));
                    }
                }
            }
        }
    }
    denials.into_iter().next()
}

fn has_action(binding: &Value, action: &str) -> bool {
    binding["spec"]["validationActions"]
        .as_array()
        .is_some_and(|l| l.iter().any(|x| x == action))
}

/// The Warn and Audit parts of a binding's actions for one failed validation.
fn act(binding: &Value, policy: &str, name: &str, message: &str) {
    if has_action(binding, "Warn") {
        crate::admission::scope::warn(format!(
            "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{name}': {message}"
        ));
    }
    if has_action(binding, "Audit") {
        tracing::info!(
            policy,
            binding = name,
            message,
            "validating admission policy audit"
        );
    }
}

/// The failures of one policy for one param: `(message, reason)` per failed validation (and
/// per error, when the failure policy is Fail). Empty when a match condition is false.
fn failures(
    spec: &Value,
    a: &Attributes<'_>,
    param: Option<&Value>,
    fail: bool,
) -> Vec<(String, String)> {
    let null = Value::Null;
    let request = a.request_json();
    let mut variables = Map::new();
    let mut out = Vec::new();
    // Variables in order, each seeing those before it; one that fails is left out, so the
    // expressions reading it fail in turn.
    for v in spec["variables"].as_array().into_iter().flatten() {
        let (Some(name), Some(src)) = (v["name"].as_str(), v["expression"].as_str()) else {
            continue;
        };
        let so_far = Value::Object(variables.clone());
        let value = flotilla_cel::compile(src)
            .and_then(|e| e.eval(&bindings(a, param, &request, &so_far, &null)));
        if let Ok(value) = value {
            variables.insert(name.to_string(), value);
        }
    }
    let vars_json = Value::Object(variables);
    let vars = bindings(a, param, &request, &vars_json, &null);
    for c in spec["matchConditions"].as_array().into_iter().flatten() {
        let src = c["expression"].as_str().unwrap_or("");
        match flotilla_cel::compile(src).and_then(|e| e.eval_bool(&vars)) {
            Ok(true) => {}
            Ok(false) => return Vec::new(),
            Err(e) if fail => {
                let name = c["name"].as_str().unwrap_or("");
                out.push((
                    format!("failed to evaluate match condition '{name}': {e}"),
                    String::new(),
                ));
                return out;
            }
            Err(_) => return Vec::new(),
        }
    }
    for v in spec["validations"].as_array().into_iter().flatten() {
        let src = v["expression"].as_str().unwrap_or("");
        let reason = v["reason"].as_str().unwrap_or("").to_string();
        match flotilla_cel::compile(src).and_then(|e| e.eval_bool(&vars)) {
            Ok(true) => {}
            Ok(false) => out.push((message(v, &vars), reason)),
            Err(e) if fail => {
                out.push((format!("expression '{src}' resulted in error: {e}"), reason))
            }
            Err(_) => {}
        }
    }
    out
}

/// The CEL variables of a policy's expressions.
fn bindings<'v>(
    a: &'v Attributes<'_>,
    param: Option<&'v Value>,
    request: &'v Value,
    variables: &'v Value,
    null: &'v Value,
) -> Vec<(&'static str, Var<'v>)> {
    vec![
        ("object", Var::Json(a.object.unwrap_or(null))),
        ("oldObject", Var::Json(a.old_object.unwrap_or(null))),
        ("request", Var::Json(request)),
        ("params", Var::Json(param.unwrap_or(null))),
        (
            "namespaceObject",
            Var::Json(a.namespace_object.unwrap_or(null)),
        ),
        ("variables", Var::Json(variables)),
    ]
}

/// A failed validation's message: its messageExpression's result when that is a non-empty
/// single line, else its message, else kube's `failed expression: …`.
fn message(v: &Value, vars: &[(&str, Var<'_>)]) -> String {
    if let Some(src) = v["messageExpression"].as_str() {
        match flotilla_cel::compile(src).and_then(|e| e.eval_string(vars)) {
            Ok(m) if !m.trim().is_empty() && !m.contains('\n') => return m.trim().to_string(),
            Ok(_) => {}
            Err(e) => tracing::debug!(expression = src, error = %e, "messageExpression failed"),
        }
    }
    match v["message"].as_str() {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => format!(
            "failed expression: {}",
            v["expression"].as_str().unwrap_or("").trim()
        ),
    }
}

/// The params a binding names for this request.
fn resolve_params(
    api: &Api,
    snap: &Snapshot,
    policy: &Value,
    binding: &Value,
    a: &Attributes<'_>,
) -> Params {
    let kind = &policy["spec"]["paramKind"];
    if kind.is_null() {
        return Ok(vec![None]);
    }
    let api_version = kind["apiVersion"].as_str().unwrap_or("");
    let kind_name = kind["kind"].as_str().unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let res = snap
        .by_kind(group, kind_name)
        .filter(|r| r.version == version || snap.get(group, version, &r.plural).is_some())
        .ok_or_else(|| {
            format!("failed to find resource referenced by paramKind: '{api_version}, Kind={kind_name}'")
        })?;
    let pref = &binding["spec"]["paramRef"];
    if pref.is_null() {
        return Err(format!(
            "paramKind kind `{kind_name}` is set but paramRef is not set"
        ));
    }
    let ns = match pref["namespace"].as_str() {
        Some(ns) if !ns.is_empty() => Some(ns),
        _ if res.namespaced && a.namespace.is_empty() => {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into())
        }
        _ if res.namespaced => Some(a.namespace),
        _ => None,
    };
    if let Some(name) = pref["name"].as_str().filter(|n| !n.is_empty()) {
        return Ok(api
            .cache
            .get(&res.key(ns, name))
            .map(|o| vec![Some(o.value())])
            .unwrap_or_default());
    }
    let sel = LabelSelector::from_json(&pref["selector"]).map_err(|e| e.to_string())?;
    let (objs, _, _) = api.cache.list(&res.key_prefix(ns), None, None, |_| true);
    Ok(objs
        .iter()
        .map(|o| o.value())
        .filter(|o| sel.matches_object(o))
        .map(Some)
        .collect())
}

/// The Status kube-apiserver answers a denial with: `<resource> "<name>" is forbidden:
/// ValidatingAdmissionPolicy '…' with binding '…' denied request: …`, the code of the
/// validation's reason (422 Invalid when it gives none).
pub(crate) fn denial_error(a: &Attributes<'_>, d: &Denial) -> ApiError {
    let message = format!(
        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
        d.policy, d.binding, d.message
    );
    let (code, reason) = match d.reason.as_str() {
        "Forbidden" => (403, "Forbidden"),
        "Unauthorized" => (401, "Unauthorized"),
        "RequestEntityTooLarge" => (413, "RequestEntityTooLarge"),
        _ => (422, "Invalid"),
    };
    forbidden_style(a, code, reason, message)
}

/// kube's `admission.NewForbidden` wording with another code and reason: the object's name (or
/// its generateName) after the resource.
pub(crate) fn forbidden_style(
    a: &Attributes<'_>,
    code: u16,
    reason: &'static str,
    message: String,
) -> ApiError {
    let generate = a
        .object
        .and_then(|o| o.pointer("/metadata/generateName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let name = if a.name.is_empty() { generate } else { a.name };
    let gr = a.res.group_resource();
    let full = if name.is_empty() {
        format!("{gr} is forbidden: {message}")
    } else {
        format!("{gr} \"{name}\" is forbidden: {message}")
    };
    let mut e = ApiError::new(code, reason, full);
    e.details = Some(json!({
        "name": name,
        "group": a.res.group,
        "kind": a.res.plural,
        "causes": [{"message": message}],
    }));
    e
}
