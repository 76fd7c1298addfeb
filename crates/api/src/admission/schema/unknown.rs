//! Unknown-field detection and pruning against a schema, for `fieldValidation`.
//!
//! Kubernetes drops fields its types don't know (built-ins through their Go structs, custom
//! resources through structural pruning unless `x-kubernetes-preserve-unknown-fields`); with
//! `fieldValidation=Warn` it says which, with `Strict` it refuses the request.

use serde_json::Value;

use crate::schema::lookup::{FieldShape, SchemaLookup};

/// Remove the fields `root_type` doesn't define from `obj`; return their paths (`spec.foo`).
pub fn prune_unknown(lookup: &dyn SchemaLookup, root_type: &str, obj: &mut Value) -> Vec<String> {
    let mut unknown = Vec::new();
    walk(lookup, root_type, obj, At::Root, &mut unknown);
    unknown
}

/// Where the walk is, written out only for a field it reports (most writes have none, and
/// a path string per field was most of the walk's cost).
#[derive(Clone, Copy)]
enum At<'a> {
    Root,
    /// A field, or a map's entry (Go's decoders name both `.key`).
    Field(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn write(&self, out: &mut String) {
        match self {
            At::Root => {}
            At::Field(parent, k) => {
                parent.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            At::Index(parent, i) => {
                parent.write(out);
                out.push_str(&format!("[{i}]"));
            }
        }
    }
}

fn walk(
    lookup: &dyn SchemaLookup,
    type_name: &str,
    v: &mut Value,
    at: At<'_>,
    unknown: &mut Vec<String>,
) {
    let Some(obj) = v.as_object_mut() else { return };
    let root = matches!(at, At::Root);
    let mut drop = Vec::new();
    for (k, child) in obj.iter_mut() {
        if root && (k == "apiVersion" || k == "kind") {
            continue;
        }
        let here = At::Field(&at, k);
        let Some(info) = lookup.field(type_name, k) else {
            let mut path = String::new();
            here.write(&mut path);
            unknown.push(path);
            drop.push(k.clone());
            continue;
        };
        let Some(next) = info.type_name.as_deref() else {
            continue;
        };
        match info.shape {
            FieldShape::Object => walk(lookup, next, child, here, unknown),
            FieldShape::List if info.item_shape == Some(FieldShape::Object) => {
                if let Some(items) = child.as_array_mut() {
                    for (i, item) in items.iter_mut().enumerate() {
                        walk(lookup, next, item, At::Index(&here, i), unknown);
                    }
                }
            }
            FieldShape::Map if info.item_shape == Some(FieldShape::Object) => {
                if let Some(m) = child.as_object_mut() {
                    for (mk, mv) in m.iter_mut() {
                        walk(lookup, next, mv, At::Field(&here, mk), unknown);
                    }
                }
            }
            _ => {}
        }
    }
    for k in drop {
        obj.remove(&k);
    }
}

/// The fields of a server-side apply configuration that the schema of `root_type` does not
/// declare, named as structured-merge-diff names them (`.spec.foo`,
/// `.spec.containers[name="c"].foo`, `.spec.list[0].foo`): kube-apiserver refuses such a
/// configuration whatever the `fieldValidation`.
pub fn undeclared(lookup: &dyn SchemaLookup, root_type: &str, obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    smd_walk(lookup, root_type, obj, "", &mut out, true);
    out
}

fn smd_walk(
    lookup: &dyn SchemaLookup,
    type_name: &str,
    v: &Value,
    path: &str,
    out: &mut Vec<String>,
    root: bool,
) {
    let Some(obj) = v.as_object() else { return };
    for (k, child) in obj {
        if root && (k == "apiVersion" || k == "kind") {
            continue;
        }
        let here = format!("{path}.{k}");
        let Some(info) = lookup.field(type_name, k) else {
            out.push(here);
            continue;
        };
        let Some(next) = info.type_name.as_deref() else {
            continue;
        };
        match info.shape {
            FieldShape::Object => smd_walk(lookup, next, child, &here, out, false),
            FieldShape::List if info.item_shape == Some(FieldShape::Object) => {
                for (i, item) in child.as_array().into_iter().flatten().enumerate() {
                    let at = format!("{here}{}", list_element(&info.list_map_keys, item, i));
                    smd_walk(lookup, next, item, &at, out, false);
                }
            }
            FieldShape::Map if info.item_shape == Some(FieldShape::Object) => {
                for (mk, mv) in child.as_object().into_iter().flatten() {
                    smd_walk(lookup, next, mv, &format!("{here}.{mk}"), out, false);
                }
            }
            _ => {}
        }
    }
}

/// A list element as structured-merge-diff names it: by its keys (`[name="c",port=80]`,
/// sorted by key) in a list-map, else by its index.
fn list_element(keys: &[String], item: &Value, i: usize) -> String {
    let mut named: Vec<(&String, &Value)> = keys
        .iter()
        .filter_map(|k| item.get(k).map(|v| (k, v)))
        .collect();
    if keys.is_empty() || named.is_empty() {
        return format!("[{i}]");
    }
    named.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = named.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("[{}]", parts.join(","))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::SchemaSet;

    #[test]
    fn unknown_fields_are_found_at_every_depth_and_pruned() {
        let l = SchemaSet::default();
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "bogus": 1},
            "spec": {"replicas": 1, "replicaz": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicyy": "x"}]}},
                     "selector": {"matchLabels": {"a": "b"}}}});
        let u = prune_unknown(&l, "io.k8s.api.apps.v1.Deployment", &mut d);
        assert_eq!(
            u,
            vec![
                "metadata.bogus",
                "spec.replicaz",
                "spec.template.spec.containers[0].imagePullPolicyy"
            ]
        );
        assert!(d["spec"].get("replicaz").is_none() && d["spec"]["replicas"] == 1);
        assert_eq!(d["metadata"]["name"], "x");
    }

    #[test]
    fn crd_preserve_unknown_fields_is_honoured() {
        let l = SchemaSet::default();
        l.apply_crd(&json!({"metadata": {"name": "ts.ex.com"}, "spec": {"group": "ex.com", "scope": "Namespaced", "names": {"kind": "T", "plural": "ts"}, "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"a": {"type": "string"}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})).unwrap();
        let root = l.root_type("ex.com", "v1", "T").unwrap();
        let mut o = json!({"apiVersion": "ex.com/v1", "kind": "T", "metadata": {"name": "t"}, "spec": {"a": "x", "b": 1}, "free": {"anything": {"goes": 1}}});
        assert_eq!(prune_unknown(&l, &root, &mut o), vec!["spec.b"]);
        assert_eq!(o["free"]["anything"]["goes"], 1);
    }
}
