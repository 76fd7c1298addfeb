//! `apiregistration.k8s.io/v1` APIServices: cluster-scoped, with status, in the
//! `api-extensions` category, printed as kube-aggregator prints them (Service, Available, Age).
//! What the hub does with them is in [`crate::aggregator`].

use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;

use super::{age, col, entry, x};
use crate::registry::ResourceInfo;

/// APIServices.
pub(super) fn resources() -> Vec<ResourceInfo> {
    vec![entry::<apiregistration::APIService>(x(
        &[],
        &["api-extensions"],
        true,
        false,
        vec![
            col("Service", "string", 0, "@apiservice"),
            col("Available", "string", 0, "@apiavailable"),
            age(),
        ],
    ))]
}
