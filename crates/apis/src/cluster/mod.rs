//! `cluster.flotilla.io`: the registry of member clusters.

pub mod v1alpha1;
