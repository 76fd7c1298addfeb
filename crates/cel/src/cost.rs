//! What evaluating an expression may cost, in CEL's cost units, estimated as cel-go's checker
//! and Kubernetes' cost estimator do: Kubernetes refuses a CRD whose rule could cost more than
//! its budget (`estimated rule cost exceeds budget by factor of …`) and stops a rule whose
//! evaluation on an object costs more than the per-call limit (`call cost exceeds limit`).
//!
//! Costs follow cel-go's `checker/cost.go`: identifiers and field selections cost 1, literals
//! nothing, list/map literals 10/30, a comprehension its range's size times its loop, string
//! comparisons and traversals a tenth of a unit per byte, and Kubernetes' list, regex, URL,
//! IP and quantity functions as its library estimates them. Sizes come from a [`Shape`] per
//! variable: from the schema (`maxLength`, `maxItems`, `maxProperties`, or what fits in a
//! request when unbounded) for the static estimate, from the object itself ([`Shape::of`])
//! for the cost of one evaluation.

use std::collections::BTreeMap;

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};

/// The factor cel-go charges per byte of a string it traverses.
const STRING_TRAVERSAL: f64 = 0.1;
/// The factor cel-go charges per byte of a regular expression.
const REGEX_LENGTH: f64 = 0.25;

/// The type of a value and how large it can be (bytes of a string, items of a list, entries of
/// a map), as far as costs depend on it.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A number, boolean or null.
    Scalar,
    /// A string (or bytes) of at most this many bytes.
    String(u64),
    /// A list of at most this many items.
    List(Box<Shape>, u64),
    /// A map with at most this many entries of string keys.
    Map(Box<Shape>, u64),
    /// An object with these fields.
    Object(BTreeMap<String, Shape>),
    /// A value of any type, at most this large (`x-kubernetes-int-or-string`).
    Dyn(u64),
}

impl Shape {
    /// The shape of one value: its own sizes, so an estimate over it is the cost of one
    /// evaluation.
    pub fn of(v: &serde_json::Value) -> Shape {
        use serde_json::Value;
        match v {
            Value::String(s) => Shape::String(s.len() as u64),
            Value::Array(items) => {
                let item = items.iter().map(Shape::of).reduce(Shape::union);
                Shape::List(Box::new(item.unwrap_or(Shape::Scalar)), items.len() as u64)
            }
            Value::Object(o) => {
                Shape::Object(o.iter().map(|(k, v)| (k.clone(), Shape::of(v))).collect())
            }
            _ => Shape::Scalar,
        }
    }

    /// A shape covering both (the larger bounds; fields of either).
    fn union(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::String(a), Shape::String(b)) => Shape::String(a.max(b)),
            (Shape::List(a, n), Shape::List(b, m)) => Shape::List(Box::new(a.union(*b)), n.max(m)),
            (Shape::Map(a, n), Shape::Map(b, m)) => Shape::Map(Box::new(a.union(*b)), n.max(m)),
            (Shape::Object(mut a), Shape::Object(b)) => {
                for (k, v) in b {
                    let merged = match a.remove(&k) {
                        Some(x) => x.union(v),
                        None => v,
                    };
                    a.insert(k, merged);
                }
                Shape::Object(a)
            }
            (Shape::Scalar, Shape::Scalar) => Shape::Scalar,
            (a, b) => Shape::Dyn(a.elements().max(b.elements())),
        }
    }

    /// Kubernetes' size of a declared type (its `MaxElements`): 0 for numbers and objects.
    fn elements(&self) -> u64 {
        match self {
            Shape::String(n) | Shape::List(_, n) | Shape::Map(_, n) | Shape::Dyn(n) => *n,
            Shape::Scalar | Shape::Object(_) => 0,
        }
    }
}

/// What the estimate knows of a subexpression's value.
#[derive(Clone, Debug)]
struct Node {
    cost: u64,
    /// Where the value comes from a variable, its declared shape.
    shape: Option<Shape>,
    /// A size cel-go computes (literals, results of sized functions).
    size: Option<u64>,
    /// Whether the value is a number, boolean or null (size 1 without a shape).
    scalar: bool,
}

impl Node {
    fn new(cost: u64) -> Node {
        Node {
            cost,
            shape: None,
            size: None,
            scalar: false,
        }
    }

    fn scalar(cost: u64) -> Node {
        Node {
            scalar: true,
            ..Node::new(cost)
        }
    }

    fn sized(cost: u64, size: u64) -> Node {
        Node {
            size: Some(size),
            ..Node::new(cost)
        }
    }

