//! CEL expressions evaluated over JSON values, for the rules of a CRD's
//! `x-kubernetes-validations` and for a later resource interpreter.
//!
//! An [`Expr`] is compiled once ([`compile`] keeps every expression it compiled, keyed by its
//! source: a CRD's rules are met on every write of its objects, and a rule's program depends
//! on nothing but its text) and evaluated with variables bound from `serde_json` values
//! (`self`, `oldSelf`). The interpreter is cel-rust's; this crate only adapts it.

pub mod cost;
mod k8s;
pub mod typecheck;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde_json::Value;

/// A variable's value.
#[derive(Clone, Copy, Debug)]
pub enum Var<'a> {
    /// A plain value.
    Json(&'a Value),
    /// A CEL optional (`optional.of(v)` or `optional.none()`), as a CRD rule with
    /// `optionalOldSelf` sees `oldSelf`.
    Optional(Option<&'a Value>),
}

impl<'a> From<&'a Value> for Var<'a> {
    fn from(v: &'a Value) -> Self {
        Var::Json(v)
    }
}

fn opaque(v: cel::objects::OptionalValue) -> cel::Value {
    cel::Value::Opaque(Arc::new(v))
}

/// A compiled expression.
pub struct Expr {
    program: cel::Program,
    source: String,
}

/// The most compiled expressions kept; past it the cache starts over (rules come from CRDs,
/// which a cluster holds few of, so this is a bound against misuse, not a working size).
const CACHE_LIMIT: usize = 8192;

/// Compile `source`, or return the expression compiled before from the same source. The
/// error is the parser's message.
pub fn compile(source: &str) -> Result<Arc<Expr>, String> {
    type Cache = Mutex<HashMap<String, Result<Arc<Expr>, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock();
    if let Some(hit) = cache.get(source) {
        return hit.clone();
    }
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    let compiled = compile_uncached(source).map(Arc::new);
    cache.insert(source.to_owned(), compiled.clone());
    compiled
}

/// The environment every expression is compiled and run in: CEL's standard library with the
/// strings, lists and math extensions and Kubernetes' own libraries ([`k8s`]), as Kubernetes'
/// CEL environment has them (`'Ab'.lowerAscii()`, `self.name.split('-')`, `math.greatest(…)`,
/// `self.items.isSorted()`, `quantity(self.size).isLessThan(quantity('1Gi'))`).
fn env() -> Option<&'static Arc<cel::Env>> {
    static ENV: OnceLock<Option<Arc<cel::Env>>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = cel::Env::stdlib();
        env.add_extension(cel::extensions::strings).ok()?;
        env.add_extension(cel::extensions::lists).ok()?;
        env.add_extension(cel::extensions::math).ok()?;
        k8s::extension(&mut env).ok()?;
        Some(Arc::new(env))
    })
    .as_ref()
}

fn compile_uncached(source: &str) -> Result<Expr, String> {
    let env = env().ok_or("the CEL environment could not be built")?;
    // cel-rust's parser can panic on some malformed input; a bad rule must be an error.
    // Compiling only reads the environment, so nothing is left half-changed by a panic.
    let compile = std::panic::AssertUnwindSafe(|| env.compile(source));
    let parsed =
        std::panic::catch_unwind(compile).map_err(|_| format!("cannot parse {source:?}"))?;
    // cel-go sets its source line and caret off with " | "; cel-rust with "| ".
    let program = parsed.map_err(|e| e.to_string().replace("\n| ", "\n | "))?;
    Ok(Expr {
        program,
        source: source.to_owned(),
    })
}

impl Expr {
    /// The source this was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The estimated worst-case cost of one evaluation with variables of these shapes, in
    /// cel-go's cost units ([`cost`]).
    pub fn estimated_cost(&self, vars: &[(&str, &cost::Shape)]) -> u64 {
        cost::estimate(self.program.expression(), vars)
    }

    /// Whether the expression reads variable `name` (`oldSelf` makes a transition rule).
    pub fn uses(&self, name: &str) -> bool {
        self.program.references().has_variable(name)
    }

    /// The function a failed evaluation lacked, when `err` (from [`Expr::eval`]) says the
    /// expression calls one this environment does not have (Kubernetes' own CEL libraries:
    /// `quantity`, `url`, `isSorted`, …), so a caller can tell that from a rule that failed.
    pub fn missing_function<'e>(&self, err: &'e str) -> Option<&'e str> {
        let name = err
            .strip_prefix("Undeclared reference to '")?
            .strip_suffix('\'')?;
        self.program.references().has_function(name).then_some(name)
    }

    /// Evaluate with `vars` bound; the result as JSON.
    pub fn eval(&self, vars: &[(&str, Var<'_>)]) -> Result<Value, String> {
        let mut ctx = match env() {
            Some(env) => cel::Context::with_env(env.clone()),
            None => cel::Context::default(),
        };
        for (name, v) in vars {
            let json = |v: &Value| Ok::<_, String>(to_cel(v));
            let v = match v {
                Var::Json(v) => json(v)?,
                Var::Optional(Some(v)) => opaque(cel::objects::OptionalValue::of(json(v)?)),
                Var::Optional(None) => opaque(cel::objects::OptionalValue::none()),
            };
            ctx.add_variable_from_value(*name, v);
        }
        let out = self.program.execute(&ctx).map_err(|e| e.to_string())?;
        out.json().map_err(|e| e.to_string())
    }

    /// Evaluate to a boolean; any other result is an error.
    pub fn eval_bool(&self, vars: &[(&str, Var<'_>)]) -> Result<bool, String> {
        match self.eval(vars)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!("expected a boolean, got {other}")),
        }
    }

    /// Evaluate to a string; any other result is an error.
    pub fn eval_string(&self, vars: &[(&str, Var<'_>)]) -> Result<String, String> {
        match self.eval(vars)? {
            Value::String(s) => Ok(s),
            other => Err(format!("expected a string, got {other}")),
        }
    }
}

/// A JSON value as CEL sees it in Kubernetes: JSON integers are `int` (as kube decodes them
/// into int64), so `self.count % 2 == 0` compares like types.
fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(o) => {
            let map: HashMap<cel::objects::Key, cel::Value> = o
                .iter()
                .map(|(k, v)| (cel::objects::Key::String(Arc::new(k.clone())), to_cel(v)))
                .collect();
            cel::Value::Map(cel::objects::Map { map: Arc::new(map) })
        }
    }
}

#[cfg(test)]
mod tests;
