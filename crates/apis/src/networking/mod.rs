//! `networking.flotilla.io`: multi-cluster services and their DNS.

pub mod v1alpha1;
