//! The controllers' error type.

/// What went wrong in a controller or registry operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// There is no Cluster of that name on the hub.
    #[error("there is no cluster {0:?} on the hub (see `kubectl get clusters`)")]
    NoSuchCluster(String),
    /// A request to the hub failed.
    #[error("{action}: {source}")]
    Hub {
        /// What was being done.
        action: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
}

/// The controllers' result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
