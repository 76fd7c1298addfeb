//! Validation of the four admissionregistration.k8s.io/v1 kinds, worded as kube-apiserver's
//! field errors: required fields, enums, rules, and CEL expressions that must compile.

use serde_json::Value;

/// `(field, message)` causes of a 422.
pub(super) type Causes = Vec<(String, String)>;

fn required(c: &mut Causes, field: &str, detail: &str) {
    let msg = if detail.is_empty() {
        "Required value".to_string()
    } else {
        format!("Required value: {detail}")
    };
    c.push((field.to_string(), msg));
}

fn one_of(c: &mut Causes, field: &str, v: &Value, allowed: &[&str]) {
    if let Some(s) = v.as_str() {
        if !allowed.contains(&s) {
            let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
            c.push((
                field.to_string(),
                format!(
                    "Unsupported value: {s:?}: supported values: {}",
                    list.join(", ")
                ),
            ));
        }
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

/// An expression that must compile: kube's `compilation failed` cause when it does not.
fn expression(c: &mut Causes, field: &str, src: &Value, what: &str) {
    match src.as_str() {
        None | Some("") => required(c, field, ""),
        Some(s) => {
            if let Err(e) = flotilla_cel::compile(s) {
                c.push((
                    field.to_string(),
                    format!("Invalid value: {s:?}: {what}compilation failed: {e}"),
                ));
            }
        }
    }
}

/// The rules at `at` (a policy's resourceRules, a webhook's rules): each names operations,
/// groups, versions and resources, with known operations and scope.
fn rules(c: &mut Causes, at: &str, list: &Value) {
    for (i, r) in list.as_array().into_iter().flatten().enumerate() {
        let f = format!("{at}[{i}]");
        for key in ["operations", "apiGroups", "apiVersions", "resources"] {
            if r[key].as_array().is_none_or(Vec::is_empty) {
                required(c, &format!("{f}.{key}"), "");
            }
        }
        for (j, op) in r["operations"].as_array().into_iter().flatten().enumerate() {
            one_of(
                c,
                &format!("{f}.operations[{j}]"),
                op,
                &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
            );
        }
        one_of(
            c,
            &format!("{f}.scope"),
            &r["scope"],
            &["*", "Cluster", "Namespaced"],
        );
    }
}

/// A policy's `matchConstraints` or a binding's `matchResources` at `at`.
fn match_resources_causes(c: &mut Causes, at: &str, m: &Value) {
    rules(c, &format!("{at}.resourceRules"), &m["resourceRules"]);
    rules(
        c,
        &format!("{at}.excludeResourceRules"),
        &m["excludeResourceRules"],
    );
    one_of(
        c,
        &format!("{at}.matchPolicy"),
        &m["matchPolicy"],
        &["Exact", "Equivalent"],
    );
}

fn match_conditions(c: &mut Causes, at: &str, v: &Value) {
    for (i, m) in v["matchConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = format!("{at}.matchConditions[{i}]");
        if str_of(m, "name").is_empty() {
            required(c, &format!("{f}.name"), "");
        }
        expression(c, &format!("{f}.expression"), &m["expression"], "");
    }
}

pub(super) fn policy(spec: &Value, c: &mut Causes) {
    one_of(
        c,
        "spec.failurePolicy",
        &spec["failurePolicy"],
        &["Fail", "Ignore"],
    );
    let mc = &spec["matchConstraints"];
    if mc.is_null() {
        required(c, "spec.matchConstraints", "");
    } else if mc["resourceRules"].as_array().is_none_or(Vec::is_empty) {
        required(c, "spec.matchConstraints.resourceRules", "");
    } else {
        match_resources_causes(c, "spec.matchConstraints", mc);
    }
    let pk = &spec["paramKind"];
    if !pk.is_null() {
        if str_of(pk, "apiVersion").is_empty() {
            required(c, "spec.paramKind.apiVersion", "");
        }
        if str_of(pk, "kind").is_empty() {
            required(c, "spec.paramKind.kind", "");
        }
    }
    let validations = spec["validations"].as_array().map_or(0, Vec::len);
    let audits = spec["auditAnnotations"].as_array().map_or(0, Vec::len);
    if validations + audits == 0 {
        required(
            c,
            "spec.validations",
            "validations or auditAnnotations must contain at least one item",
        );
    }
    for (i, v) in spec["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if str_of(v, "name").is_empty() {
            required(c, &format!("spec.variables[{i}].name"), "");
        }
        expression(
            c,
            &format!("spec.variables[{i}].expression"),
            &v["expression"],
            "",
        );
    }
    match_conditions(c, "spec", spec);
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = format!("spec.validations[{i}]");
        expression(c, &format!("{f}.expression"), &v["expression"], "");
        if !str_of(v, "messageExpression").is_empty() {
            expression(
                c,
                &format!("{f}.messageExpression"),
                &v["messageExpression"],
                "message expression ",
            );
        }
        one_of(
            c,
            &format!("{f}.reason"),
            &v["reason"],
            &[
                "Unauthorized",
                "Forbidden",
                "Invalid",
                "RequestEntityTooLarge",
            ],
        );
    }
    for (i, v) in spec["auditAnnotations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = format!("spec.auditAnnotations[{i}]");
        if str_of(v, "key").is_empty() {
            required(c, &format!("{f}.key"), "");
        }
        expression(
            c,
            &format!("{f}.valueExpression"),
            &v["valueExpression"],
            "",
        );
    }
}

