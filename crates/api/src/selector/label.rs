//! Label selectors: the `?labelSelector=` string syntax and `metav1.LabelSelector` objects.
//!
//! A [`LabelSelector`] is a conjunction of [`Requirement`]s. The string form accepts what
//! kube-apiserver accepts — `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
//! `a>1`, `a<1`, separated by commas, with free whitespace — and rejects what it rejects, with
//! the same messages. Requirements are kept sorted by key and value sets sorted and de-duplicated,
//! so [`Display`](std::fmt::Display) prints the canonical form Kubernetes prints.
//!
//! An empty selector matches everything. [`LabelSelector::nothing`] matches nothing: it is what
//! a *null* `metav1.LabelSelector` means where Kubernetes treats null as "select nothing" (a
//! PodDisruptionBudget, a NetworkPolicy peer); the caller knows which fields do.

mod parser;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use serde_json::{Map, Value};

use super::{validation, Error, Result};

/// How a requirement compares a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `key=value`.
    Equals,
    /// `key==value`.
    DoubleEquals,
    /// `key!=value` (also true when the label is absent).
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)` (also true when the label is absent).
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>N`: the label is an integer greater than N.
    GreaterThan,
    /// `key<N`: the label is an integer less than N.
    LessThan,
}

/// Read access to a set of labels, so selectors match maps of any shape without copying.
pub trait Labels {
    /// The value of label `key`, if set.
    fn label(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl<S: std::hash::BuildHasher> Labels for HashMap<String, String, S> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

/// `metadata.labels` as JSON; a non-string value counts as absent (the API never stores one).
impl Labels for Map<String, Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

/// One condition on one label key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

// === impl Requirement ===

impl Requirement {
    /// A validated requirement; `values` are sorted and de-duplicated.
    pub fn new(key: impl Into<String>, operator: Operator, values: Vec<String>) -> Result<Self> {
        Self::checked(key.into(), operator, values).map_err(Error::Requirement)
    }

    /// Validate as `labels.NewRequirement` does, returning its message on failure.
    fn checked(key: String, operator: Operator, mut values: Vec<String>) -> Result<Self, String> {
        let mut errs = Vec::new();
        let key_errs = validation::qualified_name_errors(&key);
        if !key_errs.is_empty() {
            errs.push(format!(
                "key: Invalid value: {key:?}: {}",
                key_errs.join("; ")
            ));
        }
        let count_problem = match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                Some("for 'in', 'notin' operators, values set can't be empty")
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                Some("exact-match compatibility requires one single value")
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                Some("values set must be empty for exists and does not exist")
            }
            Operator::GreaterThan | Operator::LessThan if values.len() != 1 => {
                Some("for 'Gt', 'Lt' operators, exactly one value is required")
            }
            _ => None,
        };
        if let Some(problem) = count_problem {
            errs.push(format!(
                "values: Invalid value: {}: {problem}",
                go_string_slice(&values)
            ));
        }
        if matches!(operator, Operator::GreaterThan | Operator::LessThan) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value \
                         must be an integer"
                    ));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let value_errs = validation::label_value_errors(v);
            if !value_errs.is_empty() {
                errs.push(format!(
                    "values[{i}][{key}]: Invalid value: {v:?}: {}",
                    value_errs.join("; ")
                ));
            }
        }
        if !errs.is_empty() {
            return Err(aggregate(errs));
        }
        values.sort();
        values.dedup();
        Ok(Requirement {
            key,
            operator,
            values,
        })
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The comparison.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted (empty for `Exists`/`DoesNotExist`).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Does a set of labels satisfy this requirement?
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        let got = labels.label(&self.key);
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => got.is_some_and(has),
            Operator::NotEquals | Operator::NotIn => !got.is_some_and(has),
            Operator::Exists => got.is_some(),
            Operator::DoesNotExist => got.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(got), [want]) = (got, self.values.as_slice()) else {
                    return false;
                };
                match (got.parse::<i64>(), want.parse::<i64>()) {
                    (Ok(got), Ok(want)) if self.operator == Operator::GreaterThan => got > want,
                    (Ok(got), Ok(want)) => got < want,
                    _ => false,
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = self.values.join(",");
        match self.operator {
            Operator::Equals => write!(f, "{}={values}", self.key),
            Operator::DoubleEquals => write!(f, "{}=={values}", self.key),
            Operator::NotEquals => write!(f, "{}!={values}", self.key),
            Operator::In => write!(f, "{} in ({values})", self.key),
            Operator::NotIn => write!(f, "{} notin ({values})", self.key),
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::GreaterThan => write!(f, "{}>{values}", self.key),
            Operator::LessThan => write!(f, "{}<{values}", self.key),
        }
    }
}