    /// cel-go's size estimate: computed, else declared, else 1 for scalars. A value of a shape
    /// the estimate cannot follow counts as 1 rather than unbounded, so a rule is refused for
    /// what its schema leaves unbounded, never for what this estimate does not model.
    fn size(&self) -> u64 {
        if let Some(s) = self.size {
            return s;
        }
        match &self.shape {
            Some(s) => s.elements(),
            None => 1,
        }
    }

    fn item(&self) -> Option<Shape> {
        match &self.shape {
            Some(Shape::List(item, _)) => Some((**item).clone()),
            Some(Shape::Map(_, _)) => Some(Shape::String(u64::MAX)),
            _ => None,
        }
    }
}

fn factor(size: u64, f: f64) -> u64 {
    let v = (size as f64 * f).ceil();
    if v >= u64::MAX as f64 {
        u64::MAX
    } else {
        v as u64
    }
}

/// The estimated worst-case cost of `expr` with `vars` of these shapes.
pub(crate) fn estimate(expr: &IdedExpr, vars: &[(&str, &Shape)]) -> u64 {
    let scope: BTreeMap<String, Option<Shape>> = vars
        .iter()
        .map(|(k, s)| ((*k).to_owned(), Some((*s).clone())))
        .collect();
    let mut e = Estimator {
        scopes: vec![scope],
    };
    e.node(expr).cost
}

struct Estimator {
    scopes: Vec<BTreeMap<String, Option<Shape>>>,
}

