//! Propagation: from a hub object and a policy to Works in member clusters, and back.
//!
//! The pipeline, each step an ordinary hub client (kube-runtime controllers):
//! 1. [`detector`]: objects × PropagationPolicies ([`select`]) → one binding per object.
//! 2. [`scheduling`]: binding → `spec.clusters` with replica counts (`flotilla-scheduler`), and
//!    failover when a cluster's `NoExecute` taint outlasts its toleration.
//! 3. [`works`]: binding → one Work per cluster (rendered with [`crate::render`], replica
//!    [`shares`]), Works' status → the binding's per-cluster status and the template's
//!    status ([`aggregate`]); deletion cascades through the binding's finalizer.
//! 4. [`dependencies`]: with `propagateDeps`, attached bindings that send what a workload's
//!    pods refer to ([`deps`]) wherever the workload goes.
//!
//! * [`binding`]: both binding kinds behind one trait, and the labels and annotations.
//! * [`workload`]: replicas and requests read from templates, names and hashes.
//! * [`eviction`]: graceful eviction and held shrinks, so moves never lose ready replicas.
//! * [`scope`]: what a binding may reach (its own namespace only, nothing of the hub's), so
//!   a namespace's policies cannot deliver anything outside that namespace of a member.
//! * [`deps`]: what a pod template refers to (ConfigMaps, Secrets, ServiceAccounts, PVCs), for
//!   `propagateDeps`.

pub mod aggregate;
pub mod binding;
pub mod dependencies;
pub mod deps;
pub mod detector;
pub mod eviction;
mod feed;
pub mod scheduling;
pub mod scope;
pub mod select;
pub mod shares;
pub mod workload;
pub mod works;
