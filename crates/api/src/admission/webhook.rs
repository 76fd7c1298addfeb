//! Admission webhooks (Mutating- and ValidatingWebhookConfiguration) as kube-apiserver calls
//! them: each webhook whose rules, namespace and object selectors and CEL `matchConditions`
//! match a client's write gets an AdmissionReview v1 at its `clientConfig.url`
//! ([`call`]); a mutating one's JSONPatch is applied to the object (which the rest of
//! admission then judges), a denial refuses the write with the webhook's status, warnings
//! become `Warning` headers, and a failed call is refused or ignored by `failurePolicy`.
//!
//! Calls are made from the write engine's synchronous admission step; the engine runs on a
//! multi-threaded runtime, where the call blocks this request's thread only (`block_in_place`).

mod call;

use base64::Engine;
use serde_json::{json, Value};

use super::policy::matching::{any_rule_matches, selectors_match};
use super::policy::{evaluate, Attributes};
use crate::error::{ApiError, Result};
use crate::Api;
use flotilla_cel::Var;

/// Run the mutating (`mutating`) or validating webhooks that match the request `a`; for mutating
/// ones, the object as their patches left it (each webhook sees the previous one's result), if
/// any patched it.
pub(crate) fn admit(api: &Api, a: &Attributes<'_>, mutating: bool) -> Result<Option<Value>> {
    let plural = if mutating {
        "mutatingwebhookconfigurations"
    } else {
        "validatingwebhookconfigurations"
    };
    let snap = api.registry.snapshot();
    let configs = evaluate::stored(api, &snap, plural);
    if configs.is_empty() || super::policy::exempt(a.res) {
        return Ok(None);
    }
    let hooks: Vec<&Value> = configs
        .iter()
        .flat_map(|c| c["webhooks"].as_array().into_iter().flatten())
        .collect();
    let mut current: Option<Value> = None;
    let mut last_patch = None;
    for (i, hook) in hooks.iter().enumerate() {
        if call(a, hook, mutating, &mut current)? {
            last_patch = Some(i);
        }
    }
    // `reinvocationPolicy: IfNeeded`: a mutating webhook that a later one's patch may have
    // undone is called once more, as kube reinvokes it.
    if let Some(last) = last_patch {
        for hook in hooks[..last]
            .iter()
            .filter(|h| h["reinvocationPolicy"] == "IfNeeded")
        {
            call(a, hook, mutating, &mut current)?;
        }
    }
    Ok(current)
}