impl Estimator {
    fn var(&self, name: &str) -> Option<Option<Shape>> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    fn node(&mut self, e: &IdedExpr) -> Node {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::String(s) => Node::sized(0, s.len() as u64),
                LiteralValue::Bytes(b) => Node::sized(0, b.len() as u64),
                _ => Node::scalar(0),
            },
            Expr::Ident(name) => match self.var(name) {
                Some(shape) => Node {
                    scalar: shape == Some(Shape::Scalar),
                    shape,
                    ..Node::new(1)
                },
                None => Node::new(1),
            },
            Expr::Select(s) => {
                let operand = self.node(&s.operand);
                if s.test {
                    return Node::scalar(operand.cost.saturating_add(1));
                }
                let field = match &operand.shape {
                    Some(Shape::Object(fields)) => fields.get(&s.field).cloned(),
                    Some(Shape::Map(v, _)) => Some((**v).clone()),
                    _ => None,
                };
                let select = match operand.shape {
                    Some(Shape::Object(_) | Shape::Map(..)) | None => 1,
                    _ => 0,
                };
                Node {
                    scalar: field == Some(Shape::Scalar),
                    shape: field,
                    ..Node::new(operand.cost.saturating_add(select))
                }
            }
            Expr::List(l) => {
                let cost = l
                    .elements
                    .iter()
                    .fold(10u64, |c, x| c.saturating_add(self.node(x).cost));
                Node::sized(cost, l.elements.len() as u64)
            }
            Expr::Map(m) => {
                let mut cost = 30u64;
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        cost = cost
                            .saturating_add(self.node(&me.key).cost)
                            .saturating_add(self.node(&me.value).cost);
                    }
                }
                Node::sized(cost, m.entries.len() as u64)
            }
            Expr::Struct(s) => {
                let mut cost = 40u64;
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        cost = cost.saturating_add(self.node(&f.value).cost);
                    }
                }
                Node::new(cost)
            }
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Call(call) => self.call(call),
            Expr::Unspecified => Node::new(0),
        }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Node {
        let range = self.node(&c.iter_range);
        let init = self.node(&c.accu_init);
        let mut scope = BTreeMap::new();
        scope.insert(c.iter_var.clone(), range.item());
        if let Some(v2) = &c.iter_var2 {
            scope.insert(v2.clone(), None);
        }
        scope.insert(c.accu_var.clone(), init.shape.clone());
        self.scopes.push(scope);
        let cond = self.node(&c.loop_cond);
        let step = self.node(&c.loop_step);
        let result = self.node(&c.result);
        self.scopes.pop();
        let per_item = cond.cost.saturating_add(step.cost);
        let cost = range
            .cost
            .saturating_add(init.cost)
            .saturating_add(result.cost)
            .saturating_add(range.size().saturating_mul(per_item));
        Node { cost, ..result }
    }

    fn call(&mut self, call: &CallExpr) -> Node {
        let target = call.target.as_ref().map(|t| self.node(t));
        let args: Vec<Node> = call.args.iter().map(|a| self.node(a)).collect();
        let arg_cost = args
            .iter()
            .chain(target.iter())
            .fold(0u64, |c, a| c.saturating_add(a.cost));
        let name = call.func_name.as_str();
        let own = |c: u64| Node::new(arg_cost.saturating_add(c));
        let t_size = target.as_ref().map_or(1, Node::size);
        match (name, args.as_slice()) {
            ("_&&_" | "_||_", [_, _]) => Node::scalar(arg_cost),
            ("_?_:_", [c, a, b]) => {
                let size = a.size().max(b.size());
                Node {
                    size: Some(size),
                    ..Node::new(c.cost.saturating_add(a.cost.max(b.cost)))
                }
            }
            ("_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => {
                let smallest = a.size().min(b.size());
                Node::scalar(arg_cost.saturating_add(factor(smallest, STRING_TRAVERSAL)))
            }
            ("_+_", [a, b]) => {
                let size = a.size().saturating_add(b.size());
                let list = c_list(a, b);
                let cost = if list {
                    1
                } else {
                    factor(size, STRING_TRAVERSAL)
                };
                Node {
                    size: (!a.scalar).then_some(size),
                    scalar: a.scalar && b.scalar,
                    ..own(cost)
                }
            }
            ("@in", [_, list]) => Node::scalar(arg_cost.saturating_add(list.size())),
            ("_[_]", [container, _]) => Node {
                shape: container.item().or_else(|| match &container.shape {
                    Some(Shape::Map(v, _)) => Some((**v).clone()),
                    _ => None,
                }),
                ..own(1)
            },
            ("startsWith" | "endsWith", [prefix]) => {
                Node::scalar(arg_cost.saturating_add(factor(prefix.size(), STRING_TRAVERSAL)))
            }
            ("contains", [sub]) if target.is_some() => Node::scalar(
                arg_cost.saturating_add(
                    factor(t_size, STRING_TRAVERSAL)
                        .saturating_mul(factor(sub.size(), STRING_TRAVERSAL)),
                ),
            ),
            ("matches", [re]) if target.is_some() => Node::scalar(
                arg_cost.saturating_add(
                    factor(t_size.saturating_add(1), STRING_TRAVERSAL)
                        .saturating_mul(factor(re.size(), REGEX_LENGTH)),
                ),
            ),
            ("find" | "findAll", [re, ..]) if target.is_some() => Node {
                size: Some(t_size),
                ..own(factor(t_size.saturating_add(1), STRING_TRAVERSAL)
                    .saturating_mul(factor(re.size(), REGEX_LENGTH)))
            },
            ("isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf", _)
                if target.is_some() =>
            {
                let t = target.as_ref().map(Node::item);
                let per = match t {
                    Some(Some(Shape::String(n))) => {
                        1u64.saturating_add(factor(n, STRING_TRAVERSAL))
                    }
                    Some(Some(_)) => 1,
                    // A string target (indexOf on strings).
                    _ => return own(factor(t_size, STRING_TRAVERSAL)),
                };
                own(t_size.saturating_mul(per))
            }
            ("lowerAscii" | "upperAscii" | "substring" | "trim", _) if target.is_some() => Node {
                size: Some(t_size),
                ..own(factor(t_size, STRING_TRAVERSAL))
            },
            ("replace", _) if target.is_some() => Node {
                size: Some(t_size),
                ..own(factor(t_size, 2.0 * STRING_TRAVERSAL))
            },
            ("split", _) if target.is_some() => Node {
                size: Some(t_size),
                ..own(factor(t_size, 2.0 * STRING_TRAVERSAL))
            },
            ("join", _) if target.is_some() => {
                let item = target
                    .as_ref()
                    .and_then(Node::item)
                    .map_or(1, |s| s.elements());
                let size = t_size.saturating_mul(item);
                Node {
                    size: Some(size),
                    ..own(factor(size, STRING_TRAVERSAL))
                }
            }
            (
                "url" | "quantity" | "isQuantity" | "ip" | "cidr" | "isIP" | "isCIDR" | "isURL",
                [s],
            ) if target.is_none() => Node {
                size: Some(s.size()),
                ..own(factor(s.size(), STRING_TRAVERSAL))
            },
            ("size", _) => Node::scalar(arg_cost.saturating_add(1)),
            _ => Node {
                scalar: is_scalar_function(name),
                ..own(1)
            },
        }
    }
}

/// Both operands of a `+` are list literals or lists (concatenation costs 1 in cel-go).
fn c_list(a: &Node, b: &Node) -> bool {
    a.item().is_some() || b.item().is_some()
}

/// Functions whose result is a number or boolean (size 1 in cel-go's estimate).
fn is_scalar_function(name: &str) -> bool {
    matches!(
        name,
        "!_" | "-_"
            | "@not_strictly_false"
            | "int"
            | "uint"
            | "double"
            | "bool"
            | "exists"
            | "all"
            | "isInteger"
            | "asInteger"
            | "sign"
            | "compareTo"
            | "isGreaterThan"
            | "isLessThan"
            | "asApproximateFloat"
    )
}

#[cfg(test)]
mod tests;
