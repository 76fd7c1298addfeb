//! Test helpers shared by the end-to-end suites and the benchmarks.
//!
//! * [`hub`]: a `flotilla serve` process — [`hub::Serve`] starts one (the suites and `flotilla
//!   bench` share it), [`hub::Hub`] is the hub-in-a-test with kubectl at hand.
//! * [`process`]: a child process that logs to a file and is stopped (SIGTERM, then SIGKILL) when
//!   dropped.
//! * [`kubectl`]: kubectl on a kubeconfig, and short forms for table-like suites.
//! * [`Members`]: real Kubernetes member clusters (kube-apiserver, kube-controller-manager,
//!   kube-scheduler and KWOK on a shared etcd) started by `scripts/members`, and kube-rs clients
//!   for them.
//! * [`postgres`]: a database of its own on the PostgreSQL scripts/test starts.
//! * [`proxy`]: a TCP proxy that cuts or slows the network between two processes (fault tests).

pub mod hub;
pub mod kubectl;
pub mod members;
pub mod postgres;
pub mod process;
pub mod proxy;

pub use members::{Member, Members};
