//! Admission of `ClusterSetBinding` writes: a binding is named after its set, and whoever
//! creates one (or moves it to another set) must be allowed `create` on the subresource
//! `clustersets/bind` of that set, as in Open Cluster Management. Otherwise anyone who may
//! write bindings in a namespace could reach every cluster of the fleet.

use serde_json::{json, Value};

use super::Access;
use crate::auth::{authorize, Attributes, UserInfo};
use crate::cache::Cache;
use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;

/// The group of ClusterSets and their bindings.
const GROUP: &str = "cluster.flotilla.io";

impl Access {
    /// Refuse a ClusterSetBinding whose name is not its set's (422), or whose set the writer
    /// may not bind (403). Other kinds pass.
    pub(crate) fn admit_clusterset_binding(
        &self,
        cache: &Cache,
        user: &UserInfo,
        info: &RequestInfo,
        res: &ResourceInfo,
        old: Option<&Value>,
        new: &Value,
    ) -> Result<()> {
        if res.group != GROUP || res.plural != "clustersetbindings" {
            return Ok(());
        }
        let name = new
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let set = new
            .pointer("/spec/clusterSet")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if set != name {
            return Err(ApiError::invalid(
                "ClusterSetBinding",
                name,
                GROUP,
                vec![(
                    "spec.clusterSet".into(),
                    format!(
                        "Invalid value: {set:?}: must be the binding's name ({name:?}): a \
                         ClusterSetBinding is named after the ClusterSet it binds"
                    ),
                )],
            ));
        }
        let unchanged = old
            .and_then(|o| o.pointer("/spec/clusterSet"))
            .and_then(Value::as_str)
            == Some(set);
        if unchanged || user.is_privileged() {
            return Ok(());
        }
        let policy = self.policy.snapshot(cache);
        let bind = Attributes::resource(user.clone(), "create", GROUP, "clustersets")
            .subresource("bind")
            .named(set);
        if authorize(&bind, &*policy).is_allowed() {
            return Ok(());
        }
        let namespace = info.object_namespace().unwrap_or_default();
        Err(ApiError {
            details: Some(json!({"name": name, "group": GROUP, "kind": res.plural})),
            ..ApiError::forbidden(format!(
                "clustersetbindings.{GROUP} {name:?} is forbidden: user {:?} cannot bind \
                 ClusterSet {set:?} to namespace {namespace:?}: it needs the verb create on \
                 the resource clustersets/bind named {set:?} (ask an admin for a ClusterRole \
                 granting it)",
                user.name
            ))
        })
    }
}