/// Call one webhook on the object as the ones before left it (`current`); did it patch it?
fn call(
    a: &Attributes<'_>,
    hook: &Value,
    mutating: bool,
    current: &mut Option<Value>,
) -> Result<bool> {
    let mut this = *a;
    if current.is_some() {
        this.object = current.as_ref();
    }
    match one(&this, hook, mutating)? {
        Some(patched) if this.object != Some(&patched) => {
            *current = Some(patched);
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Does the webhook match the request (rules, selectors, match conditions)? A match condition
/// that fails to evaluate is the failure policy's to judge.
fn matches(a: &Attributes<'_>, hook: &Value) -> std::result::Result<bool, String> {
    if !any_rule_matches(&hook["rules"], &hook["matchPolicy"], a) || !selectors_match(hook, a) {
        return Ok(false);
    }
    let request = a.request_json();
    let null = Value::Null;
    let vars = [
        ("object", Var::Json(a.object.unwrap_or(&null))),
        ("oldObject", Var::Json(a.old_object.unwrap_or(&null))),
        ("request", Var::Json(&request)),
    ];
    for c in hook["matchConditions"].as_array().into_iter().flatten() {
        let src = c["expression"].as_str().unwrap_or("");
        match flotilla_cel::compile(src).and_then(|e| e.eval_bool(&vars)) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => {
                let name = c["name"].as_str().unwrap_or("");
                return Err(format!("failed to evaluate match condition '{name}': {e}"));
            }
        }
    }
    Ok(true)
}

/// Call one webhook if it matches; the patched object of a mutating one that patched.
fn one(a: &Attributes<'_>, hook: &Value, mutating: bool) -> Result<Option<Value>> {
    let hname = hook["name"].as_str().unwrap_or("");
    let fail = hook["failurePolicy"].as_str() != Some("Ignore");
    let failed = |why: String| -> Result<Option<Value>> {
        if fail {
            Err(ApiError::internal(format!(
                "Internal error occurred: failed calling webhook \"{hname}\": {why}"
            )))
        } else {
            tracing::warn!(webhook = hname, error = %why, "admission webhook failed; ignored by its failurePolicy");
            Ok(None)
        }
    };
    match matches(a, hook) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(e) => return failed(e),
    }
    if a.dry_run && !matches!(hook["sideEffects"].as_str(), Some("None" | "NoneOnDryRun")) {
        return Err(ApiError::bad_request(format!(
            "admission webhook \"{hname}\" does not support dry run"
        )));
    }
    let uid = uuid::Uuid::new_v4().to_string();
    let mut request = a.request_json();
    request["uid"] = json!(uid);
    request["object"] = a.object.cloned().unwrap_or(Value::Null);
    request["oldObject"] = a.old_object.cloned().unwrap_or(Value::Null);
    let options = match a.operation {
        "CREATE" => "CreateOptions",
        "DELETE" => "DeleteOptions",
        _ => "UpdateOptions",
    };
    request["options"] = json!({"apiVersion": "meta.k8s.io/v1", "kind": options});
    let review =
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
    let answer = match blocking_call(hook, &review) {
        Ok(v) => v,
        Err(e) => return failed(e),
    };
    let resp = &answer["response"];
    if resp["uid"].as_str() != Some(uid.as_str()) {
        return failed(format!(
            "expected response.uid=\"{uid}\", got \"{}\"",
            resp["uid"].as_str().unwrap_or("")
        ));
    }
    for w in resp["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        super::scope::warn(w.to_string());
    }
    if resp["allowed"] != json!(true) {
        return Err(denied(hname, &resp["status"]));
    }
    if !mutating {
        return Ok(None);
    }
    let Some(patch) = resp["patch"].as_str().filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if resp["patchType"].as_str() != Some("JSONPatch") {
        return failed(format!(
            "unsupported patch type {:?}",
            resp["patchType"].as_str().unwrap_or("")
        ));
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(patch)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()));
    let doc = match decoded {
        Ok(d) => d,
        Err(e) => return failed(format!("the webhook's patch is not a JSON document: {e}")),
    };
    match crate::patch::json_patch(a.object.unwrap_or(&Value::Null), &doc) {
        Ok(patched) => Ok(Some(patched)),
        Err(e) => failed(format!("the webhook's JSONPatch does not apply: {e}")),
    }
}

/// Make the call from synchronous admission: block this request's worker thread, not the
/// runtime.
fn blocking_call(hook: &Value, review: &Value) -> std::result::Result<Value, String> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| "failed to call webhook: no runtime to call it from".to_string())?;
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return Err("failed to call webhook: the server's runtime cannot wait for it".into());
    }
    tokio::task::block_in_place(|| handle.block_on(call::call(hook, review)))
}

/// A webhook's denial as kube words it: `admission webhook "x" denied the request: …`, with the
/// webhook's code (at least 400) and reason.
fn denied(name: &str, status: &Value) -> ApiError {
    let by = format!("admission webhook \"{name}\" denied the request");
    let message = match (status["message"].as_str(), status["reason"].as_str()) {
        (Some(m), _) if !m.is_empty() => format!("{by}: {m}"),
        (_, Some(r)) if !r.is_empty() => format!("{by}: {r}"),
        _ => format!("{by} without explanation"),
    };
    let code = status["code"].as_u64().map_or(400, |c| c.max(400)) as u16;
    let reason = match status["reason"].as_str().unwrap_or("") {
        "Forbidden" => "Forbidden",
        "Invalid" => "Invalid",
        "BadRequest" => "BadRequest",
        "Unauthorized" => "Unauthorized",
        "NotFound" => "NotFound",
        "Conflict" => "Conflict",
        "AlreadyExists" => "AlreadyExists",
        "TooManyRequests" => "TooManyRequests",
        "RequestEntityTooLarge" => "RequestEntityTooLarge",
        "InternalError" => "InternalError",
        _ => "",
    };
    let mut e = ApiError::new(code, reason, message);
    if let Some(d) = status.get("details").filter(|d| d.is_object()) {
        e.details = Some(d.clone());
    }
    e
}

#[cfg(test)]
mod tests;
