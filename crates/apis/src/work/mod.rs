//! `work.flotilla.io`: what is delivered to one member cluster, and how it fared there.

pub mod v1alpha1;
