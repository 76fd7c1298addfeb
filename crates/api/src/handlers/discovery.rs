//! Discovery (`/api`, `/apis`, `/apis/G`, `/apis/G/V`, aggregated v2 and v2beta1) and the other
//! non-resource paths (OpenAPI, metrics, service-account issuer discovery).

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use super::{documents, response};
use crate::error::{ApiError, Result};
use crate::registry::{version_hash, ResourceInfo, Snapshot};
use crate::Api;

/// Where CRDs are stored, by `<plural>.<group>` (a custom resource's storage version is its CRD's).
const CRD_PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

fn resource_entries(r: &ResourceInfo, storage_hash: Option<String>) -> Vec<Value> {
    let scope = r.namespaced;
    let mut out = vec![json!({
        "name": r.plural, "singularName": r.singular, "namespaced": scope, "kind": r.kind,
        "verbs": r.verbs, "shortNames": r.short_names, "categories": r.categories,
    })];
    if let Some(h) = storage_hash {
        out[0]["storageVersionHash"] = json!(h);
    }
    if r.status {
        out.push(json!({"name": format!("{}/status", r.plural), "singularName": "", "namespaced": scope, "kind": r.kind, "verbs": ["get", "patch", "update"]}));
    }
    if r.scale.is_some() {
        out.push(json!({"name": format!("{}/scale", r.plural), "singularName": "", "namespaced": scope, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
    }
    if r.plural == "serviceaccounts" && !r.custom {
        out.push(json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true, "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}));
    }
    if r.plural == "namespaces" && !r.custom {
        out.push(json!({"name": "namespaces/finalize", "singularName": "", "namespaced": false, "kind": "Namespace", "verbs": ["update"]}));
    }
    out.extend(r.extra_subresources().iter().map(|s| s.discovery_entry(r)));
    for o in &mut out {
        if let Some(m) = o.as_object_mut() {
            m.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
        }
    }
    out
}

/// `crd_of` finds a custom resource's CRD by `<plural>.<group>` (for its storage version).
fn resource_list(
    snap: &Snapshot,
    group: &str,
    version: &str,
    crd_of: impl Fn(&str) -> Option<Value> + Copy,
) -> Option<Value> {
    let rs = snap.resources_of(group, version);
    if rs.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let resources: Vec<Value> = rs
        .iter()
        .flat_map(|r| resource_entries(r, version_hash::for_resource(snap, r, crd_of)))
        .collect();
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

fn group_entry(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

fn aggregated(snap: &Snapshot, legacy: bool, version: &str) -> Value {
    let items: Vec<Value> = crate::aggregator::discovery_order(snap.groups())
        .into_iter()
        .filter(|(g, _)| g.is_empty() == legacy)
        .map(|(g, versions)| {
            let vs: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = snap
                        .resources_of(g, v)
                        .iter()
                        .map(|r| {
                            let mut subs = Vec::new();
                            if r.status {
                                subs.push(json!({"subresource": "status", "responseKind": {"group": r.group, "version": r.version, "kind": r.kind}, "verbs": ["get", "patch", "update"]}));
                            }
                            if r.scale.is_some() {
                                subs.push(json!({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]}));
                            }
                            if r.plural == "serviceaccounts" && !r.custom {
                                subs.push(json!({"subresource": "token", "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}, "verbs": ["create"]}));
                            }
                            subs.extend(r.extra_subresources().iter().map(|s| s.aggregated_entry(r)));
                            let mut e = json!({
                                "resource": r.plural,
                                "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
                                "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": r.singular,
                                "verbs": r.verbs,
                            });
                            if !r.short_names.is_empty() { e["shortNames"] = json!(r.short_names); }
                            if !r.categories.is_empty() { e["categories"] = json!(r.categories); }
                            if !subs.is_empty() { e["subresources"] = json!(subs); }
                            e
                        })
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": vs})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{version}"), "metadata": {}, "items": items})
}

/// Which aggregated discovery version the client accepts, if any.
fn wants_aggregated(accept: Option<&str>) -> Option<&'static str> {
    let accept = accept?;
    for alt in accept.split(',') {
        if alt.contains("as=APIGroupDiscoveryList") {
            if alt.contains("v=v2beta1") {
                return Some("v2beta1");
            }
            if alt.contains("v=v2") {
                return Some("v2");
            }
        }
        if alt.trim().starts_with("application/json") && !alt.contains("as=") {
            return None;
        }
    }
    None
}

/// Serve any path that isn't a resource request.
pub(super) fn serve_non_resource(
    api: &Arc<Api>,
    path: &str,
    accept: Option<&str>,
) -> Result<Response<Body>> {
    let snap = api.registry.snapshot();
    let path = path.trim_end_matches('/');
    let agg = wants_aggregated(accept);
    let crd_of = |name: &str| {
        api.cache
            .get(&format!("{CRD_PREFIX}{name}"))
            .map(|o| o.value())
    };
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["api"] => Ok(match agg {
            Some(v) => aggregated_response(&aggregated(&snap, true, v), v),
            None => response::json(
                200,
                &json!({
                    "kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": api.config.advertise_address}],
                }),
            ),
        }),
        ["apis"] => Ok(match agg {
            Some(v) => aggregated_response(&aggregated(&snap, false, v), v),
            None => {
                let groups: Vec<Value> = crate::aggregator::discovery_order(snap.groups())
                    .into_iter()
                    .filter(|(g, _)| !g.is_empty())
                    .map(|(g, vs)| group_entry(g, vs))
                    .collect();
                response::json(
                    200,
                    &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
                )
            }
        }),
        ["apis", group] => snap
            .groups()
            .iter()
            .find(|(g, _)| g == group)
            .map(|(g, vs)| {
                let mut e = group_entry(g, vs);
                e["kind"] = json!("APIGroup");
                e["apiVersion"] = json!("v1");
                response::json(200, &e)
            })
            .ok_or_else(|| ApiError::unknown_path(path)),
        ["api", version] => resource_list(&snap, "", version, crd_of)
            .map(|v| response::json(200, &v))
            .ok_or_else(|| ApiError::unknown_path(path)),
        ["apis", group, version] => resource_list(&snap, group, version, crd_of)
            .map(|v| response::json(200, &v))
            .ok_or_else(|| ApiError::unknown_path(path)),
        ["openapi", "v2"] => documents::openapi_v2(api, accept),
        ["openapi", "v3"] => documents::openapi_v3_index(api),
        ["openapi", "v3", rest @ ..] => documents::openapi_v3(api, &rest.join("/")),
        ["metrics"] => {
            api.metrics.sample_store(&api.store);
            Ok(response::raw_typed(
                200,
                crate::flowcontrol::with_metrics(api, api.metrics.render()).into(),
                "text/plain; version=0.0.4",
            ))
        }
        [".well-known", "openid-configuration"] => documents::oidc_discovery(api),
        ["openid", "v1", "jwks"] => documents::oidc_jwks(api),
        _ => Err(ApiError::unknown_path(path)),
    }
}

fn aggregated_response(v: &Value, version: &str) -> Response<Body> {
    let ct = format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
    response::raw_typed(200, serde_json::to_vec(v).unwrap_or_default().into(), &ct)
}

#[cfg(test)]
mod tests;
