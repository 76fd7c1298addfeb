//! Writes by a controller that lives in the API server's own process, such as the fake
//! kubelet of `flotilla sim`: as a client writing through the `status` subresource would, but
//! without a round trip through HTTP, TLS and JSON parsing of its own.

use std::sync::Arc;

use serde_json::Value;

use crate::error::{ApiError, Result};
use crate::objects::{guaranteed_update, Writer};
use crate::Api;

/// Replace the `status` of `group/version` `plural` `namespace/name` with what `status` makes
/// of the current object (`None`: leave it as it is). The spec and metadata stay as stored;
/// a conflicting write meanwhile is retried. 404 when the object is gone.
pub async fn update_status<F>(
    api: &Arc<Api>,
    (group, version, plural): (&str, &str, &str),
    namespace: Option<&str>,
    name: &str,
    mut status: F,
) -> Result<()>
where
    F: FnMut(&Value) -> Option<Value>,
{
    let res = api
        .registry
        .snapshot()
        .get(group, version, plural)
        .cloned()
        .ok_or_else(|| ApiError::internal(format!("{plural}.{group}/{version} is not served")))?;
    let key = res.key(namespace, name);
    guaranteed_update(api, Writer::Server, &res, &key, name, false, |old| {
        let mut new = old.clone();
        if let Some(s) = status(old) {
            new["status"] = s;
        }
        Ok(new)
    })
    .await
    .map(drop)
}
