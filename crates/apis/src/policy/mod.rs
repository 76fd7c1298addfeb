//! `policy.flotilla.io`: which objects go to which member clusters, and how they change there.

pub mod v1alpha1;
