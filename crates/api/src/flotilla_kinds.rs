//! flotilla's own kinds (`Cluster`, `Work`, ...) served as built-ins.
//!
//! The hub already serves CRDs completely (discovery, OpenAPI, validation, printer columns,
//! status subresource), so flotilla's kinds are CRDs generated from `flotilla-apis` and
//! installed at every start: created when absent (also after a user deleted one), and their
//! spec replaced when this binary's differs (an upgrade, or a hand edit). Startup waits until
//! they are served, so the first request after `/readyz` can use them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::error::{ApiError, Result};
use crate::objects::{commit_create, guaranteed_update, Writer};
use crate::registry::crd::is_established;
use crate::Api;

/// How long startup waits for the CRD loop to establish the kinds.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Install or update every flotilla CRD, then wait until each is served.
pub(crate) async fn install(api: &Arc<Api>) -> Result<()> {
    let crds =
        flotilla_apis::crds().map_err(|e| ApiError::internal(format!("flotilla's CRDs: {e}")))?;
    let res = api
        .registry
        .snapshot()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .map(|r| (**r).clone())
        .ok_or_else(|| ApiError::internal("CRDs are not served"))?;
    for crd in &crds {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let key = res.key(None, name);
        match api.cache.get(&key).map(|o| o.value()) {
            None => match commit_create(api, &res, crd.clone(), Some("flotilla"), false).await {
                Ok(_) => tracing::info!(crd = name, "installed flotilla CRD"),
                Err(e) if e.code == 409 => {}
                Err(e) => return Err(e),
            },
            Some(cur) if cur.pointer("/metadata/deletionTimestamp").is_some() => {
                // Being deleted (its objects are being removed): it is re-created at the
                // next start; refusing to start would be worse.
                tracing::warn!(
                    crd = name,
                    "flotilla CRD is being deleted; restart the hub to re-create it"
                );
            }
            Some(cur) if cur.get("spec") != crd.get("spec") => {
                let spec = crd["spec"].clone();
                guaranteed_update(api, Writer::Server, &res, &key, name, false, |cur| {
                    let mut new = cur.clone();
                    new["spec"] = spec.clone();
                    Ok(new)
                })
                .await?;
                tracing::info!(crd = name, "updated flotilla CRD to this version");
            }
            Some(_) => {}
        }
    }
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    for crd in &crds {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        while !served(api, crd) {
            if tokio::time::Instant::now() > deadline {
                return Err(ApiError::internal(format!(
                    "flotilla CRD {name} was not established within {ESTABLISH_TIMEOUT:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(())
}

/// Is `crd` established and its resource in the registry?
fn served(api: &Api, crd: &Value) -> bool {
    let s = |p: &str| crd.pointer(p).and_then(Value::as_str).unwrap_or_default();
    let key = format!(
        "/registry/apiextensions.k8s.io/customresourcedefinitions/{}",
        s("/metadata/name")
    );
    let established = api
        .cache
        .get(&key)
        .is_some_and(|o| is_established(&o.value()));
    established
        && api
            .registry
            .snapshot()
            .get(
                s("/spec/group"),
                s("/spec/versions/0/name"),
                s("/spec/names/plural"),
            )
            .is_some()
}
