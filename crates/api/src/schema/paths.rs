//! The REST operations of each served resource, independent of OpenAPI version.
//!
//! Clients read little of this: kubectl finds a resource's GVK through the
//! `x-kubernetes-group-version-kind` of its operations (`kubectl explain`) and decides whether
//! the server validates fields by looking for a `fieldValidation` query parameter on the PATCH
//! operation of that GVK. Both renderers (`openapi_v2`, `openapi_v3`) draw from here.

mod actions;

pub(crate) use actions::{Action, Param, PRETTY};
use actions::{
    ANY, CR_PATCH_TYPES, CR_PRODUCES, CR_PRODUCES_LIST, PATCH_TYPES, PRODUCES, PRODUCES_LIST,
};

use serde_json::{Map, Value};

use super::kinds::names;
use super::Gvk;

/// A served resource: what its paths are and which definitions they carry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Resource {
    pub gvk: Gvk,
    pub plural: String,
    pub namespaced: bool,
    pub def: String,
    pub list_def: String,
    pub subresources: Vec<SubRoute>,
    /// Built-in kinds accept strategic merge patch and speak protobuf; custom resources don't.
    pub builtin: bool,
}

/// A subresource path under `.../{name}/`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SubRoute {
    pub name: &'static str,
    pub def: String,
    pub gvk: Gvk,
    pub actions: &'static [Action],
}

/// A request body: definition name and whether it is required.
#[derive(Clone, Debug)]
pub(crate) struct Body {
    pub def: String,
    pub required: bool,
}

/// One operation on one path.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    pub action: Action,
    pub operation_id: String,
    pub description: String,
    pub tag: String,
    pub gvk: Option<Gvk>,
    pub body: Option<Body>,
    pub response: String,
    pub consumes: &'static [&'static str],
    pub produces: &'static [&'static str],
}

/// A path and its operations.
#[derive(Clone, Debug)]
pub(crate) struct PathItem {
    pub path: String,
    /// `(name, description)` of `{namespace}`/`{name}` path parameters.
    pub path_params: Vec<(&'static str, String)>,
    pub ops: Vec<Op>,
}

/// How one OpenAPI version writes what a [`PathItem`] holds (`openapi_v2` and `openapi_v3`
/// each have one); what is the same in both is written once, by [`PathItem::to_openapi`].
pub(crate) struct Dialect {
    pub operation: fn(&Op) -> Value,
    /// `(name, description)` of a `{namespace}`/`{name}` parameter.
    pub path_param: fn(&str, &str) -> Value,
    pub query_param: fn(Param) -> Value,
}

impl PathItem {
    /// This path item as `dialect` writes it: each operation under its HTTP method, then the
    /// path's parameters (`{namespace}`, `{name}`, then `pretty`).
    pub(crate) fn to_openapi(&self, dialect: &Dialect) -> Value {
        let mut out = Map::new();
        for op in &self.ops {
            out.insert(op.action.method().to_owned(), (dialect.operation)(op));
        }
        let mut params: Vec<Value> = self
            .path_params
            .iter()
            .map(|(name, description)| (dialect.path_param)(name, description))
            .collect();
        params.push((dialect.query_param)(PRETTY));
        out.insert("parameters".to_owned(), Value::Array(params));
        Value::Object(out)
    }
}

/// The description of a success response with status `code`, as kube-apiserver writes it.
pub(crate) fn response_description(code: &str) -> &'static str {
    match code {
        "201" => "Created",
        "202" => "Accepted",
        _ => "OK",
    }
}

/// `/api/v1` or `/apis/<group>/<version>`.
pub(crate) fn prefix(group: &str, version: &str) -> String {
    format!("/{}", super::gv_path(group, version))
}

