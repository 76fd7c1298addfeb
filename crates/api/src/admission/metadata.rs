//! Name and metadata checks: the body's kind and namespace against the URL's, label values,
//! a CRD's name, and the naming rule of each kind.

use serde_json::{json, Value};

use crate::error::{ApiError, Result};
use crate::meta::{self, meta_str, remove_meta, set_meta};
use crate::registry::ResourceInfo;
use crate::selector::validation::{label_value_errors, qualified_name_errors};

/// Check apiVersion/kind of a body against the resource, filling them in when absent.
pub(crate) fn check_type(res: &ResourceInfo, obj: &mut Value) -> Result<()> {
    let want_av = res.api_version();
    match obj.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => obj["apiVersion"] = json!(want_av),
        Some(av) if av == want_av => {}
        Some(av) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({want_av})"
            )))
        }
    }
    match obj.get("kind").and_then(Value::as_str) {
        None | Some("") => obj["kind"] = json!(res.kind),
        Some(k) if k == res.kind => {}
        Some(k) => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({}) of resource {}",
                res.kind,
                res.group_resource()
            )))
        }
    }
    Ok(())
}

/// Refuse (422) a name the kind's naming rule refuses (checked on every name a create tries,
/// generated ones included).
pub(crate) fn check_name(res: &ResourceInfo, name: &str) -> Result<()> {
    match name_error(res, name) {
        None => Ok(()),
        Some(msg) => Err(ApiError::invalid(
            &res.kind,
            name,
            &res.group,
            vec![(
                "metadata.name".into(),
                format!("Invalid value: {name:?}: {msg}"),
            )],
        )),
    }
}

fn name_error(res: &ResourceInfo, name: &str) -> Option<String> {
    if res.group.is_empty() && matches!(res.plural.as_str(), "namespaces" | "services") {
        meta::names::dns_label(name)
    } else if matches!(
        res.group.as_str(),
        "rbac.authorization.k8s.io" | crate::aggregator::GROUP
    ) {
        meta::names::path_segment(name)
    } else {
        meta::names::dns_subdomain(name)
    }
}

/// A create's namespace is the URL's: a body naming another is refused (400), an absent one is
/// filled in, and a cluster-scoped object's is cleared.
pub(crate) fn place_in_namespace(
    res: &ResourceInfo,
    ns: Option<&str>,
    obj: &mut Value,
) -> Result<()> {
    if res.namespaced {
        match meta_str(obj, "namespace") {
            Some(n) if Some(n) != ns && !n.is_empty() => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            _ => set_meta(obj, "namespace", json!(ns)),
        }
    } else {
        remove_meta(obj, "namespace");
    }
    Ok(())
}

/// The most bytes an object's annotations (keys and values) may hold, as in kube-apiserver.
const MAX_ANNOTATIONS_SIZE: usize = 256 * 1024;

/// Labels and annotations as kube-apiserver's ObjectMeta validation has them, and a CRD's name
/// is `<plural>.<group>` (422 before the schema).
pub(crate) fn check_metadata(res: &ResourceInfo, obj: &Value) -> Result<()> {
    let mut causes = Vec::new();
    if let Some(labels) = obj.pointer("/metadata/labels") {
        if !labels.is_object() {
            causes.push((
                "metadata.labels".to_string(),
                "Invalid value: must be a map of strings".to_string(),
            ));
        } else if let Some(m) = labels.as_object() {
            for (k, v) in m {
                let Some(v) = v.as_str() else {
                    causes.push((
                        format!("metadata.labels[{k}]"),
                        "Invalid value: must be a string".into(),
                    ));
                    continue;
                };
                // As kube-apiserver's ValidateLabels: qualified-name keys, label values.
                for e in qualified_name_errors(k) {
                    causes.push((
                        "metadata.labels".into(),
                        format!("Invalid value: {k:?}: {e}"),
                    ));
                }
                for e in label_value_errors(v) {
                    causes.push((
                        "metadata.labels".into(),
                        format!("Invalid value: {v:?}: {e}"),
                    ));
                }
            }
        }
    }
    if let Some(annotations) = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        // As ValidateAnnotations: qualified-name keys (case-insensitive), at most 256 KiB in all.
        let mut size = 0;
        for (k, v) in annotations {
            for e in qualified_name_errors(&k.to_ascii_lowercase()) {
                causes.push((
                    "metadata.annotations".into(),
                    format!("Invalid value: {k:?}: {e}"),
                ));
            }
            size += k.len() + v.as_str().map_or(0, str::len);
        }
        if size > MAX_ANNOTATIONS_SIZE {
            causes.push((
                "metadata.annotations".into(),
                format!("Too long: must have at most {MAX_ANNOTATIONS_SIZE} bytes"),
            ));
        }
    }
    if res.kind == "CustomResourceDefinition" && !res.custom {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let plural = obj
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("");
        let group = obj
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        if name != format!("{plural}.{group}") {
            causes.push((
                "metadata.name".into(),
                format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
            ));
        }
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid_object(res, obj, causes));
    }
    Ok(())
}

/// A new object needs a name or a generateName (422).
pub(crate) fn check_name_given(
    res: &ResourceInfo,
    given: Option<&str>,
    generate: Option<&str>,
) -> Result<()> {
    if given.is_none() && generate.is_none() {
        return Err(ApiError::invalid(
            &res.kind,
            "",
            &res.group,
            vec![(
                "metadata.name".into(),
                "Required value: name or generateName is required".into(),
            )],
        ));
    }
    Ok(())
}
