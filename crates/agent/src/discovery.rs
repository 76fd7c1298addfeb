//! Resolving a manifest's group/version/kind to the member's API resource.
//!
//! Answers are cached per [`Resolver`] (so per `Applier`); a kind that is not in the cache is
//! looked up afresh in the member, which is the "refresh on a miss" a CRD applied earlier in the
//! same Work needs. Negative answers are not cached, so the next Work retries them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use kube::core::GroupVersionKind;
use kube::discovery::{pinned_kind, ApiCapabilities, ApiResource};
use kube::Client;

use crate::{Error, Result};

/// How long a kind that is missing is waited for when a CRD in the Work may just be becoming
/// established: the API server serves a new CRD's kind a moment after it accepts the CRD.
const MISS_RETRY: Duration = Duration::from_millis(500);
const MISS_RETRIES: u32 = 10;

/// A cache of the member's API resources by kind.
#[derive(Debug, Default)]
pub struct Resolver {
    cache: Mutex<HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)>>,
}

impl Resolver {
    /// The API resource serving `gvk` in the member behind `client`. When `patient` (the Work
    /// applied a CRD), a missing kind is looked up again a few times before giving up.
    pub async fn resolve(
        &self,
        client: &Client,
        gvk: &GroupVersionKind,
        patient: bool,
    ) -> Result<(ApiResource, ApiCapabilities)> {
        if let Some(hit) = self.cached(gvk) {
            return Ok(hit);
        }
        let mut tries = 0;
        loop {
            match lookup(client, gvk).await {
                Err(Error::KindNotServed(_)) if patient && tries < MISS_RETRIES => {
                    tries += 1;
                    tokio::time::sleep(MISS_RETRY).await;
                }
                Err(e) => return Err(e),
                Ok(found) => {
                    if let Ok(mut cache) = self.cache.lock() {
                        cache.insert(gvk.clone(), found.clone());
                    }
                    return Ok(found);
                }
            }
        }
    }

    fn cached(&self, gvk: &GroupVersionKind) -> Option<(ApiResource, ApiCapabilities)> {
        self.cache.lock().ok()?.get(gvk).cloned()
    }
}

/// `group/version/Kind`, for messages.
pub fn describe(gvk: &GroupVersionKind) -> String {
    if gvk.group.is_empty() {
        format!("{}/{}", gvk.version, gvk.kind)
    } else {
        format!("{}/{}/{}", gvk.group, gvk.version, gvk.kind)
    }
}

async fn lookup(client: &Client, gvk: &GroupVersionKind) -> Result<(ApiResource, ApiCapabilities)> {
    match pinned_kind(client, gvk).await {
        Ok(found) => Ok(found),
        // An unknown group/version is a 404 on its resource list; a known one without the kind
        // is MissingKind. Both mean the member does not serve it.
        Err(kube::Error::Api(status)) if status.code == 404 => {
            Err(Error::KindNotServed(describe(gvk)))
        }
        Err(kube::Error::Discovery(kube::error::DiscoveryError::MissingKind(_))) => {
            Err(Error::KindNotServed(describe(gvk)))
        }
        Err(source) => Err(Error::Discover {
            kind: describe(gvk),
            source,
        }),
    }
}
