//! Defaults applied to custom resources read from storage.
//!
//! kube-apiserver defaults a custom resource each time it decodes one from storage, with the
//! schema of the version it serves, so a `default` added to a CRD shows on objects stored
//! before it (GET, LIST, WATCH) without rewriting them. The registry hands each served version
//! the parts of its schema that lead to a default ([`ReadDefaults`], in
//! [`ResourceInfo::read_defaults`]): reading walks those alone, and checks nothing (whether an
//! object holds to the rest of the schema is not a reader's business).

use serde_json::{Map, Value};

use crate::registry::ResourceInfo;

/// A structural schema cut down to its `default`s and the properties on the way to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadDefaults {
    root: Node,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Node {
    props: Vec<Prop>,
    additional: Option<Box<Node>>,
    items: Option<Box<Node>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Prop {
    name: String,
    default: Option<Value>,
    nullable: bool,
    node: Option<Node>,
}

impl ReadDefaults {
    /// The defaults of `schema` (a CRD version's `openAPIV3Schema`); `None` when it has none.
    pub fn compile(schema: &Value) -> Option<ReadDefaults> {
        node(schema).map(|root| ReadDefaults { root })
    }

    /// Fill the defaults in; whether that changed `obj`.
    pub fn apply(&self, obj: &mut Value) -> bool {
        fill(&self.root, obj)
    }

    /// Would [`ReadDefaults::apply`] change `obj`? (Without copying it.)
    pub fn changes(&self, obj: &Value) -> bool {
        changes(&self.root, obj)
    }
}

/// Fill in `res`'s schema defaults in an object read from storage.
pub(crate) fn apply(res: &ResourceInfo, obj: &mut Value) {
    if let Some(defaults) = &res.read_defaults {
        defaults.apply(obj);
    }
}

fn node(schema: &Value) -> Option<Node> {
    let s = schema.as_object()?;
    if s.contains_key("$ref") {
        return None;
    }
    let sub = |k: &str| {
        s.get(k)
            .filter(|x| x.is_object())
            .and_then(node)
            .map(Box::new)
    };
    let additional = sub("additionalProperties");
    let items = sub("items");
    let mut props = Vec::new();
    for (name, p) in s
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let default = p.get("default").cloned();
        let node = node(p);
        // With additionalProperties beside, a property without defaults still says which
        // schema its value follows.
        if default.is_some() || node.is_some() || additional.is_some() {
            props.push(Prop {
                name: name.clone(),
                default,
                nullable: p.get("nullable").and_then(Value::as_bool) == Some(true),
                node,
            });
        }
    }
    let wanted = props
        .iter()
        .any(|p| p.default.is_some() || p.node.is_some())
        || additional.is_some()
        || items.is_some();
    wanted.then_some(Node {
        props,
        additional,
        items,
    })
}

/// Is `p` missing from `o`, or null where null is not allowed? (kube-apiserver replaces both
/// with the default.)
fn wants_default(p: &Prop, o: &Map<String, Value>) -> bool {
    p.default.is_some()
        && match o.get(&p.name) {
            None => true,
            Some(Value::Null) => !p.nullable,
            Some(_) => false,
        }
}

fn fill(n: &Node, v: &mut Value) -> bool {
    let mut changed = false;
    match v {
        Value::Object(o) => {
            for p in &n.props {
                if wants_default(p, o) {
                    o.insert(p.name.clone(), p.default.clone().unwrap_or_default());
                    changed = true;
                }
                if let (Some(child), Some(x)) = (&p.node, o.get_mut(&p.name)) {
                    changed |= fill(child, x);
                }
            }
            if let Some(add) = &n.additional {
                for (k, x) in o.iter_mut() {
                    if !n.props.iter().any(|p| &p.name == k) {
                        changed |= fill(add, x);
                    }
                }
            }
        }
        Value::Array(xs) => {
            if let Some(item) = &n.items {
                for x in xs {
                    changed |= fill(item, x);
                }
            }
        }
        _ => {}
    }
    changed
}

fn changes(n: &Node, v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            n.props.iter().any(|p| {
                wants_default(p, o)
                    || matches!((&p.node, o.get(&p.name)), (Some(c), Some(x)) if changes(c, x))
            }) || n.additional.as_ref().is_some_and(|add| {
                o.iter()
                    .any(|(k, x)| !n.props.iter().any(|p| &p.name == k) && changes(add, x))
            })
        }
        Value::Array(xs) => n
            .items
            .as_ref()
            .is_some_and(|item| xs.iter().any(|x| changes(item, x))),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
