//! A `ResourceInterpreter`'s CEL rules, compiled once and evaluated over objects: how many
//! replicas an object asks for and what each needs, where a divided count is written, when a
//! member's copy is healthy, how the members' status fields add up on the hub, which objects
//! follow it, and which fields the member keeps.
//!
//! [`Interpreter::compile`] checks every rule (a bad one is refused with its field and the CEL
//! error, which is what admission answers with a 422); evaluation errors are returned, never
//! panics, so a rule failing on one object is reported on that object's binding.

mod fields;
mod status;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_apis::config::v1alpha1::{
    Aggregate, InterpretedKind, ResourceInterpreter, ResourceInterpreterSpec,
};
use flotilla_cel::Expr;
use serde_json::Value;

pub use status::Collected;

/// A rule that does not compile or is malformed: the field it sits in
/// (`spec.health.healthy`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// The field of the ResourceInterpreter, as admission names it.
    pub field: String,
    /// The CEL compiler's message, or what is wrong with the path.
    pub message: String,
}

/// A rule that failed on one object: which rule and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    /// The rule, as `spec.<rule>` names it (`replicas.count`).
    pub rule: &'static str,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rule {}: {}", self.rule, self.message)
    }
}

impl std::error::Error for EvalError {}

/// What an object asks for: its replica count and what each replica requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replicas {
    /// The replica count.
    pub count: i64,
    /// Resource name → quantity, per replica (as written: `"100m"`, `"1Gi"`, `2`).
    pub requests: BTreeMap<String, String>,
}

/// Whether a member's copy is healthy, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// Healthy.
    pub healthy: bool,
    /// Why not (empty when healthy or when the interpreter gives no reason).
    pub reason: String,
}

/// An object that follows the workload to its clusters.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dependency {
    /// Its apiVersion.
    pub api_version: String,
    /// Its kind.
    pub kind: String,
    /// Its namespace (the workload's own when the rule names none; empty for a
    /// cluster-scoped workload).
    pub namespace: String,
    /// Its name.
    pub name: String,
}

/// One status field's compiled rule.
struct StatusField {
    /// Where it goes under `status`, split at the dots.
    path: Vec<String>,
    /// How to read it from a member's copy; `None` reads `status.<path>`.
    expression: Option<Arc<Expr>>,
    aggregate: Aggregate,
}

/// A compiled ResourceInterpreter.
pub struct Interpreter {
    target: InterpretedKind,
    replicas: Option<Pair>,
    revise: Option<Vec<String>>,
    health: Option<Pair>,
    status: Vec<StatusField>,
    dependencies: Option<Arc<Expr>>,
    retain: Vec<Vec<String>>,
}

/// The interpreter used for `api_version`/`kind` among `all`: the oldest one targeting it
/// (then the first by name), leaving out those being deleted.
pub fn choose<'a>(
    all: impl IntoIterator<Item = &'a ResourceInterpreter>,
    api_version: &str,
    kind: &str,
) -> Option<&'a ResourceInterpreter> {
    all.into_iter()
        .filter(|ri| ri.spec.target.api_version == api_version && ri.spec.target.kind == kind)
        .filter(|ri| ri.metadata.deletion_timestamp.is_none())
        .min_by(|a, b| {
            let created = |ri: &ResourceInterpreter| ri.metadata.creation_timestamp.clone();
            created(a)
                .cmp(&created(b))
                .then_with(|| a.metadata.name.cmp(&b.metadata.name))
        })
}

/// Compile `source` found at `field`, noting a failure in `errors`.
fn compiled(source: &str, field: &str, errors: &mut Vec<RuleError>) -> Option<Arc<Expr>> {
    if source.trim().is_empty() {
        errors.push(RuleError {
            field: field.to_owned(),
            message: "Required value: a CEL expression".to_owned(),
        });
        return None;
    }
    match flotilla_cel::compile(source) {
        Ok(e) => Some(e),
        Err(message) => {
            errors.push(RuleError {
                field: field.to_owned(),
                message: format!("Invalid value: {source:?}: compilation failed: {message}"),
            });
            None
        }
    }
}

/// A dotted path found at `field`, noting a malformed one in `errors`.
fn path(source: &str, field: &str, errors: &mut Vec<RuleError>) -> Vec<String> {
    match fields::parse(source) {
        Ok(p) => p,
        Err(why) => {
            errors.push(RuleError {
                field: field.to_owned(),
                message: format!("Invalid value: {source:?}: {why}"),
            });
            Vec::new()
        }
    }
}

