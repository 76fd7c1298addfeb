//! A static type check of an expression against the types of its variables, as Kubernetes'
//! ValidatingAdmissionPolicy controller runs one to fill `status.typeChecking`: it finds the
//! mistakes the CEL checker finds in such expressions — an operator applied to operands it has
//! no overload for (`object.spec.replicas > '1'`) and a field the schema does not have — and
//! words them as cel-go does (`found no matching overload for '_>_' applied to '(int, string)'`,
//! `undefined field 'x'`), with the position and a caret line.
//!
//! It is deliberately partial: whatever it cannot type (a function it does not know, a value of
//! an unknown shape) is `dyn`, which matches everything, so it warns only about real mistakes.

use std::collections::HashMap;
use std::fmt;

use cel::common::ast::{Expr, IdedExpr, LiteralValue, SourceInfo};

/// A CEL type, as far as the check needs one.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// Unknown: matches anything.
    Dyn,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `list(T)`.
    List(Box<Type>),
    /// `map(string, T)`.
    Map(Box<Type>),
    /// An object whose fields the [`Fields`] provider knows, by its type name.
    Object(String),
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Null => f.write_str("null_type"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::List(t) => write!(f, "list({t})"),
            Type::Map(t) => write!(f, "map(string, {t})"),
            Type::Object(name) => f.write_str(name),
        }
    }
}

/// What the check asks of a schema: the type of field `field` of object type `object`, or
/// `None` when it has no such field.
pub trait Fields {
    /// The field's type.
    fn field(&self, object: &str, field: &str) -> Option<Type>;
}

/// Check `source` with `vars` typed; the errors found, each worded as cel-go words them
/// (`ERROR: <input>:1:22: found no matching overload …` with the source line and a caret).
/// A source that does not parse gives the parser's error.
pub fn check(source: &str, vars: &HashMap<String, Type>, fields: &dyn Fields) -> Vec<String> {
    check_typed(source, vars, fields).1
}

/// As [`check`], with the expression's type as far as the check knows it (`dyn` where it
/// cannot tell, or where the source does not parse): a CRD rule must be a `bool`, a
/// `messageExpression` a `string`.
pub fn check_typed(
    source: &str,
    vars: &HashMap<String, Type>,
    fields: &dyn Fields,
) -> (Type, Vec<String>) {
    let parse =
        std::panic::AssertUnwindSafe(|| cel::parser::Parser::new().parse_with_source_info(source));
    let (expr, info) = match std::panic::catch_unwind(parse) {
        Ok(Ok(parsed)) => parsed,
        Ok(Err(e)) => return (Type::Dyn, vec![e.to_string()]),
        Err(_) => return (Type::Dyn, vec![format!("cannot parse {source:?}")]),
    };
    let mut c = Checker {
        fields,
        scopes: vec![vars.clone()],
        info: &info,
        errors: Vec::new(),
    };
    let t = c.ty(&expr);
    (t, c.errors)
}

struct Checker<'a> {
    fields: &'a dyn Fields,
    scopes: Vec<HashMap<String, Type>>,
    info: &'a SourceInfo,
    errors: Vec<String>,
}

fn numeric(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Uint | Type::Double)
}

fn primitive(t: &Type) -> bool {
    numeric(t) || matches!(t, Type::String | Type::Bool | Type::Bytes)
}

