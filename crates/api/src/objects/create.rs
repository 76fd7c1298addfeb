//! Create: the checks of a new object, its system fields, and the write that may pick a
//! generated name.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{render, target, Outcome, Write, Written};
use crate::error::{ApiError, Result, Target};
use crate::meta::{self, meta_str, now_rfc3339, remove_meta, set_meta};
use crate::registry::ResourceInfo;
use crate::Api;

/// POST: create `obj` (the decoded body) in the namespace of the URL.
pub(crate) async fn create(api: &Arc<Api>, w: &Write<'_>, mut obj: Value) -> Result<Written> {
    let res = w.res;
    check_type(res, &mut obj)?;
    let ns = w.info.object_namespace();
    if res.namespaced {
        match meta_str(&obj, "namespace") {
            Some(n) if Some(n) != ns && !n.is_empty() => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            _ => set_meta(&mut obj, "namespace", json!(ns)),
        }
    } else {
        remove_meta(&mut obj, "namespace");
    }
    crate::access::join::admit_create(&api.cache, w.user, res, &mut obj).await?;
    let warnings = api.validate(res, &mut obj, w.query.field_validation)?;
    api.access
        .admit_rbac_write(&api.cache, w.user, w.info, res, None, &obj)?;
    let outcome = commit_create(api, res, obj, Some(w.manager.as_str()), w.query.dry_run).await?;
    Ok(Written {
        outcome,
        created: true,
        warnings,
    })
}

/// Set the system fields of a new object, check it, and write it.
pub(crate) async fn commit_create(
    api: &Arc<Api>,
    res: &ResourceInfo,
    mut obj: Value,
    manager: Option<&str>,
    dry_run: bool,
) -> Result<Outcome> {
    let ns = meta_str(&obj, "namespace").map(String::from);
    let generate = meta_str(&obj, "generateName").map(String::from);
    let given = meta_str(&obj, "name")
        .map(String::from)
        .filter(|n| !n.is_empty());
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
    check_namespace(api, res, ns.as_deref(), given.as_deref().unwrap_or("")).await?;
    for key in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        remove_meta(&mut obj, key);
    }
    set_meta(&mut obj, "uid", json!(uuid::Uuid::new_v4().to_string()));
    set_meta(&mut obj, "creationTimestamp", json!(now_rfc3339()));
    if meta::generation::tracked(res) {
        set_meta(&mut obj, "generation", json!(1));
    }
    if res.status {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    crate::defaults::on_create(res, &mut obj);
    crate::validation::check(res, &obj)?;
    // Every outcome holds the object as stored; responses convert it back.
    let mut obj = crate::registry::storage::to_storage(res, obj);
    // Server-side apply arrives with its managedFields already computed (manager None).
    if let Some(manager) = manager {
        api.track_managed_fields(res, None, &mut obj, manager, None);
    }
    crate::limits::check_storable(&obj)?;
    for attempt in 0..8 {
        let name = match (&given, &generate) {
            (Some(n), _) => n.clone(),
            (None, Some(g)) => format!("{g}{}", generate_suffix()),
            (None, None) => unreachable!("checked above"),
        };
        if let Some(msg) = validate_name(res, &name) {
            return Err(ApiError::invalid(
                &res.kind,
                &name,
                &res.group,
                vec![(
                    "metadata.name".into(),
                    format!("Invalid value: {name:?}: {msg}"),
                )],
            ));
        }
        set_meta(&mut obj, "name", json!(name));
        if generate.is_some() {
            // Defaults that follow the name (a namespace's name label) see the generated one.
            crate::defaults::apply(res, &mut obj);
        }
        let key = res.key(ns.as_deref(), &name);
        if dry_run {
            // A dry run answers what the real create would: a taken name is a conflict.
            api.cache.sync().await?;
            match api.cache.get(&key) {
                None => return Ok(Outcome::DryRun(obj)),
                Some(_) if given.is_none() && attempt < 7 => continue,
                Some(_) => return Err(ApiError::already_exists(target(res, &name))),
            }
        }
        match api.store.create(&key, render(obj.clone())).await {
            Ok(r) => return Ok(Outcome::Written(r)),
            Err(flotilla_store::Error::AlreadyExists { .. }) if given.is_none() && attempt < 7 => {
                continue
            }
            Err(flotilla_store::Error::AlreadyExists { .. }) => {
                return Err(ApiError::already_exists(target(res, &name)))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::already_exists(target(
        res,
        generate.as_deref().unwrap_or(""),
    )))
}

/// Check apiVersion/kind of a body against the resource, filling them in when absent.
pub(super) fn check_type(res: &ResourceInfo, obj: &mut Value) -> Result<()> {
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

fn validate_name(res: &ResourceInfo, name: &str) -> Option<String> {
    if res.group.is_empty() && matches!(res.plural.as_str(), "namespaces" | "services") {
        meta::names::dns_label(name)
    } else if res.group == "rbac.authorization.k8s.io" {
        meta::names::path_segment(name)
    } else {
        meta::names::dns_subdomain(name)
    }
}

/// Namespaced writes need an existing namespace that isn't being deleted. `name` is the
/// object's (empty for generateName, as kube-apiserver's admission sees it).
async fn check_namespace(
    api: &Api,
    res: &ResourceInfo,
    ns: Option<&str>,
    name: &str,
) -> Result<()> {
    let Some(ns) = ns.filter(|_| res.namespaced) else {
        return Ok(());
    };
    let nskey = format!("/registry/core/namespaces/{ns}");
    let mut found = api.cache.get(&nskey);
    if found.is_none() {
        // The namespace may have been created a moment ago (like NamespaceLifecycle's live
        // lookup on an informer miss): only a consistent read may say it doesn't exist.
        api.cache.sync().await?;
        found = api.cache.get(&nskey);
    }
    let Some(n) = found else {
        return Err(ApiError::not_found(Target {
            group: "",
            resource: "namespaces",
            name: ns,
        }));
    };
    if n.value().pointer("/metadata/deletionTimestamp").is_some() {
        return Err(terminating(res, ns, name));
    }
    Ok(())
}

/// kube-apiserver's NamespaceLifecycle refusal: `configmaps "x" is forbidden: unable to …`.
pub(super) fn terminating(res: &ResourceInfo, ns: &str, name: &str) -> ApiError {
    let resource = if res.group.is_empty() {
        res.plural.clone()
    } else {
        format!("{}.{}", res.plural, res.group)
    };
    let subject = if name.is_empty() {
        resource
    } else {
        format!("{resource} {name:?}")
    };
    ApiError {
        details: Some(json!({"name": name, "group": res.group, "kind": res.plural})),
        ..ApiError::forbidden(format!(
            "{subject} is forbidden: unable to create new content in namespace {ns} because it is being terminated"
        ))
    }
}

const GENERATE_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn generate_suffix() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..5)
        .map(|_| GENERATE_CHARS[rng.gen_range(0..GENERATE_CHARS.len())] as char)
        .collect()
}