impl Interpreter {
    /// Compile every rule of `spec`; every rule that fails, with its field.
    pub fn compile(spec: &ResourceInterpreterSpec) -> Result<Interpreter, Vec<RuleError>> {
        let mut errors = Vec::new();
        if spec.target.api_version.trim().is_empty() {
            errors.push(required("spec.target.apiVersion"));
        }
        if spec.target.kind.trim().is_empty() {
            errors.push(required("spec.target.kind"));
        }
        let replicas = spec.replicas.as_ref().map(|r| {
            let count = compiled(&r.count, "spec.replicas.count", &mut errors);
            let requests = r
                .requests
                .as_deref()
                .and_then(|s| compiled(s, "spec.replicas.requests", &mut errors));
            (count, requests)
        });
        let revise = spec
            .revise_replicas
            .as_ref()
            .map(|r| path(&r.path, "spec.reviseReplicas.path", &mut errors));
        let health = spec.health.as_ref().map(|h| {
            let healthy = compiled(&h.healthy, "spec.health.healthy", &mut errors);
            let reason = h
                .reason
                .as_deref()
                .and_then(|s| compiled(s, "spec.health.reason", &mut errors));
            (healthy, reason)
        });
        let mut status = Vec::new();
        for (i, f) in spec.status.iter().flat_map(|s| &s.fields).enumerate() {
            let at = format!("spec.status.fields[{i}]");
            let path = path(&f.name, &format!("{at}.name"), &mut errors);
            let expression = f
                .expression
                .as_deref()
                .and_then(|s| compiled(s, &format!("{at}.expression"), &mut errors));
            status.push(StatusField {
                path,
                expression,
                aggregate: f.aggregate,
            });
        }
        let dependencies = spec
            .dependencies
            .as_ref()
            .and_then(|d| compiled(&d.expression, "spec.dependencies.expression", &mut errors));
        let retain = spec
            .retain
            .iter()
            .flat_map(|r| r.paths.iter().enumerate())
            .map(|(i, p)| path(p, &format!("spec.retain.paths[{i}]"), &mut errors))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        // Every rule compiled: the options below are all set where their rule is given.
        Ok(Interpreter {
            target: spec.target.clone(),
            replicas: both(replicas),
            revise,
            health: both(health),
            status,
            dependencies,
            retain,
        })
    }

    /// Whether it has a `replicas` rule.
    pub fn reads_replicas(&self) -> bool {
        self.replicas.is_some()
    }

    /// The kind this interpreter describes.
    pub fn target(&self) -> &InterpretedKind {
        &self.target
    }

    /// The replicas `obj` asks for, if the interpreter says how to read them.
    pub fn replicas(&self, obj: &Value) -> Option<Result<Replicas, EvalError>> {
        let (count, requests) = self.replicas.as_ref()?;
        Some(replicas(count, requests.as_deref(), obj))
    }

    /// Write `count` where a divided count goes in `obj`; `None` without that rule.
    pub fn revise_replicas(&self, obj: &mut Value, count: i64) -> Option<Result<(), EvalError>> {
        let path = self.revise.as_ref()?;
        Some(
            fields::set(obj, path, Value::from(count)).map_err(|message| EvalError {
                rule: "reviseReplicas.path",
                message,
            }),
        )
    }

    /// Whether a member's copy `obj` is healthy, if the interpreter says how to tell.
    pub fn health(&self, obj: &Value) -> Option<Result<Health, EvalError>> {
        let (healthy, reason) = self.health.as_ref()?;
        Some(health(healthy, reason.as_deref(), obj))
    }

    /// Whether the interpreter says how to tell a member's copy healthy.
    pub fn reads_health(&self) -> bool {
        self.health.is_some()
    }

    /// Whether a rule reads the members' copies (health, or status fields), so their whole
    /// status must be fed back.
    pub fn reads_members(&self) -> bool {
        self.reads_health() || self.collects_status()
    }

    /// How many status fields it collects.
    pub fn status_fields(&self) -> usize {
        self.status.len()
    }

    /// Whether the interpreter collects any status.
    pub fn collects_status(&self) -> bool {
        !self.status.is_empty()
    }

    /// The status fields of one member's copy `obj`, to be combined by [`Interpreter::aggregate`].
    pub fn collect(&self, obj: &Value) -> Result<Collected, EvalError> {
        status::collect(&self.status, obj)
    }

    /// The hub object's `status` fields from every member's [`Collected`] fields, by cluster
    /// name (in the order given), as a JSON object to merge into the hub object's status.
    pub fn aggregate(&self, members: &[(&str, &Collected)]) -> Result<Value, EvalError> {
        status::aggregate(&self.status, members)
    }

    /// The objects that follow `obj`, if the interpreter names them.
    pub fn dependencies(&self, obj: &Value) -> Option<Result<Vec<Dependency>, EvalError>> {
        let expr = self.dependencies.as_ref()?;
        Some(dependencies(expr, obj))
    }

    /// Keep in `desired` (what flotilla is about to write to a member) the values `observed`
    /// (the member's copy) has at the retained paths; a path the member's copy lacks is left
    /// as desired.
    pub fn retain(&self, desired: &mut Value, observed: &Value) {
        for path in &self.retain {
            if let Some(v) = fields::get(observed, path) {
                // A path that cannot be set (an array on the way) is left as desired.
                let _ = fields::set(desired, path, v.clone());
            }
        }
    }

