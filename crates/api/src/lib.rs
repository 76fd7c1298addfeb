//! The hub's Kubernetes-compatible API server: a pure data plane.
//!
//! It stores objects (through `flotilla-store`), serves them over HTTPS the way kube-apiserver
//! does — discovery, OpenAPI, CRUD, watch, patch and server-side apply, RBAC, CRDs — and runs
//! no business logic; every flotilla controller is an ordinary client of this API.
//!
//! Layout: [`request`] parses what is asked, [`handlers`] answer it (writes through the write
//! engine, `objects`, which runs every object through [`admission`]: defaulting, schema and
//! per-kind validation), [`cache`] serves reads and watches from memory, [`registry`] knows
//! what is served, [`error`] maps every failure to a `Status`; [`auth`] decides who is calling
//! and what they may do, and [`access`] applies it to each request; [`lifecycle`] holds the
//! in-server loops Kubernetes semantics need (namespace deletion, garbage collection, CRD
//! establishment); flotilla's own kinds are CRDs installed at start.
#![deny(missing_docs)]

pub mod access;
pub mod admission;
pub mod aggregator;
pub mod apply;
pub mod audit;
pub mod auth;
pub mod cache;
pub mod encryption;
pub mod error;
pub mod fence;
pub mod flowcontrol;
pub mod handlers;
pub mod lifecycle;
pub mod limits;
pub mod local;
pub mod meta;
pub mod metrics;
pub(crate) mod objects;
pub mod patch;
pub mod protobuf;
pub mod registry;
pub mod request;
pub mod schema;
pub mod schemas;
pub mod selector;
pub mod server;

mod api;
mod flotilla_kinds;

pub use api::{Api, Config};
pub use server::serve;

/// The Kubernetes version the hub reports (kubectl's dispatcher picks its binary by the minor).
pub const KUBERNETES_VERSION: &str = "v1.32.0";

/// `/version`.
pub fn version_info() -> serde_json::Value {
    serde_json::json!({
        "major": "1",
        "minor": "32",
        "gitVersion": format!("{KUBERNETES_VERSION}-flotilla.{}", env!("CARGO_PKG_VERSION")),
        "gitCommit": option_env!("FLOTILLA_GIT_COMMIT").unwrap_or("unknown"),
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, match std::env::consts::ARCH { "x86_64" => "amd64", "aarch64" => "arm64", a => a }),
    })
}

/// Decode a Kubernetes protobuf request body.
pub(crate) fn protobuf_body(bytes: &[u8]) -> error::Result<serde_json::Value> {
    protobuf::decode_k8s_protobuf(bytes).map_err(|e| {
        error::ApiError::bad_request(format!("the protobuf body could not be decoded: {e}"))
    })
}