/// `apps_v1`, `core_v1`, `rbacAuthorization_v1`: kube-apiserver's tag for a group-version.
pub(crate) fn tag(group: &str, version: &str) -> String {
    let group = if group.is_empty() {
        "core"
    } else {
        group.strip_suffix(".k8s.io").unwrap_or(group)
    };
    let mut out = String::new();
    for (i, part) in group
        .split(['.', '-'])
        .filter(|p| !p.is_empty())
        .enumerate()
    {
        out.push_str(&if i == 0 {
            part.to_owned()
        } else {
            upper_first(part)
        });
    }
    format!("{out}_{version}")
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `GET /apis/<group>/<version>/`: the group-version's resource list.
pub(crate) fn gv_root(group: &str, version: &str) -> PathItem {
    let tag = tag(group, version);
    let (g, v) = tag.split_once('_').unwrap_or((&tag, version));
    PathItem {
        path: format!("{}/", prefix(group, version)),
        path_params: Vec::new(),
        ops: vec![Op {
            action: Action::Read,
            operation_id: format!("get{}{}APIResources", upper_first(g), upper_first(v)),
            description: "get available resources".to_owned(),
            tag: tag.clone(),
            gvk: None,
            body: None,
            response: names::API_RESOURCE_LIST.to_owned(),
            consumes: &[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ],
            produces: PRODUCES,
        }],
    }
}

/// Every path of one resource, in kube-apiserver's order.
pub(crate) fn resource_paths(r: &Resource) -> Vec<PathItem> {
    let g = &r.gvk;
    let tag = tag(&g.group, &g.version);
    let id_gv = {
        let (gp, vp) = tag.split_once('_').unwrap_or((&tag, &g.version));
        format!("{}{}", upper_first(gp), upper_first(vp))
    };
    let id_base = format!("{id_gv}{}", if r.namespaced { "Namespaced" } else { "" });
    let (produces, produces_list, patch_types) = if r.builtin {
        (PRODUCES, PRODUCES_LIST, PATCH_TYPES)
    } else {
        (CR_PRODUCES, CR_PRODUCES_LIST, CR_PATCH_TYPES)
    };
    let op = |action: Action, sub: &str, body: Option<&str>, response: &str, gvk: &Gvk| {
        let (article, of) = match action {
            Action::List | Action::ListAll => (" objects of kind ", ""),
            Action::Create | Action::Delete => (article_for(&g.kind), " of"),
            _ => (" the specified ", " of"),
        };
        let sub_of = if sub.is_empty() {
            String::new()
        } else {
            format!(" {sub}{of}")
        };
        let description = match action {
            Action::List | Action::ListAll => format!("list or watch{article}{}", g.kind),
            Action::DeleteCollection => format!("delete collection of {}", g.kind),
            Action::Patch => format!("partially update{sub_of}{article}{}", g.kind),
            other => format!("{}{sub_of}{article}{}", other.verb(), g.kind),
        };
        let id_scope = if action == Action::ListAll {
            format!("{id_gv}{}ForAllNamespaces", g.kind)
        } else {
            format!("{id_base}{}{}", g.kind, upper_first(sub))
        };
        Op {
            action,
            operation_id: format!("{}{id_scope}", action.verb()),
            description,
            tag: tag.clone(),
            gvk: Some(gvk.clone()),
            body: body.map(|def| Body {
                def: def.to_owned(),
                required: !matches!(action, Action::Delete | Action::DeleteCollection),
            }),
            response: response.to_owned(),
            consumes: if action == Action::Patch {
                patch_types
            } else {
                ANY
            },
            produces: if matches!(action, Action::List | Action::ListAll) {
                produces_list
            } else {
                produces
            },
        }
    };

    let base = prefix(&g.group, &g.version);
    let collection = if r.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}", r.plural)
    } else {
        format!("{base}/{}", r.plural)
    };
    let ns_param = || {
        (
            "namespace",
            "object name and auth scope, such as for teams and projects".to_owned(),
        )
    };
    let name_param = || ("name", format!("name of the {}", g.kind));
    let scope_params = if r.namespaced {
        vec![ns_param()]
    } else {
        Vec::new()
    };
    let mut item_params = vec![name_param()];
    item_params.extend(scope_params.iter().cloned());

    let mut out = Vec::new();
    if r.namespaced {
        out.push(PathItem {
            path: format!("{base}/{}", r.plural),
            path_params: Vec::new(),
            ops: vec![op(Action::ListAll, "", None, &r.list_def, g)],
        });
    }
    out.push(PathItem {
        path: collection.clone(),
        path_params: scope_params,
        ops: vec![
            op(Action::List, "", None, &r.list_def, g),
            op(Action::Create, "", Some(&r.def), &r.def, g),
            op(
                Action::DeleteCollection,
                "",
                Some(names::DELETE_OPTIONS),
                names::STATUS,
                g,
            ),
        ],
    });
    out.push(PathItem {
        path: format!("{collection}/{{name}}"),
        path_params: item_params.clone(),
        ops: vec![
            op(Action::Read, "", None, &r.def, g),
            op(Action::Replace, "", Some(&r.def), &r.def, g),
            op(Action::Patch, "", Some(names::PATCH), &r.def, g),
            op(
                Action::Delete,
                "",
                Some(names::DELETE_OPTIONS),
                names::STATUS,
                g,
            ),
        ],
    });
    for sub in &r.subresources {
        let ops = sub
            .actions
            .iter()
            .map(|&a| {
                let body = match a {
                    Action::Patch => Some(names::PATCH),
                    Action::Create | Action::Replace => Some(sub.def.as_str()),
                    _ => None,
                };
                op(a, sub.name, body, &sub.def, &sub.gvk)
            })
            .collect();
        out.push(PathItem {
            path: format!("{collection}/{{name}}/{}", sub.name),
            path_params: item_params.clone(),
            ops,
        });
    }
    out
}

/// " a " or " an ", as kube-apiserver words "create a Deployment" / "delete an Ingress".
fn article_for(kind: &str) -> &'static str {
    match kind.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U') => " an ",
        _ => " a ",
    }
}
