//! Label selectors (`metav1.LabelSelector`) against an object's labels, as Kubernetes matches
//! them: every `matchLabels` pair and every `matchExpressions` requirement must hold; an empty
//! selector matches everything; an unknown operator matches nothing.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Does `selector` select an object with `labels`?
pub fn matches(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    check(selector, labels, "object").is_ok()
}

/// As [`matches`], with the first requirement that fails as the reason, naming the labels'
/// `holder` (for people: "label tier In [front] does not match, cluster has \"back\"").
pub fn check(
    selector: &LabelSelector,
    labels: Option<&BTreeMap<String, String>>,
    holder: &str,
) -> Result<(), String> {
    let get = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
    for (k, v) in selector.match_labels.iter().flatten() {
        if get(k) != Some(v.as_str()) {
            return Err(format!(
                "label {k}={v} required by labelSelector, {holder} has {}",
                shown(get(k))
            ));
        }
    }
    for r in selector.match_expressions.iter().flatten() {
        let values = r.values.as_deref();
        requirement("label", &r.key, &r.operator, values, get(&r.key), holder)?;
    }
    Ok(())
}

/// One `In`/`NotIn`/`Exists`/`DoesNotExist` requirement on `key` (a `what`: label, field)
/// against the value its `holder` has; an unknown operator fails, saying so.
pub fn requirement(
    what: &str,
    key: &str,
    operator: &str,
    values: Option<&[String]>,
    have: Option<&str>,
    holder: &str,
) -> Result<(), String> {
    let values = values.unwrap_or_default();
    let listed = || have.is_some_and(|h| values.iter().any(|v| v == h));
    let ok = match operator {
        "In" => listed(),
        "NotIn" => !listed(),
        "Exists" => have.is_some(),
        "DoesNotExist" => have.is_none(),
        other => {
            return Err(format!(
                "{what} {key}: operator {other:?} is not supported (use In, NotIn, Exists or DoesNotExist)"
            ))
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} {key} {operator} [{}] does not match, {holder} has {}",
            values.join(","),
            shown(have)
        ))
    }
}

fn shown(v: Option<&str>) -> String {
    match v {
        Some(v) => format!("{v:?}"),
        None => "none".to_owned(),
    }
}

#[cfg(test)]
mod tests;
