//! The authorization reviews: a review's spec read as the authorizer's [`Attributes`], checked
//! as kube-apiserver's validation checks it, and the decision or the rules written back in
//! `status` the way `kubectl auth can-i` reads them.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{json, Map, Value};

use super::Review;
use crate::auth::{Attributes, Decision, UserInfo};
use crate::error::{ApiError, Result};

type Causes = Vec<(String, String)>;

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// A field present and not null.
fn given<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// Is a metadata value what Go's zero value would encode (absent, null, empty)?
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(b) => !b,
    }
}

/// The metadata fields other than `except` (and managedFields, which the check ignores) are
/// all empty, as the review kinds require.
fn metadata_empty(body: &Value, except: &[&str]) -> bool {
    body.get("metadata")
        .and_then(Value::as_object)
        .is_none_or(|m| {
            m.iter()
                .all(|(k, v)| k == "managedFields" || except.contains(&k.as_str()) || is_zero(v))
        })
}

/// `ValidateSubjectAccessReviewSpec` and its self/local variants, then the attributes to ask
/// about: the caller for a self review, the spec's user otherwise. A LocalSubjectAccessReview
/// takes the request's namespace when its metadata names none.
pub(super) fn attributes(
    review: Review,
    body: &mut Value,
    caller: &UserInfo,
    namespace: Option<&str>,
) -> Result<Attributes> {
    if review == Review::LocalSubjectAccess {
        let ns = namespace.unwrap_or("");
        let given_ns = body.pointer("/metadata/namespace").and_then(Value::as_str);
        match given_ns {
            None | Some("") => {
                if !body.get("metadata").is_some_and(Value::is_object) {
                    body["metadata"] = json!({});
                }
                body["metadata"]["namespace"] = Value::from(ns);
            }
            Some(n) if n != ns => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on \
                     the request",
                ))
            }
            Some(_) => {}
        }
    }
    let spec = body.get("spec").cloned().unwrap_or(Value::Null);
    let causes = spec_causes(review, body, &spec);
    if !causes.is_empty() {
        return Err(review.invalid(causes));
    }
    if review == Review::LocalSubjectAccess {
        let ns = namespace.unwrap_or("");
        let asked = spec
            .pointer("/resourceAttributes/namespace")
            .and_then(Value::as_str);
        if asked.unwrap_or("") != ns {
            return Err(ApiError::bad_request(format!(
                "spec.resourceAttributes.namespace must match namespace: {ns}"
            )));
        }
    }
    let user = match review {
        Review::SelfSubjectAccess => caller.clone(),
        _ => subject_user(&spec),
    };
    Ok(match given(&spec, "resourceAttributes") {
        Some(r) => {
            let mut a =
                Attributes::resource(user, text(r, "verb"), text(r, "group"), text(r, "resource"))
                    .in_namespace(text(r, "namespace"))
                    .named(text(r, "name"));
            a.subresource = text(r, "subresource").to_string();
            a
        }
        None => {
            let n = given(&spec, "nonResourceAttributes").unwrap_or(&Value::Null);
            Attributes::non_resource(user, text(n, "verb"), text(n, "path"))
        }
    })
}

/// The user a (local) SubjectAccessReview asks about, exactly as given: no group is added.
fn subject_user(spec: &Value) -> UserInfo {
    let mut extra = BTreeMap::new();
    if let Some(m) = spec.get("extra").and_then(Value::as_object) {
        for (k, v) in m {
            extra.insert(k.clone(), strings(Some(v)));
        }
    }
    UserInfo {
        name: text(spec, "user").to_string(),
        uid: text(spec, "uid").to_string(),
        groups: strings(spec.get("groups")),
        extra,
    }
}

