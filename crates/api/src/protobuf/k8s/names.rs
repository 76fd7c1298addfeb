//! How a prost field of a Kubernetes message appears in JSON: its name, whether Go inlines it,
//! and whether Go writes its zero value.
//!
//! prost snake-cases the proto field names, and the proto names are the JSON names, so the JSON
//! name is usually the lowerCamelCase of the prost name. The exceptions (`podIPs` from `pod_ips`,
//! `$ref` from `ref`, embedded structs such as `Volume.volumeSource` whose fields Go writes into
//! the parent) and Go's `omitempty`/pointer rules come from [`go_fields`](super::go_fields),
//! generated from the Go API types. A caller holding the OpenAPI schemas can still override names
//! through [`JsonNames`].

use std::borrow::Cow;

use super::go_fields::{GoMessage, GO_MESSAGES};
use crate::protobuf::table::{FieldMeta, MessageMeta};

/// Maps prost field names to JSON property names; the hook for the schema catalog.
///
/// Answer `None` to fall back to the built-in names derived from the Go types.
pub trait JsonNames {
    /// The JSON property name of prost field `rust_name` in OpenAPI type `openapi_type`
    /// (`io.k8s.api.core.v1.Container`, `image_pull_policy` → `imagePullPolicy`).
    fn json_name(&self, openapi_type: &str, rust_name: &str) -> Option<String>;
}

impl<F: Fn(&str, &str) -> Option<String>> JsonNames for F {
    fn json_name(&self, openapi_type: &str, rust_name: &str) -> Option<String> {
        self(openapi_type, rust_name)
    }
}

/// Uses only the built-in names derived from the Go types.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoNames;

impl JsonNames for GoNames {
    fn json_name(&self, _openapi_type: &str, _rust_name: &str) -> Option<String> {
        None
    }
}

/// Where one field's value goes in the JSON object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Placement<'a> {
    /// Under this property name.
    Named(Cow<'a, str>),
    /// Merged into the parent object (a Go embedded struct).
    Inline,
}

/// The JSON facts of one message's fields.
pub(crate) struct MessageNames<'a> {
    meta: &'static MessageMeta,
    go: Option<&'static GoMessage>,
    names: &'a dyn JsonNames,
}

impl<'a> MessageNames<'a> {
    pub fn new(meta: &'static MessageMeta, names: &'a dyn JsonNames) -> Self {
        let proto = meta.proto.to_ascii_lowercase();
        let go = GO_MESSAGES
            .binary_search_by(|m| m.proto.cmp(proto.as_str()))
            .ok()
            .map(|i| &GO_MESSAGES[i]);
        MessageNames { meta, go, names }
    }

    /// Where `field` goes in JSON.
    pub fn placement(&self, field: &FieldMeta) -> Placement<'static> {
        let rust = field.rust.trim_start_matches("r#");
        if let Some(go) = self.go {
            if go.inline.contains(&rust) {
                return Placement::Inline;
            }
        }
        if let Some(name) = self.names.json_name(self.meta.openapi, rust) {
            return Placement::Named(Cow::Owned(name));
        }
        if let Some(go) = self.go {
            if let Some((_, json)) = go.renamed.iter().find(|(r, _)| *r == rust) {
                return Placement::Named(Cow::Borrowed(json));
            }
        }
        Placement::Named(Cow::Owned(lower_camel(rust)))
    }

    /// Whether Go writes this scalar field's zero value (it is a pointer, or lacks `omitempty`).
    pub fn keeps_zero(&self, field: &FieldMeta) -> bool {
        let rust = field.rust.trim_start_matches("r#");
        self.go.is_some_and(|go| go.keep_zero.contains(&rust))
    }
}

/// `image_pull_policy` → `imagePullPolicy`.
pub fn lower_camel(rust: &str) -> String {
    let mut out = String::with_capacity(rust.len());
    let mut upper = false;
    for c in rust.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_cases_prost_names() {
        for (rust, json) in [
            ("image_pull_policy", "imagePullPolicy"),
            ("name", "name"),
            ("api_version", "apiVersion"),
        ] {
            assert_eq!(lower_camel(rust), json);
        }
    }

    #[test]
    fn go_table_is_sorted() {
        assert!(GO_MESSAGES.windows(2).all(|w| w[0].proto < w[1].proto));
    }
}