pub(super) fn binding(spec: &Value, c: &mut Causes) {
    if str_of(spec, "policyName").is_empty() {
        required(c, "spec.policyName", "");
    }
    if spec["matchResources"].is_object() {
        match_resources_causes(c, "spec.matchResources", &spec["matchResources"]);
    }
    let actions: Vec<&str> = spec["validationActions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if actions.is_empty() {
        required(
            c,
            "spec.validationActions",
            "at least one validation action is required",
        );
    }
    for (i, a) in spec["validationActions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        one_of(
            c,
            &format!("spec.validationActions[{i}]"),
            a,
            &["Deny", "Warn", "Audit"],
        );
    }
    if actions.contains(&"Deny") && actions.contains(&"Warn") {
        c.push((
            "spec.validationActions".into(),
            format!(
                "Invalid value: {}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
                serde_json::to_string(&actions).unwrap_or_default()
            ),
        ));
    }
    let pr = &spec["paramRef"];
    if !pr.is_null() {
        if !str_of(pr, "name").is_empty() && !pr["selector"].is_null() {
            c.push((
                "spec.paramRef.name".into(),
                "Forbidden: name and selector are mutually exclusive".into(),
            ));
        }
        match pr["parameterNotFoundAction"].as_str() {
            None | Some("") => required(c, "spec.paramRef.parameterNotFoundAction", ""),
            Some(_) => one_of(
                c,
                "spec.paramRef.parameterNotFoundAction",
                &pr["parameterNotFoundAction"],
                &["Allow", "Deny"],
            ),
        }
    }
}

pub(super) fn webhooks(obj: &Value, mutating: bool, c: &mut Causes) {
    let mut names = Vec::new();
    for (i, h) in obj["webhooks"].as_array().into_iter().flatten().enumerate() {
        let f = format!("webhooks[{i}]");
        let name = str_of(h, "name");
        if name.is_empty() {
            required(c, &format!("{f}.name"), "");
        } else if name.split('.').count() < 3 {
            c.push((
                format!("{f}.name"),
                format!("Invalid value: {name:?}: should be a domain with at least three segments separated by dots"),
            ));
        } else if names.contains(&name) {
            c.push((format!("{f}.name"), format!("Duplicate value: {name:?}")));
        }
        names.push(name);
        let cc = &h["clientConfig"];
        let url = cc["url"].as_str();
        match (url, cc["service"].is_null()) {
            (Some(_), false) | (None, true) => required(
                c,
                &format!("{f}.clientConfig"),
                "exactly one of url or service is required",
            ),
            (Some(u), true) if !u.starts_with("https://") => c.push((
                format!("{f}.clientConfig.url"),
                "Unsupported value: \"http\": supported values: \"https\"".to_string(),
            )),
            _ => {}
        }
        match h["sideEffects"].as_str() {
            None | Some("") => required(
                c,
                &format!("{f}.sideEffects"),
                "must specify one of None, NoneOnDryRun",
            ),
            Some(_) => one_of(
                c,
                &format!("{f}.sideEffects"),
                &h["sideEffects"],
                &["None", "NoneOnDryRun"],
            ),
        }
        let versions: Vec<&str> = h["admissionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !versions.iter().any(|v| *v == "v1" || *v == "v1beta1") {
            required(
                c,
                &format!("{f}.admissionReviewVersions"),
                "must specify one of v1, v1beta1",
            );
        }
        if let Some(t) = h["timeoutSeconds"].as_i64() {
            if !(1..=30).contains(&t) {
                c.push((
                    format!("{f}.timeoutSeconds"),
                    format!(
                        "Invalid value: {t}: the timeout value must be between 1 and 30 seconds"
                    ),
                ));
            }
        }
        one_of(
            c,
            &format!("{f}.failurePolicy"),
            &h["failurePolicy"],
            &["Fail", "Ignore"],
        );
        one_of(
            c,
            &format!("{f}.matchPolicy"),
            &h["matchPolicy"],
            &["Exact", "Equivalent"],
        );
        if mutating {
            one_of(
                c,
                &format!("{f}.reinvocationPolicy"),
                &h["reinvocationPolicy"],
                &["Never", "IfNeeded"],
            );
        }
        rules(c, &format!("{f}.rules"), &h["rules"]);
        match_conditions(c, &f, h);
    }
}
