//! Plumbing over OpenAPI definitions held as JSON: `$ref` handling, schema-aware traversal and
//! reference closure.
//!
//! Definitions are kept in OpenAPI v2 form (`#/definitions/<name>` refs); the v3 renderer
//! rewrites references on the way out.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// Reference prefix of OpenAPI v2 (and of definitions held here).
pub(crate) const V2_PREFIX: &str = "#/definitions/";
/// Reference prefix of OpenAPI v3.
pub(crate) const V3_PREFIX: &str = "#/components/schemas/";

/// Something definitions can be looked up in by name.
pub(crate) trait Defs {
    /// Definition `name`.
    fn def(&self, name: &str) -> Option<&Value>;
}

impl Defs for Map<String, Value> {
    fn def(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// `{"$ref": "#/definitions/<name>"}`.
pub(crate) fn ref_to(name: &str) -> String {
    format!("{V2_PREFIX}{name}")
}

/// The definition a schema node refers to (`$ref` with either prefix), if any.
pub(crate) fn ref_target(node: &Value) -> Option<&str> {
    let r = node.get("$ref")?.as_str()?;
    r.strip_prefix(V2_PREFIX)
        .or_else(|| r.strip_prefix(V3_PREFIX))
}

/// Call `f` on each direct subschema of `node` (properties, items, additionalProperties,
/// junctors), not on values such as `default` or `enum` that merely look like schemas.
pub(crate) fn for_each_child_mut(node: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    for (key, child) in obj.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" => {
                if let Some(props) = child.as_object_mut() {
                    props.values_mut().for_each(&mut *f);
                }
            }
            "items" if child.is_array() => {
                child.as_array_mut().into_iter().flatten().for_each(&mut *f)
            }
            "items" | "additionalProperties" | "not" | "additionalItems" if child.is_object() => {
                f(child)
            }
            "allOf" | "anyOf" | "oneOf" => {
                child.as_array_mut().into_iter().flatten().for_each(&mut *f)
            }
            _ => {}
        }
    }
}

/// Read-only twin of [`for_each_child_mut`].
pub(crate) fn for_each_child<'a>(node: &'a Value, f: &mut dyn FnMut(&'a Value)) {
    let Some(obj) = node.as_object() else { return };
    for (key, child) in obj {
        match key.as_str() {
            "properties" | "patternProperties" => {
                if let Some(props) = child.as_object() {
                    props.values().for_each(&mut *f);
                }
            }
            "items" if child.is_array() => child.as_array().into_iter().flatten().for_each(&mut *f),
            "items" | "additionalProperties" | "not" | "additionalItems" if child.is_object() => {
                f(child)
            }
            "allOf" | "anyOf" | "oneOf" => child.as_array().into_iter().flatten().for_each(&mut *f),
            _ => {}
        }
    }
}

/// Apply `f` to `node` and every schema below it, parents first.
pub(crate) fn walk_mut(node: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    f(node);
    for_each_child_mut(node, &mut |child| walk_mut(child, f));
}

/// Every definition name referenced from `node`, recursively within `node` only.
pub(crate) fn refs_in<'a>(node: &'a Value, out: &mut Vec<&'a str>) {
    if let Some(name) = ref_target(node) {
        out.push(name);
    }
    for_each_child(node, &mut |child| refs_in(child, out));
}

/// `roots` and every definition reachable from them through `$ref`s. Names that `defs` does
/// not hold are kept (so callers can report them) but not followed.
pub(crate) fn closure<'a>(
    defs: &dyn Defs,
    roots: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<String> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut stack: Vec<String> = roots.into_iter().map(str::to_owned).collect();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(def) = defs.def(&name) {
            let mut found = Vec::new();
            refs_in(def, &mut found);
            stack.extend(
                found
                    .into_iter()
                    .filter(|n| !seen.contains(*n))
                    .map(str::to_owned),
            );
        }
    }
    seen
}

/// `node` after following `$ref`s (also when wrapped in a one-element `allOf`), with the name of
/// the definition it ended in (if it followed any reference).
pub(crate) fn deref<'a>(defs: &'a dyn Defs, mut node: &'a Value) -> (&'a Value, Option<&'a str>) {
    let mut name = None;
    // Bounded: a cycle of pure references (never produced by Kubernetes) must not hang us.
    for _ in 0..16 {
        if let Some(target) = ref_target(node) {
            match defs.def(target) {
                Some(def) => {
                    // `target` borrows from `node`, which lives in `defs` or in the caller's value.
                    name = Some(target);
                    node = def;
                    continue;
                }
                None => break,
            }
        }
        // OpenAPI v3 wraps a reference with siblings as `allOf: [{$ref}]`.
        match node.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 && ref_target(&all[0]).is_some() => node = &all[0],
            _ => break,
        }
    }
    (node, name)
}
