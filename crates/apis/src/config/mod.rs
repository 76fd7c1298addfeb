//! `config.flotilla.io`: how the hub understands kinds it has no compiled knowledge of.

pub mod v1alpha1;