    /// Leaves the retained paths out of `desired` (what flotilla is about to write to a
    /// member): under server-side apply flotilla then never owns those fields, and the member's
    /// own values (an autoscaler's replicas, a paused flag) stay as the member sets them.
    pub fn release(&self, desired: &mut Value) {
        for path in &self.retain {
            fields::remove(desired, path);
        }
    }

    /// What each rule returns for `obj`, for `flotilla explain interpret`: the rule's name and
    /// its value or error.
    pub fn explain(&self, obj: &Value) -> Vec<(&'static str, Result<Value, String>)> {
        let mut out = Vec::new();
        let shown = |r: Result<Value, EvalError>| r.map_err(|e| e.message);
        if let Some(r) = self.replicas(obj) {
            let v = r.map(|r| serde_json::json!({"count": r.count, "requests": r.requests}));
            out.push(("replicas", shown(v)));
        }
        if let Some(r) = self.health(obj) {
            let v = r.map(|h| serde_json::json!({"healthy": h.healthy, "reason": h.reason}));
            out.push(("health", shown(v)));
        }
        if self.collects_status() {
            let v = self
                .collect(obj)
                .and_then(|c| self.aggregate(&[("self", &c)]));
            out.push(("status", shown(v)));
        }
        if let Some(r) = self.dependencies(obj) {
            let v = r.map(|deps| {
                deps.iter()
                    .map(|d| {
                        serde_json::json!({"apiVersion": d.api_version, "kind": d.kind,
                            "namespace": d.namespace, "name": d.name})
                    })
                    .collect::<Value>()
            });
            out.push(("dependencies", shown(v)));
        }
        out
    }
}

/// A rule's expression and its optional companion, once both compiled.
type Pair = (Arc<Expr>, Companion);
/// The optional second expression of a rule (`requests`, `reason`).
type Companion = Option<Arc<Expr>>;

/// A rule compiled as a pair; `None` when it was not given (or, never here, did not compile).
fn both(p: Option<(Option<Arc<Expr>>, Companion)>) -> Option<Pair> {
    p.and_then(|(a, b)| Some((a?, b)))
}

fn required(field: &str) -> RuleError {
    RuleError {
        field: field.to_owned(),
        message: "Required value".to_owned(),
    }
}

/// Evaluate `expr` with `self` bound to `obj`.
fn eval(expr: &Expr, rule: &'static str, obj: &Value) -> Result<Value, EvalError> {
    expr.eval(&[("self", obj.into())])
        .map_err(|message| EvalError { rule, message })
}

fn replicas(count: &Expr, requests: Option<&Expr>, obj: &Value) -> Result<Replicas, EvalError> {
    let n = eval(count, "replicas.count", obj)?;
    let count = n
        .as_i64()
        .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
        .filter(|c| *c >= 0)
        .ok_or_else(|| EvalError {
            rule: "replicas.count",
            message: format!("expected a replica count (an int of 0 or more), got {n}"),
        })?;
    let mut out = Replicas {
        count,
        requests: BTreeMap::new(),
    };
    let Some(requests) = requests else {
        return Ok(out);
    };
    let r = eval(requests, "replicas.requests", obj)?;
    let not_a_map = || EvalError {
        rule: "replicas.requests",
        message: format!("expected a map of resource name to quantity, got {r}"),
    };
    match &r {
        Value::Null => {}
        Value::Object(m) => {
            for (name, q) in m {
                let q = match q {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(not_a_map()),
                };
                out.requests.insert(name.clone(), q);
            }
        }
        _ => return Err(not_a_map()),
    }
    Ok(out)
}

fn health(healthy: &Expr, reason: Option<&Expr>, obj: &Value) -> Result<Health, EvalError> {
    let ok = match eval(healthy, "health.healthy", obj)? {
        Value::Bool(b) => b,
        other => {
            return Err(EvalError {
                rule: "health.healthy",
                message: format!("expected a boolean, got {other}"),
            })
        }
    };
    let reason = match reason.filter(|_| !ok) {
        Some(r) => match eval(r, "health.reason", obj)? {
            Value::String(s) => s,
            other => other.to_string(),
        },
        None => String::new(),
    };
    Ok(Health {
        healthy: ok,
        reason,
    })
}

fn dependencies(expr: &Expr, obj: &Value) -> Result<Vec<Dependency>, EvalError> {
    let bad = |message: String| EvalError {
        rule: "dependencies.expression",
        message,
    };
    let list = match eval(expr, "dependencies.expression", obj)? {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        other => return Err(bad(format!("expected a list of objects, got {other}"))),
    };
    let own_ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_owned);
        let (Some(api_version), Some(kind), Some(name)) =
            (text("apiVersion"), text("kind"), text("name"))
        else {
            return Err(bad(format!(
                "each dependency needs string fields apiVersion, kind and name; got {item}"
            )));
        };
        out.push(Dependency {
            api_version,
            kind,
            namespace: text("namespace").unwrap_or_else(|| own_ns.to_owned()),
            name,
        });
    }
    out.sort();
    out.dedup();
    Ok(out)
}
