//! Writes whose answer the writer does not read.
//!
//! kube's `Api::patch` parses the object the server sends back, and a status writer throws
//! it away: for a Work that is its whole manifest parsed, once per status report, on both
//! the hub's push workers and its binding controller. These send the same requests and read
//! only the new `resourceVersion` from the answer (serde skips the rest without building it).

use kube::api::{Patch, PatchParams};
use kube::Api;
use serde::{Deserialize, Serialize};

/// What a quiet write learns from the server's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// The object's resourceVersion after the write, when the answer names one.
    pub resource_version: Option<String>,
}

/// PATCH object `name` (or its `subresource`) as `Api::patch` / `Api::patch_subresource`
/// would, without parsing the object that comes back.
pub async fn patch<K: kube::Resource + Clone, P: Serialize>(
    api: &Api<K>,
    name: &str,
    subresource: Option<&str>,
    params: &PatchParams,
    patch: &Patch<P>,
) -> kube::Result<Written> {
    let request = kube::core::Request::new(api.resource_url());
    let built = match subresource {
        Some(sub) => request.patch_subresource(sub, name, params, patch),
        None => request.patch(name, params, patch),
    };
    send(api, built.map_err(kube::Error::BuildRequest)?).await
}

/// Replace object `name`'s status with `status` through a JSON patch on its `status`
/// subresource (`[{"op": "add", "path": "/status", "value": …}]`): unlike a merge patch, it
/// drops the fields the new status leaves out.
pub async fn replace_status<K: kube::Resource + Clone, S: Serialize>(
    api: &Api<K>,
    name: &str,
    status: &S,
) -> kube::Result<Written> {
    #[derive(Serialize)]
    struct Add<'a, S> {
        op: &'static str,
        path: &'static str,
        value: &'a S,
    }
    let add = [Add {
        op: "add",
        path: "/status",
        value: status,
    }];
    // kube builds the request (URL, name check, body); only the content type differs from
    // the merge patch it is built as, so that no json_patch document has to be made of it.
    let mut request = kube::core::Request::new(api.resource_url())
        .patch_subresource("status", name, &PatchParams::default(), &Patch::Merge(&add))
        .map_err(kube::Error::BuildRequest)?;
    request.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json-patch+json"),
    );
    send(api, request).await
}

async fn send<K: kube::Resource + Clone>(
    api: &Api<K>,
    request: http::Request<Vec<u8>>,
) -> kube::Result<Written> {
    let text = api.clone().into_client().request_text(request).await?;
    Ok(resource_version(&text))
}

/// The `metadata.resourceVersion` of a JSON object, reading nothing else into memory.
fn resource_version(text: &str) -> Written {
    #[derive(Deserialize)]
    struct Object {
        #[serde(default)]
        metadata: Meta,
    }
    #[derive(Deserialize, Default)]
    struct Meta {
        #[serde(rename = "resourceVersion")]
        resource_version: Option<String>,
    }
    let resource_version = serde_json::from_str::<Object>(text)
        .ok()
        .and_then(|o| o.metadata.resource_version);
    Written { resource_version }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_resource_version_is_read_from_the_answer() {
        let text = r#"{"kind":"Work","metadata":{"name":"w","resourceVersion":"42","labels":{"a":"b"}},"spec":{"manifests":[{"big":[1,2,3]}]}}"#;
        assert_eq!(
            resource_version(text).resource_version.as_deref(),
            Some("42")
        );
        assert_eq!(resource_version("{}").resource_version, None);
        assert_eq!(resource_version("not json").resource_version, None);
    }
}
