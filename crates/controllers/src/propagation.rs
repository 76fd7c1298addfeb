//! Propagation: from a hub object and a policy to Works in member clusters, and back.
//!
//! The pipeline, each step an ordinary hub client (kube-runtime controllers), each controller
//! in its own folder with the helpers it alone uses:
//! 1. [`detector`]: objects × PropagationPolicies ([`select`]) → one binding per object.
//! 2. [`scheduling`]: binding → `spec.clusters` with replica counts (`flotilla-scheduler`), and
//!    failover when a cluster's `NoExecute` taint outlasts its toleration.
//! 3. [`works`], the binding controller: binding → one Work per cluster (rendered with
//!    [`crate::render`], replica [`works::shares`]), Works' status → the binding's per-cluster
//!    status and the template's status ([`works::aggregate`]); graceful eviction and held
//!    shrinks ([`works::eviction`]); deletion cascades through the binding's finalizer.
//! 4. [`dependencies`]: with `propagateDeps`, attached bindings that send what a workload's
//!    pods refer to ([`dependencies::references`]) wherever the workload goes.
//!
//! Shared by several of them:
//! * [`binding`]: both binding kinds behind one trait, and the labels and annotations.
//! * [`workload`]: replicas, requests and pod specs read from templates, names and hashes.
//! * [`select`]: which resource selectors (of propagation and override policies) pick an
//!   object.
//! * [`scope`]: what a binding may reach (its own namespace only, nothing of the hub's), so
//!   a namespace's policies cannot deliver anything outside that namespace of a member.
//! * [`interpreters`]: the hub's ResourceInterpreters, compiled once, for kinds without
//!   compiled rules (their replicas, requests, where a divided count goes).
//! * `feed`: reflector feeds and the controllers' common setup.
//! * `settled`: what a controller last settled for each binding, so events that change none
//!   of its inputs (most are status writes) are answered without redoing the work.

pub mod binding;
pub mod dependencies;
pub mod detector;
mod feed;
pub mod interpreters;
pub mod scheduling;
pub mod scope;
pub mod select;
mod settled;
pub mod workload;
pub mod works;
