//! The agent's error type.

/// What went wrong applying or pruning one manifest.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The manifest lacks something every object needs (apiVersion, kind, metadata.name).
    #[error("invalid manifest: {0}")]
    InvalidManifest(String),
    /// Discovery in the member failed for a reason other than the kind being absent.
    #[error("discovering {kind}: {source}")]
    Discover {
        /// `group/version/Kind`.
        kind: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The member does not serve the manifest's kind.
    #[error("the member serves no {0}")]
    KindNotServed(String),
    /// Reading an object from the member failed.
    #[error("reading {object}: {source}")]
    Read {
        /// The object, as `kind namespace/name`.
        object: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// Writing an object to the member failed.
    #[error("writing {object}: {source}")]
    Write {
        /// The object, as `kind namespace/name`.
        object: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// Deleting an object from the member failed.
    #[error("deleting {object}: {source}")]
    Delete {
        /// The object, as `kind namespace/name`.
        object: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// A manifest could not be turned into an object for the client.
    #[error("encoding {object}: {source}")]
    Encode {
        /// The object, as `kind namespace/name`.
        object: String,
        /// The codec error.
        #[source]
        source: serde_json::Error,
    },
    /// A request to the hub failed.
    #[error("{action}: {source}")]
    Hub {
        /// What was being done.
        action: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// Objects that left a Work could not be removed from the member.
    #[error("pruning: {0}")]
    Prune(String),
    /// Some manifests of a Work did not apply (their reasons are in the Work's status).
    #[error("not applied: {0}")]
    NotApplied(String),
    /// The agent's credential files could not be read or written.
    #[error("{0}")]
    Credential(String),
    /// A push member's credential is refused (a Secret outside flotilla-system, an exec
    /// plugin, a file reference): nothing of it was used.
    #[error("{0}")]
    CredentialRefused(String),
    /// The hub no longer accepts this agent: its credential was revoked or its Cluster removed.
    #[error("{0}")]
    Revoked(String),
}

/// The agent's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
