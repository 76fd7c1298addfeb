//! admissionregistration.k8s.io/v1: ValidatingAdmissionPolicies (with status, written by the
//! type-checking loop) and their bindings, and the webhook configurations. What they do is in
//! [`crate::admission::policy`] and [`crate::admission::webhook`].

use k8s_openapi::api::admissionregistration::v1 as admissionregistration;

use super::{age, col, entry, x};
use crate::registry::ResourceInfo;

/// The four admissionregistration.k8s.io/v1 kinds.
pub(super) fn resources() -> Vec<ResourceInfo> {
    vec![
        entry::<admissionregistration::ValidatingAdmissionPolicy>(x(
            &[],
            &["api-extensions"],
            true,
            false,
            vec![
                col("Validations", "integer", 0, "@vapvalidations"),
                col("ParamKind", "string", 0, "@vapparamkind"),
                age(),
            ],
        )),
        entry::<admissionregistration::ValidatingAdmissionPolicyBinding>(x(
            &[],
            &["api-extensions"],
            false,
            false,
            vec![
                col("PolicyName", "string", 0, ".spec.policyName"),
                col("ParamRef", "string", 0, "@vapbparamref"),
                age(),
            ],
        )),
        entry::<admissionregistration::ValidatingWebhookConfiguration>(x(
            &[],
            &["api-extensions"],
            false,
            false,
            vec![col("Webhooks", "integer", 0, "@webhooks"), age()],
        )),
        entry::<admissionregistration::MutatingWebhookConfiguration>(x(
            &[],
            &["api-extensions"],
            false,
            false,
            vec![col("Webhooks", "integer", 0, "@webhooks"), age()],
        )),
    ]
}
