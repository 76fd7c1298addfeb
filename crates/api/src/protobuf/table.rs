//! The Kubernetes protobuf field table this module decodes from: the generated
//! `crate::schema::k8s_generated` (tools/k8s-codegen), the one table the schema catalog uses too.

pub use crate::schema::k8s_generated::{FieldMeta, MessageMeta, ProtoKind, MESSAGES};
