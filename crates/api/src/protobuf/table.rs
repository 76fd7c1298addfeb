//! The Kubernetes protobuf field table this module decodes from: the one switch point between the
//! generated table and the stand-in.
//!
//! STAND-IN: `crate::schema::k8s_generated` has not landed yet, so this points at
//! `standin_k8s_generated`, which has the same shape and the same
//! messages (generated from k8s-pb 0.9 by `gen/gen_tables.py`, without the patch/list metadata).
//! When the real table lands, replace the line below with
//! `pub use crate::schema::k8s_generated::{FieldMeta, MessageMeta, ProtoKind, MESSAGES};`
//! and delete `standin_k8s_generated.rs`.

pub use super::standin_k8s_generated::{FieldMeta, MessageMeta, ProtoKind, MESSAGES};