/// `[]string{"a", "b"}`, the way Go's `%#v` prints the value in a field error.
fn go_string_slice(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// One message from several, as `utilerrors.NewAggregate` joins them.
fn aggregate(mut errs: Vec<String>) -> String {
    let mut seen = std::collections::HashSet::new();
    errs.retain(|e| seen.insert(e.clone()));
    if errs.len() == 1 {
        errs.remove(0)
    } else {
        format!("[{}]", errs.join(", "))
    }
}

/// A conjunction of requirements, or the selector that matches nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

// === impl LabelSelector ===

impl LabelSelector {
    /// Parse the string syntax; the empty string selects everything.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(Self::from_requirements(parser::parse(s)?))
    }

    /// Matches every object.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Matches no object (a null `metav1.LabelSelector` where null means "none").
    pub fn nothing() -> Self {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// A selector from requirements, sorted by key like Kubernetes'.
    pub fn from_requirements(mut requirements: Vec<Requirement>) -> Self {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        LabelSelector {
            requirements,
            nothing: false,
        }
    }

    /// `key=value` for each entry (a Service's or ReplicationController's `spec.selector`);
    /// an empty map selects everything.
    pub fn from_set(set: &BTreeMap<String, String>) -> Result<Self> {
        let reqs = set
            .iter()
            .map(|(k, v)| Requirement::new(k.clone(), Operator::Equals, vec![v.clone()]))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::from_requirements(reqs))
    }

    /// Convert a `metav1.LabelSelector` (`LabelSelectorAsSelector`): no matchLabels and no
    /// matchExpressions selects everything.
    pub fn from_metav1(sel: &metav1::LabelSelector) -> Result<Self> {
        let invalid = Error::LabelSelectorObject;
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(
                Requirement::checked(k.clone(), Operator::Equals, vec![v.clone()])
                    .map_err(invalid)?,
            );
        }
        for expr in sel.match_expressions.iter().flatten() {
            let op = match expr.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(invalid(format!(
                        "{other:?} is not a valid label selector operator"
                    )))
                }
            };
            let values = expr.values.clone().unwrap_or_default();
            reqs.push(Requirement::checked(expr.key.clone(), op, values).map_err(invalid)?);
        }
        Ok(Self::from_requirements(reqs))
    }

    /// Convert a `metav1.LabelSelector` given as JSON; `null` becomes [`LabelSelector::nothing`].
    pub fn from_json(value: &Value) -> Result<Self> {
        if value.is_null() {
            return Ok(Self::nothing());
        }
        if !value.is_object() {
            return Err(Error::LabelSelectorObject(format!(
                "a label selector must be an object with matchLabels and/or matchExpressions, \
                 not {value}"
            )));
        }
        let sel: metav1::LabelSelector = serde_json::from_value(value.clone())
            .map_err(|e| Error::LabelSelectorObject(format!("invalid label selector: {e}")))?;
        Self::from_metav1(&sel)
    }

    /// Does this selector match every object?
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Does this selector match no object at all?
    pub fn is_nothing(&self) -> bool {
        self.nothing
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Do these labels satisfy every requirement?
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Match an object by its `metadata.labels` (absent labels are an empty set).
    pub fn matches_object(&self, object: &Value) -> bool {
        match object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
        {
            Some(labels) => self.matches(labels),
            None => self.matches(&BTreeMap::<String, String>::new()),
        }
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for LabelSelector {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}
