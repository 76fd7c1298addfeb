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
    /// An override rule cannot be applied to the object being rendered for a cluster.
    #[error(
        "{overrider} at {path:?} cannot apply: {reason} (fix or narrow the OverridePolicy's rule)"
    )]
    Override {
        /// Which overrider: `plaintext`, `imageOverrider`, ...
        overrider: &'static str,
        /// The JSON pointer it acts on.
        path: String,
        /// Why it cannot apply.
        reason: String,
    },
    /// An object on the hub cannot be propagated as it is.
    #[error("{0}")]
    Invalid(String),
    /// The DNS zone cannot be served (see `flotilla serve --dns-zone`).
    #[error("cannot serve the DNS zone {zone:?}: {source} (give a valid domain name)")]
    Snapshot {
        /// The zone.
        zone: String,
        /// Why the snapshot builder refused it.
        #[source]
        source: flotilla_dns::Error,
    },
}

impl Error {
    /// A failed hub request, saying what was being done.
    pub fn hub(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let action = action.into();
        move |source| Self::Hub { action, source }
    }
}

/// The controllers' result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
