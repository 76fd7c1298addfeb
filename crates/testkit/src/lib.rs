//! Test helpers shared by the end-to-end suites.
//!
//! [`Members`] gives a test real Kubernetes member clusters (kube-apiserver, kube-controller-manager,
//! kube-scheduler and KWOK on a shared etcd) started by `scripts/members`, and kube-rs clients for
//! them.

pub mod members;

pub use members::{Member, Members};
