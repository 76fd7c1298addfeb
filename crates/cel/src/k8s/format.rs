//! Kubernetes' format library: named string formats (`format.dns1123Label()`,
//! `format.named('uuid')`, …) whose `validate(s)` is `optional.none()` when `s` is valid, or
//! the list of what is wrong with it, worded as apimachinery's validators word it.

use std::sync::Arc;

use cel::objects::OptionalValue;
use cel::Value;

use super::{opaque, opaque_arg, string_arg};

/// A named format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format(&'static str);

impl cel::objects::Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

/// Calls `$then!` with the names of the formats `format.named` knows, so the list of
/// names and the `format.<name>()` functions registered for them are one list.
macro_rules! with_format_names {
    ($then:ident) => {
        $then!(
            "dns1123Label",
            "dns1123Subdomain",
            "dns1035Label",
            "qualifiedName",
            "dns1123LabelPrefix",
            "dns1123SubdomainPrefix",
            "dns1035LabelPrefix",
            "labelValue",
            "uri",
            "uuid",
            "byte",
            "date",
            "datetime"
        )
    };
}
pub(super) use with_format_names;

macro_rules! name_list {
    ($($n:literal),*) => {
        &[$($n),*]
    };
}

/// The formats `format.named` knows, by name.
const NAMES: &[&str] = with_format_names!(name_list);

const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn matches(re: &str, s: &str) -> bool {
    regex::Regex::new(re).is_ok_and(|r| r.is_match(s))
}

/// The errors of `s` against a format of at most `max` bytes matching `re`, worded `msg`.
fn bounded(s: &str, max: usize, re: &str, msg: &str) -> Vec<String> {
    let mut e = Vec::new();
    if s.len() > max {
        e.push(format!("must be no more than {max} characters"));
    }
    if !matches(re, s) {
        e.push(msg.to_owned());
    }
    e
}

fn label(s: &str) -> Vec<String> {
    bounded(s, 63, "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", LABEL)
}

fn subdomain(s: &str) -> Vec<String> {
    bounded(
        s,
        253,
        r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        SUBDOMAIN,
    )
}

fn dns1035(s: &str) -> Vec<String> {
    bounded(s, 63, "^[a-z]([-a-z0-9]*[a-z0-9])?$", DNS1035)
}

fn qualified(s: &str) -> Vec<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) if !n.contains('/') => (Some(p), n),
        Some(_) => return vec![format!("{QUALIFIED} or a prefix")],
        None => (None, s),
    };
    let mut e = Vec::new();
    if let Some(p) = prefix {
        if p.is_empty() {
            e.push("prefix part must be non-empty".to_owned());
        } else {
            e.extend(subdomain(p).into_iter().map(|m| format!("prefix part {m}")));
        }
    }
    if name.is_empty() {
        e.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        e.push("name part must be no more than 63 characters".to_owned());
    }
    if !matches("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$", name) {
        e.push(QUALIFIED.to_owned());
    }
    e
}

fn label_value(s: &str) -> Vec<String> {
    bounded(
        s,
        63,
        "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$",
        LABEL_VALUE,
    )
}

/// A name that may be a prefix: a trailing dash is allowed (apimachinery masks it).
fn prefix(s: &str) -> String {
    match s.strip_suffix('-') {
        Some(rest) => format!("{rest}a"),
        None => s.to_owned(),
    }
}

fn check(format: &str, s: &str) -> Vec<String> {
    let one = |ok: bool, msg: &str| if ok { Vec::new() } else { vec![msg.to_owned()] };
    match format {
        "dns1123Label" => label(s),
        "dns1123Subdomain" => subdomain(s),
        "dns1035Label" => dns1035(s),
        "qualifiedName" => qualified(s),
        "dns1123LabelPrefix" => label(&prefix(s)),
        "dns1123SubdomainPrefix" => subdomain(&prefix(s)),
        "dns1035LabelPrefix" => dns1035(&prefix(s)),
        "labelValue" => label_value(s),
        "uri" => one(
            s.starts_with('/') || matches("^[A-Za-z][A-Za-z0-9+.-]*:", s),
            &format!("parse {s:?}: invalid URI for request"),
        ),
        "uuid" => one(
            matches(
                "^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
                s,
            ),
            "does not match the UUID format",
        ),
        "byte" => one(
            matches(
                "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
                s,
            ),
            "invalid base64",
        ),
        "date" => one(matches(r"^\d{4}-\d{2}-\d{2}$", s), "invalid date"),
        "datetime" => one(
            matches(
                r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$",
                s,
            ),
            "invalid datetime",
        ),
        _ => Vec::new(),
    }
}

/// `format.<name>()`.
pub(super) fn named_constant(name: &'static str) -> Value {
    opaque(Format(name))
}

/// `format.named(name)`: the format, or none for a name it does not know.
pub(super) fn named(args: &[Value]) -> Result<Value, String> {
    let name = string_arg(args, 0)?;
    let found = NAMES.iter().find(|n| **n == name);
    let v = match found {
        Some(n) => OptionalValue::of(opaque(Format(n))),
        None => OptionalValue::none(),
    };
    Ok(Value::Opaque(Arc::new(v)))
}

/// `f.validate(s)`: none when `s` is valid, else the errors.
pub(super) fn validate(args: &[Value]) -> Result<Value, String> {
    let f = opaque_arg::<Format>(args, 0, "format")?;
    let errors = check(f.0, string_arg(args, 1)?);
    let v = if errors.is_empty() {
        OptionalValue::none()
    } else {
        let list = errors
            .into_iter()
            .map(|e| Value::String(Arc::new(e)))
            .collect();
        OptionalValue::of(Value::List(Arc::new(list)))
    };
    Ok(Value::Opaque(Arc::new(v)))
}
