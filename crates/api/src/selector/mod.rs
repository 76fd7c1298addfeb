//! Label and field selectors, as `?labelSelector=` / `?fieldSelector=` and `metav1.LabelSelector`
//! objects use them.
//!
//! Pure data: parsing, validation with Kubernetes' rules and wording, and matching. The handlers
//! turn a parse [`Error`] into a 400 `Status` whose message is the error's text, which is what
//! kube-apiserver sends for the same input.
//!
//! - [`label`]: `a=b,c in (x,y),!d` and `metav1.LabelSelector` (matchLabels/matchExpressions).
//! - [`field`]: `metadata.name=x,type!=y` with `\,` `\=` `\\` escapes, the fields each kind
//!   supports, and how to read a field out of an object.
//! - [`validation`]: qualified-name and label-value checks, shared with object validation.

pub mod field;
pub mod label;
pub mod validation;

#[cfg(test)]
mod tests;

pub use field::FieldSelector;
pub use label::LabelSelector;

/// Why a selector was rejected. The `Display` text is the message Kubernetes uses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// One requirement of a label selector is malformed or has an invalid key or value.
    #[error("unable to parse requirement: {0}")]
    Requirement(String),
    /// The label selector's structure is wrong between requirements (a stray token, a trailing
    /// comma).
    #[error("{0}")]
    LabelSyntax(String),
    /// A `metav1.LabelSelector` object is invalid (unknown operator, values where none belong).
    #[error("{0}")]
    LabelSelectorObject(String),
    /// A field selector term has no `=`, `==` or `!=`.
    #[error("invalid selector: '{selector}'; can't understand '{term}'")]
    FieldTerm {
        /// The whole selector.
        selector: String,
        /// The term that could not be split.
        term: String,
    },
    /// A backslash in a field selector value escapes something other than `\`, `,` or `=`.
    #[error("invalid field selector: invalid escape sequence: {0}")]
    FieldEscape(String),
    /// A field selector value contains an unescaped `,` or `=`.
    #[error("invalid field selector: unescaped character in value: {0}")]
    FieldUnescaped(char),
    /// The field cannot be selected on for this kind; `message` is kind-specific, as in Kubernetes.
    #[error("{message}")]
    UnsupportedField {
        /// The field asked for.
        field: String,
        /// What to tell the user.
        message: String,
    },
}

/// Selector results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
