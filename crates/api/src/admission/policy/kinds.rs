//! Defaults and validation of the four admissionregistration.k8s.io/v1 kinds, as kube-apiserver
//! has them: a policy's and a webhook's `failurePolicy` Fail, `matchPolicy` Equivalent, empty
//! selectors, rule scope `*`, a webhook's `timeoutSeconds` 10 and a mutating one's
//! `reinvocationPolicy` Never; CEL expressions compiled at create (a syntax error is 422),
//! `sideEffects` and `admissionReviewVersions` required, and the enums checked.

mod validate;

use serde_json::{json, Value};

use validate::Causes;

/// Defaults of the kind `kind` (one of the four).
pub fn defaults(kind: &str, obj: &mut Value) {
    match kind {
        "ValidatingAdmissionPolicy" => {
            let spec = &mut obj["spec"];
            default(spec, "failurePolicy", json!("Fail"));
            if spec.get("matchConstraints").is_some_and(Value::is_object) {
                match_resources(&mut spec["matchConstraints"]);
            }
        }
        "ValidatingAdmissionPolicyBinding" => {
            let spec = &mut obj["spec"];
            if spec.get("matchResources").is_some_and(Value::is_object) {
                match_resources(&mut spec["matchResources"]);
            }
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            let mutating = kind == "MutatingWebhookConfiguration";
            let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
                return;
            };
            for h in hooks {
                default(h, "failurePolicy", json!("Fail"));
                default(h, "matchPolicy", json!("Equivalent"));
                default(h, "namespaceSelector", json!({}));
                default(h, "objectSelector", json!({}));
                default(h, "timeoutSeconds", json!(10));
                if mutating {
                    default(h, "reinvocationPolicy", json!("Never"));
                }
                rules_scope(h, "rules");
                if let Some(svc) = h.pointer_mut("/clientConfig/service") {
                    default(svc, "port", json!(443));
                }
            }
        }
        _ => {}
    }
}

fn default(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = obj.as_object_mut() {
        if m.get(key).is_none_or(Value::is_null) {
            m.insert(key.to_string(), value);
        }
    }
}

fn rules_scope(obj: &mut Value, key: &str) {
    for r in obj
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        default(r, "scope", json!("*"));
    }
}

fn match_resources(m: &mut Value) {
    default(m, "matchPolicy", json!("Equivalent"));
    default(m, "namespaceSelector", json!({}));
    default(m, "objectSelector", json!({}));
    rules_scope(m, "resourceRules");
    rules_scope(m, "excludeResourceRules");
}

/// The validation errors of an object of kind `kind`, as `(field, message)` causes.
pub fn causes(kind: &str, obj: &Value) -> Causes {
    let mut c = Vec::new();
    match kind {
        "ValidatingAdmissionPolicy" => validate::policy(&obj["spec"], &mut c),
        "ValidatingAdmissionPolicyBinding" => validate::binding(&obj["spec"], &mut c),
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            validate::webhooks(obj, kind == "MutatingWebhookConfiguration", &mut c)
        }
        _ => {}
    }
    c
}

/// A binding's `paramRef` as `kubectl get` prints it: `namespace/name` (`*/name` without a
/// namespace), the selector's labels, or `<unset>`.
pub fn param_ref_cell(binding: &Value) -> String {
    let pr = &binding["spec"]["paramRef"];
    if !pr.is_object() {
        return "<unset>".into();
    }
    let text = |k: &str| pr[k].as_str().unwrap_or("");
    match (text("namespace"), text("name")) {
        (_, "") => pr["selector"]["matchLabels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
        ("", name) => format!("*/{name}"),
        (ns, name) => format!("{ns}/{name}"),
    }
}