impl Checker<'_> {
    fn error(&mut self, id: u64, msg: String) {
        let (start, _) = self.info.offset_for(id).unwrap_or((0, 0));
        let source = &self.info.source;
        let start = (start as usize).min(source.len());
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count();
        let text = source[line_start..].lines().next().unwrap_or("");
        self.errors.push(format!(
            "ERROR: <input>:{line}:{}: {msg}\n | {text}\n | {}^",
            column + 1,
            ".".repeat(column)
        ));
    }

    fn lookup(&self, name: &str) -> Type {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).cloned())
            .unwrap_or(Type::Dyn)
    }

    fn ty(&mut self, e: &IdedExpr) -> Type {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::Null => Type::Null,
                LiteralValue::String(_) => Type::String,
                LiteralValue::UInt(_) => Type::Uint,
            },
            Expr::Ident(name) => self.lookup(name),
            Expr::Select(s) => {
                let operand = self.ty(&s.operand);
                if s.test {
                    return Type::Bool;
                }
                match operand {
                    Type::Object(name) => match self.fields.field(&name, &s.field) {
                        Some(t) => t,
                        None => {
                            self.error(e.id, format!("undefined field '{}'", s.field));
                            Type::Dyn
                        }
                    },
                    Type::Map(v) => *v,
                    _ => Type::Dyn,
                }
            }
            Expr::List(l) => {
                let items: Vec<Type> = l.elements.iter().map(|x| self.ty(x)).collect();
                match items.first() {
                    Some(first) if items.iter().all(|t| t == first) => {
                        Type::List(Box::new(first.clone()))
                    }
                    _ => Type::List(Box::new(Type::Dyn)),
                }
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.ty(&me.key);
                        self.ty(&me.value);
                    }
                }
                Type::Map(Box::new(Type::Dyn))
            }
            Expr::Comprehension(c) => {
                let range = self.ty(&c.iter_range);
                let elem = match (&range, &c.iter_var2) {
                    (Type::List(t), None) => (**t).clone(),
                    (Type::Map(_), None) => Type::String,
                    _ => Type::Dyn,
                };
                let init = self.ty(&c.accu_init);
                let mut scope = HashMap::new();
                scope.insert(c.iter_var.clone(), elem);
                if let Some(v2) = &c.iter_var2 {
                    scope.insert(v2.clone(), Type::Dyn);
                }
                // The accumulator's type is what the macro starts it with (`false` for
                // `exists`), except a list, which the step grows with elements of any type.
                let accu = match init {
                    Type::List(_) | Type::Map(_) => Type::Dyn,
                    t => t,
                };
                scope.insert(c.accu_var.clone(), accu);
                self.scopes.push(scope);
                self.ty(&c.loop_cond);
                self.ty(&c.loop_step);
                let result = self.ty(&c.result);
                self.scopes.pop();
                result
            }
            Expr::Call(call) => self.call(e.id, call),
            Expr::Struct(_) | Expr::Unspecified => Type::Dyn,
        }
    }

    fn call(&mut self, id: u64, call: &cel::common::ast::CallExpr) -> Type {
        let target = call.target.as_ref().map(|t| self.ty(t));
        let args: Vec<Type> = call.args.iter().map(|a| self.ty(a)).collect();
        let name = call.func_name.as_str();
        let no_overload = |c: &mut Self| {
            let shown: Vec<String> = target
                .iter()
                .chain(args.iter())
                .map(|t| t.to_string())
                .collect();
            c.error(
                id,
                format!(
                    "found no matching overload for '{name}' applied to '({})'",
                    shown.join(", ")
                ),
            );
            Type::Dyn
        };
        match (name, args.as_slice()) {
            ("_+_", [a, b]) => match (a, b) {
                (Type::Dyn, t) | (t, Type::Dyn) => t.clone(),
                (Type::List(_), Type::List(_)) => a.clone(),
                (x, y) if x == y && (numeric(x) || matches!(x, Type::String | Type::Bytes)) => {
                    x.clone()
                }
                _ => no_overload(self),
            },
            ("_-_" | "_*_" | "_/_" | "_%_", [a, b]) => match (a, b) {
                (Type::Dyn, t) | (t, Type::Dyn) => t.clone(),
                (x, y) if x == y && numeric(x) && !(name == "_%_" && *x == Type::Double) => {
                    x.clone()
                }
                _ => no_overload(self),
            },
            ("_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => match (a, b) {
                (Type::Dyn, _) | (_, Type::Dyn) => Type::Bool,
                // Kubernetes' environment compares numbers across types.
                (x, y) if numeric(x) && numeric(y) => Type::Bool,
                (x, y) if x == y && matches!(x, Type::String | Type::Bytes | Type::Bool) => {
                    Type::Bool
                }
                _ => no_overload(self),
            },
            ("_==_" | "_!=_", [a, b]) => {
                let mismatch =
                    primitive(a) && primitive(b) && a != b && !(numeric(a) && numeric(b));
                if mismatch {
                    no_overload(self);
                }
                Type::Bool
            }
            ("_&&_" | "_||_", [a, b]) => {
                if [a, b].iter().any(|t| !matches!(t, Type::Bool | Type::Dyn)) {
                    no_overload(self);
                }
                Type::Bool
            }
            ("!_", [a]) => {
                if !matches!(a, Type::Bool | Type::Dyn) {
                    no_overload(self);
                }
                Type::Bool
            }
            ("-_", [a]) => {
                if !(numeric(a) || *a == Type::Dyn) {
                    return no_overload(self);
                }
                a.clone()
            }
            ("_?_:_", [c, a, b]) => {
                if !matches!(c, Type::Bool | Type::Dyn) {
                    no_overload(self);
                }
                if a == b {
                    a.clone()
                } else {
                    Type::Dyn
                }
            }
            ("_[_]", [Type::List(t) | Type::Map(t), _]) => (**t).clone(),
            (
                "@in" | "@not_strictly_false" | "startsWith" | "endsWith" | "contains" | "matches",
                _,
            ) => Type::Bool,
            ("size" | "int", _) => Type::Int,
            ("uint", _) => Type::Uint,
            ("double", _) => Type::Double,
            ("string" | "lowerAscii" | "upperAscii" | "trim" | "replace" | "substring", _) => {
                Type::String
            }
            ("bool", _) => Type::Bool,
            _ => Type::Dyn,
        }
    }
}

#[cfg(test)]
mod tests;
