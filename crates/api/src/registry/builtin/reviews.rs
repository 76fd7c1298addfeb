//! The access reviews and TokenReview: create-only resources answered by
//! [`crate::access::reviews`] and never stored (discovery lists only `create`, as for
//! kube-apiserver).

use k8s_openapi::api::{authentication::v1 as authn, authorization::v1 as authz};

use super::{entry, x};
use crate::registry::ResourceInfo;

fn create_only(mut r: ResourceInfo) -> ResourceInfo {
    r.verbs = vec!["create"];
    r
}

/// authorization.k8s.io/v1 and authentication.k8s.io/v1 reviews.
pub(super) fn resources() -> Vec<ResourceInfo> {
    let none = || x(&[], &[], false, false, Vec::new());
    vec![
        create_only(entry::<authz::SelfSubjectAccessReview>(none())),
        create_only(entry::<authz::SelfSubjectRulesReview>(none())),
        create_only(entry::<authz::SubjectAccessReview>(none())),
        create_only(entry::<authz::LocalSubjectAccessReview>(none())),
        create_only(entry::<authn::SelfSubjectReview>(none())),
        create_only(entry::<authn::TokenReview>(none())),
    ]
}
