//! Field selectors: `?fieldSelector=metadata.name=x,type!=y`.
//!
//! Parsing follows `k8s.io/apimachinery/pkg/fields`: terms split on unescaped commas, each term
//! split at its first `!=`, `==` or `=`, the value unescaped (`\,` `\=` `\\`; a bare `,` or `=` or
//! any other escape is an error). Nothing is trimmed, as in Kubernetes. A field that is absent
//! from an object compares as the empty string, so `x!=y` matches objects without `x`.
//!
//! Which fields may be selected depends on the kind: [`supported_fields`] lists them per kind,
//! [`check_field`] answers with the kind-specific 400 message kube-apiserver gives, and
//! [`extract`] reads a field's value out of a stored object the way each kind's
//! `ToSelectableFields` does (defaults, event field aliases).

mod extract;

use std::fmt;

use super::{Error, Result};

pub use extract::extract;

/// How a field requirement compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldOperator {
    /// `field=value` or `field==value`.
    Equals,
    /// `field!=value`.
    NotEquals,
}

/// One `field op value` term.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// The comparison.
    pub operator: FieldOperator,
    /// The unescaped value.
    pub value: String,
}

/// A conjunction of field requirements; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

// === impl FieldSelector ===

impl FieldSelector {
    /// Parse the string syntax; terms are kept in sorted order like Kubernetes'.
    pub fn parse(selector: &str) -> Result<Self> {
        let mut terms = split_terms(selector);
        terms.sort_unstable();
        let mut requirements = Vec::with_capacity(terms.len());
        for term in terms.into_iter().filter(|t| !t.is_empty()) {
            let Some((field, operator, raw)) = split_term(term) else {
                return Err(Error::FieldTerm {
                    selector: selector.to_string(),
                    term: term.to_string(),
                });
            };
            requirements.push(FieldRequirement {
                field: field.to_string(),
                operator,
                value: unescape_value(raw)?,
            });
        }
        Ok(FieldSelector { requirements })
    }

    /// Matches every object.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Does this selector match every object?
    pub fn is_everything(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, in sorted order.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// The fields this selector reads (with repeats if a field appears twice).
    pub fn fields(&self) -> impl Iterator<Item = &str> + '_ {
        self.requirements.iter().map(|r| r.field.as_str())
    }

    /// The value an `field=value` requirement pins, if any (a list can then use an index).
    pub fn exact_value(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.operator == FieldOperator::Equals)
            .map(|r| r.value.as_str())
    }

    /// Match with `get` returning each field's value (`None` counts as "").
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|r| {
            let got = get(&r.field).unwrap_or_default();
            (got == r.value) == (r.operator == FieldOperator::Equals)
        })
    }

    /// Match a stored object, reading fields with [`extract`].
    pub fn matches_object(&self, object: &serde_json::Value) -> bool {
        self.matches(|f| extract(object, f))
    }

    /// Reject fields that `group`/`kind` does not support, as kube-apiserver does with a 400.
    pub fn check_supported(&self, group: &str, kind: &str) -> Result<()> {
        self.fields().try_for_each(|f| check_field(group, kind, f))
    }

    /// Reject fields a custom resource does not support: `metadata.name`, `metadata.namespace`
    /// when namespaced, and the CRD version's `selectableFields` (paths without the leading dot).
    pub fn check_custom<S: AsRef<str>>(&self, namespaced: bool, selectable: &[S]) -> Result<()> {
        self.fields().try_for_each(|f| {
            let ok = f == "metadata.name"
                || (namespaced && f == "metadata.namespace")
                || selectable
                    .iter()
                    .any(|s| s.as_ref().trim_start_matches('.') == f);
            if ok {
                Ok(())
            } else {
                Err(unsupported(f, format!("field label not supported: {f}")))
            }
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = match r.operator {
                FieldOperator::Equals => "=",
                FieldOperator::NotEquals => "!=",
            };
            write!(f, "{}{op}{}", r.field, escape_value(&r.value))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for FieldSelector {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

/// Split on commas not preceded by a backslash; escapes stay in the terms.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in selector.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Split at the first operator; `!=` and `==` are tried before `=` at each position.
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, operator) in [
            ("!=", FieldOperator::NotEquals),
            ("==", FieldOperator::Equals),
            ("=", FieldOperator::Equals),
        ] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], operator, value));
            }
        }
    }
    None
}

fn unescape_value(s: &str) -> Result<String> {
    let mut out = String::with_capacity(s.len());
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            match c {
                '\\' | ',' | '=' => out.push(c),
                other => return Err(Error::FieldEscape(format!("\\{other}"))),
            }
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            ',' | '=' => return Err(Error::FieldUnescaped(c)),
            other => out.push(other),
        }
    }
    if escaped {
        return Err(Error::FieldEscape("\\".to_string()));
    }
    Ok(out)
}

/// The inverse of the unescaping: what a client puts in a selector to match `value` exactly.
pub fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

const META: &[&str] = &["metadata.name", "metadata.namespace"];

/// The fields kube-apiserver lets clients select on for a built-in kind (its field label
/// conversion functions); every other kind supports `metadata.name` and `metadata.namespace`.
pub fn supported_fields(group: &str, kind: &str) -> &'static [&'static str] {
    registered_fields(group, kind).unwrap_or(META)
}

/// The kinds for which Kubernetes registers a field label conversion function.
fn registered_fields(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    Some(match (group, kind) {
        ("", "Pod") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("", "Node") => &["metadata.name", "spec.unschedulable"],
        ("", "ReplicationController") => {
            &["metadata.name", "metadata.namespace", "status.replicas"]
        }
        ("", "Event") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
            "metadata.namespace",
            "metadata.name",
        ],
        ("events.k8s.io", "Event") => &[
            "reason",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reportingController",
            "source",
            "type",
            "metadata.namespace",
            "metadata.name",
        ],
        ("", "Namespace") => &["status.phase", "metadata.name"],
        ("", "Secret") => &["type", "metadata.namespace", "metadata.name"],
        ("", "Service") => &[
            "metadata.namespace",
            "metadata.name",
            "spec.clusterIP",
            "spec.type",
        ],
        ("batch", "Job") => &["metadata.name", "metadata.namespace", "status.successful"],
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            &["metadata.name", "spec.signerName"]
        }
        _ => return None,
    })
}

/// May `field` be selected on for `group`/`kind`? The error carries kube-apiserver's message for
/// that kind. Pods also accept `spec.host`, the old name of `spec.nodeName`.
pub fn check_field(group: &str, kind: &str, field: &str) -> Result<()> {
    if supported_fields(group, kind).contains(&field)
        || ((group, kind, field) == ("", "Pod", "spec.host"))
    {
        return Ok(());
    }
    let message = match (group, kind) {
        ("batch", "Job") => format!("field label {field:?} not supported for Job"),
        _ if registered_fields(group, kind).is_some() => format!("field label not supported: {field}"),
        _ => format!(
            "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        ),
    };
    Err(unsupported(field, message))
}

fn unsupported(field: &str, message: String) -> Error {
    Error::UnsupportedField {
        field: field.to_string(),
        message,
    }
}
