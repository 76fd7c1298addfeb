//! Kubernetes' semver library: `semver('1.2.3')`, `isSemver(s)`, and on a version `major()`,
//! `minor()`, `patch()` and the comparisons (`isGreaterThan`, `isLessThan`, `compareTo`,
//! shared with quantities in [`super`]). Versions are `MAJOR.MINOR.PATCH[-PRE][+BUILD]`;
//! build metadata does not take part in ordering, pre-releases order before their release.

use std::cmp::Ordering;

use cel::Value;

use super::{opaque, opaque_arg, string_arg};

/// A semantic version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semver {
    core: [u64; 3],
    pre: Vec<String>,
}

impl cel::objects::Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

fn numeric(part: &str) -> Option<u64> {
    // No leading zeros, as semver 2.0 says.
    if part.is_empty() || (part.len() > 1 && part.starts_with('0')) {
        return None;
    }
    part.parse().ok()
}

fn parse_semver(s: &str) -> Result<Semver, String> {
    let invalid = || format!("No Major.Minor.Patch elements found in {s:?}");
    let without_build = s.split_once('+').map_or(s, |(v, _)| v);
    let (core, pre) = match without_build.split_once('-') {
        Some((c, p)) => (c, p.split('.').map(str::to_owned).collect()),
        None => (without_build, Vec::new()),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let [a, b, c] = parts.as_slice() else {
        return Err(invalid());
    };
    let core = [
        numeric(a).ok_or_else(invalid)?,
        numeric(b).ok_or_else(invalid)?,
        numeric(c).ok_or_else(invalid)?,
    ];
    Ok(Semver { core, pre })
}

impl Semver {
    /// semver 2.0 precedence.
    pub(super) fn order(&self, other: &Semver) -> Ordering {
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (x, y) in self.pre.iter().zip(&other.pre) {
                        let o = match (x.parse::<u64>(), y.parse::<u64>()) {
                            (Ok(a), Ok(b)) => a.cmp(&b),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            _ => x.cmp(y),
                        };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }
}

/// `semver(s)`.
pub(super) fn parse(args: &[Value]) -> Result<Value, String> {
    Ok(opaque(parse_semver(string_arg(args, 0)?)?))
}

/// `isSemver(s)`.
pub(super) fn is_semver(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(parse_semver(string_arg(args, 0)?).is_ok()))
}

fn part(args: &[Value], i: usize) -> Result<Value, String> {
    let v = opaque_arg::<Semver>(args, 0, "semver")?;
    Ok(Value::Int(
        i64::try_from(v.core[i]).map_err(|e| e.to_string())?,
    ))
}

/// `v.major()`.
pub(super) fn major(args: &[Value]) -> Result<Value, String> {
    part(args, 0)
}

/// `v.minor()`.
pub(super) fn minor(args: &[Value]) -> Result<Value, String> {
    part(args, 1)
}

/// `v.patch()`.
pub(super) fn patch(args: &[Value]) -> Result<Value, String> {
    part(args, 2)
}
