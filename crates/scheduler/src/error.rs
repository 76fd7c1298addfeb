//! The scheduler's one error type.
//!
//! Every variant is a placement that cannot be made as the policy asks; the message says which
//! numbers disagree and what the user can change, because it ends up in the binding's `Scheduled`
//! condition and in `flotilla explain placement`.

/// Everything that can go wrong while placing replicas.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The same cluster was listed twice; the division would depend on which entry won.
    #[error(
        "cluster {cluster:?} is listed more than once among the targets; list each cluster once"
    )]
    DuplicateCluster {
        /// The repeated cluster name.
        cluster: String,
    },
    /// A cluster's minimum is above its maximum.
    #[error(
        "cluster {cluster:?} has a minimum of {min} replicas above its maximum of {max}; \
         lower the minimum or raise the maximum"
    )]
    MinAboveMax {
        /// The cluster whose bounds contradict each other.
        cluster: String,
        /// Its minimum.
        min: u32,
        /// Its maximum.
        max: u32,
    },
    /// The per-cluster minimums add up to more than the replicas to divide.
    #[error(
        "the per-cluster minimums add up to {mins} replicas, more than the {total} to divide; \
         lower a minimum or raise the replica count"
    )]
    MinsExceedTotal {
        /// Replicas to divide.
        total: u32,
        /// Sum of the minimums.
        mins: u64,
    },
    /// The clusters that may take replicas cannot hold them all under their maximums.
    #[error(
        "the clusters can hold at most {capacity} of the {total} replicas (per-cluster maximums; \
         a cluster of weight 0 takes no more than its minimum); raise a maximum, give another \
         cluster weight, or lower the replica count"
    )]
    MaxesTooSmall {
        /// Replicas to divide.
        total: u32,
        /// The most the clusters can hold.
        capacity: u64,
    },
}

/// The scheduler's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
