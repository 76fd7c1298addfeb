//! Label and field selectors applied to cached objects.

use crate::cache::CachedObject;
use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::Query;
use crate::selector::{field::FieldSelector, label::LabelSelector};

/// A list/watch filter built from `labelSelector` and `fieldSelector`, and the object name a
/// request is about (a named watch, or a selector pinning `metadata.name`).
#[derive(Default)]
pub struct Filter {
    /// Exactly this `metadata.name`: keys are never used as prefixes for a name, since
    /// `…/secrets/ns/db` is a prefix of `…/secrets/ns/db-admin`.
    name: Option<String>,
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
    /// Do the field requirements need more than name and namespace (so the object is parsed)?
    deep_fields: bool,
}

impl Filter {
    /// Parse the selectors of a request; unsupported fields are a 400 as in Kubernetes.
    pub fn parse(res: &ResourceInfo, q: &Query) -> Result<Filter> {
        let labels = match &q.label_selector {
            Some(s) => {
                Some(LabelSelector::parse(s).map_err(|e| ApiError::bad_request(e.to_string()))?)
            }
            None => None,
        };
        let mut deep_fields = false;
        let fields = match &q.field_selector {
            Some(s) => {
                let f =
                    FieldSelector::parse(s).map_err(|e| ApiError::bad_request(e.to_string()))?;
                let supported = crate::selector::field::supported_fields(&res.group, &res.kind);
                for name in f.fields() {
                    let basic = name == "metadata.name" || name == "metadata.namespace";
                    if !basic && !supported.contains(&name) {
                        return Err(ApiError::bad_request(format!(
                            "field label not supported: {name}"
                        )));
                    }
                    deep_fields |= !basic;
                }
                Some(f)
            }
            None => None,
        };
        Ok(Filter {
            name: None,
            labels,
            fields,
            deep_fields,
        })
    }

    /// Also require `metadata.name` to be exactly `name` (when there is one).
    pub fn named(mut self, name: Option<&str>) -> Filter {
        self.name = name.map(String::from);
        self
    }

    /// Does this filter select everything?
    pub fn is_everything(&self) -> bool {
        self.name.is_none() && self.labels.is_none() && self.fields.is_none()
    }

    /// Does the object match?
    pub fn matches(&self, o: &CachedObject) -> bool {
        if self.name.as_ref().is_some_and(|n| *n != o.name) {
            return false;
        }
        if let Some(l) = &self.labels {
            if !l.matches(o) {
                return false;
            }
        }
        if let Some(f) = &self.fields {
            let parsed = self.deep_fields.then(|| o.value());
            return f.matches(|field| match field {
                "metadata.name" => Some(o.name.clone()),
                "metadata.namespace" => Some(o.namespace.clone().unwrap_or_default()),
                other => parsed
                    .as_ref()
                    .and_then(|v| crate::selector::field::extract(v, other)),
            });
        }
        true
    }
}