fn spec_causes(review: Review, body: &Value, spec: &Value) -> Causes {
    let mut causes = Causes::new();
    let resource = given(spec, "resourceAttributes");
    let non_resource = given(spec, "nonResourceAttributes");
    match (resource, non_resource) {
        (Some(_), Some(n)) => causes.push((
            "spec.nonResourceAttributes".into(),
            format!(
                "Invalid value: {}: cannot be specified in combination with resourceAttributes",
                compact(n)
            ),
        )),
        (None, None) => causes.push((
            "spec.resourceAttributes".into(),
            "Invalid value: \"null\": exactly one of nonResourceAttributes or \
             resourceAttributes must be specified"
                .into(),
        )),
        _ => {}
    }
    if review != Review::SelfSubjectAccess
        && text(spec, "user").is_empty()
        && strings(spec.get("groups")).is_empty()
    {
        causes.push((
            "spec.user".into(),
            "Invalid value: \"\": at least one of user or group must be specified".into(),
        ));
    }
    if let Some(r) = resource {
        selector_causes(r, "fieldSelector", &mut causes);
        selector_causes(r, "labelSelector", &mut causes);
    }
    match review {
        Review::LocalSubjectAccess => {
            if !metadata_empty(body, &["namespace"]) {
                causes.push((
                    "metadata".into(),
                    "Invalid value: \"\": must be empty except for namespace".into(),
                ));
            }
            let ns = body
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(r) = resource.filter(|r| text(r, "namespace") != ns) {
                causes.push((
                    "spec.resourceAttributes.namespace".into(),
                    format!(
                        "Invalid value: {:?}: must match metadata.namespace",
                        text(r, "namespace")
                    ),
                ));
            }
            if non_resource.is_some() {
                causes.push((
                    "spec.nonResourceAttributes".into(),
                    "Invalid value: \"\": disallowed on this kind of request".into(),
                ));
            }
        }
        _ if !metadata_empty(body, &[]) => {
            causes.push((
                "metadata".into(),
                "Invalid value: \"\": must be empty".into(),
            ));
        }
        _ => {}
    }
    causes
}

/// A selector attribute gives exactly one of `rawSelector` and `requirements`.
fn selector_causes(attrs: &Value, key: &str, causes: &mut Causes) {
    let Some(sel) = given(attrs, key) else {
        return;
    };
    let path = format!("spec.resourceAttributes.{key}");
    let raw = text(sel, "rawSelector");
    let requirements = sel
        .get("requirements")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    if !raw.is_empty() && requirements {
        causes.push((
            format!("{path}.rawSelector"),
            format!("Invalid value: {raw:?}: may not specified at the same time as requirements"),
        ));
    }
    if raw.is_empty() && !requirements {
        causes.push((
            format!("{path}.requirements"),
            format!(
                "Required value: when {path} is specified, requirements or rawSelector is required"
            ),
        ));
    }
}

fn compact(v: &Value) -> String {
    format!("{:?}", v.to_string())
}

/// `SubjectAccessReviewStatus`. RBAC never denies outright (it has no opinion on what it does not
/// allow), so `denied` stays false, as in Kubernetes.
pub(super) fn status(decision: &Decision) -> Value {
    let mut s = Map::new();
    s.insert("allowed".into(), Value::Bool(decision.is_allowed()));
    if !decision.reason().is_empty() {
        s.insert("reason".into(), Value::from(decision.reason()));
    }
    Value::Object(s)
}

/// A SelfSubjectRulesReview's `spec.namespace`, required (400 as in Kubernetes).
pub(super) fn rules_namespace(body: &Value) -> Result<String> {
    let ns = body
        .pointer("/spec/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    if ns.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    Ok(ns.to_string())
}

/// The SelfSubjectRulesReview answer: rules with resources as `resourceRules`, rules with URLs
/// as `nonResourceRules`, `incomplete` when a binding's role could not be found.
pub(super) fn rules_review(
    review: Review,
    namespace: &str,
    rules: &[PolicyRule],
    errors: &[String],
) -> Value {
    let list = |v: &Option<Vec<String>>| v.clone().unwrap_or_default();
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for r in rules {
        if r.resources.as_ref().is_some_and(|x| !x.is_empty()) {
            let mut rule = json!({
                "verbs": r.verbs,
                "apiGroups": list(&r.api_groups),
                "resources": list(&r.resources),
            });
            if r.resource_names.as_ref().is_some_and(|x| !x.is_empty()) {
                rule["resourceNames"] = json!(list(&r.resource_names));
            }
            resource_rules.push(rule);
        }
        if r.non_resource_urls.as_ref().is_some_and(|x| !x.is_empty()) {
            non_resource_rules.push(json!({
                "verbs": r.verbs,
                "nonResourceURLs": list(&r.non_resource_urls),
            }));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = Value::from(errors.join(", "));
    }
    json!({
        "kind": review.kind(),
        "apiVersion": review.api_version(),
        "metadata": {"creationTimestamp": null},
        "spec": {"namespace": namespace},
        "status": status,
    })
}
