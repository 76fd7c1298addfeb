//! API Priority and Fairness objects (flowcontrol.apiserver.k8s.io/v1): FlowSchemas and
//! PriorityLevelConfigurations, stored, with status, printed as `kubectl get` prints them.
//! What they do is in [`crate::flowcontrol`].

use k8s_openapi::api::flowcontrol::v1 as flowcontrol;

use super::{age, col, entry, x};
use crate::registry::ResourceInfo;

/// FlowSchemas and PriorityLevelConfigurations.
pub(super) fn resources() -> Vec<ResourceInfo> {
    vec![
        entry::<flowcontrol::FlowSchema>(x(
            &[],
            &[],
            true,
            false,
            vec![
                col(
                    "PriorityLevel",
                    "string",
                    0,
                    ".spec.priorityLevelConfiguration.name",
                ),
                col(
                    "MatchingPrecedence",
                    "string",
                    0,
                    ".spec.matchingPrecedence",
                ),
                col("DistinguisherMethod", "string", 0, "@apfmethod"),
                age(),
                col("MissingPL", "string", 0, "@apfmissingpl"),
            ],
        )),
        entry::<flowcontrol::PriorityLevelConfiguration>(x(
            &[],
            &[],
            true,
            false,
            vec![
                col("Type", "string", 0, ".spec.type"),
                col("NominalConcurrencyShares", "string", 0, "@apfshares"),
                col("Queues", "string", 0, "@apfqueues"),
                col("HandSize", "string", 0, "@apfhandsize"),
                col("QueueLengthLimit", "string", 0, "@apfqueuelimit"),
                age(),
            ],
        )),
    ]
}
