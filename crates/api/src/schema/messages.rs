//! Lookups over the generated message table.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::k8s_generated::{FieldMeta, MessageMeta, MESSAGES};

/// The message with full proto name `proto` (e.g. `k8s.io.api.core.v1.Container`).
pub fn message(proto: &str) -> Option<&'static MessageMeta> {
    MESSAGES
        .binary_search_by(|m| m.proto.cmp(proto))
        .ok()
        .map(|i| &MESSAGES[i])
}

/// The message behind OpenAPI definition `name` (e.g. `io.k8s.api.core.v1.Container`).
pub fn message_for_openapi(name: &str) -> Option<&'static MessageMeta> {
    static BY_OPENAPI: OnceLock<HashMap<&'static str, &'static MessageMeta>> = OnceLock::new();
    BY_OPENAPI
        .get_or_init(|| MESSAGES.iter().map(|m| (m.openapi, m)).collect())
        .get(name)
        .copied()
}

impl MessageMeta {
    /// The field with number `tag` (a linear scan: messages have a few dozen fields at most).
    pub fn field(&self, tag: u32) -> Option<&'static FieldMeta> {
        self.fields.iter().find(|f| f.tag == tag)
    }
}

/// Lowercase and drop everything but ASCII letters and digits: how a prost field name
/// (`image_pull_policy`, `x_kubernetes_list_type`, `ref`) meets its JSON name
/// (`imagePullPolicy`, `x-kubernetes-list-type`, `$ref`).
pub(crate) fn normalize(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}
