//! Label and field selectors applied to cached objects.

use crate::cache::CachedObject;
use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::Query;
use crate::selector::{field::FieldSelector, label::LabelSelector};

/// A list/watch filter built from `labelSelector` and `fieldSelector`.
#[derive(Default)]
pub struct Filter {
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
            labels,
            fields,
            deep_fields,
        })
    }

    /// Does this filter select everything?
    pub fn is_everything(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    /// Does the object match?
    pub fn matches(&self, o: &CachedObject) -> bool {
        if let Some(l) = &self.labels {
            if !l.matches(&o.labels) {
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
