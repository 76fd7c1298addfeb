//! The cluster registry: accepting (approving) and removing member clusters.
//!
//! Approving a cluster gives it a home on the hub — its execution namespace `flotilla-es-<name>`,
//! an agent service account there, the RBAC that confines that account to its own namespace, its
//! own Cluster's status and its own Lease — and marks it `Joined=True`. For a pull cluster that
//! asked with a bootstrap credential, it also lets that credential fetch the agent's first token;
//! that grant is owned by the Cluster (it goes when the Cluster goes, also when it was never
//! completed) and is taken back once the agent renews its Lease with its own credential
//! ([`complete_join`], from the joining controller). Every object is server-side applied, so
//! approving twice is harmless; a cluster already joined is not given the grant again.
//!
//! Removing a cluster deletes the agent's service account first (its tokens die with it at
//! once), then everything approval created, and the Cluster. Objects flotilla put into the
//! member are left running there: removing a cluster from the fleet must not take its workloads
//! down.

use flotilla_apis::cluster::v1alpha1::{
    Cluster, ClusterSet, SyncMode, CONDITION_JOINED, DEFAULT_CLUSTERSET, REASON_APPROVED,
};
use flotilla_apis::conditions::{self, Set};
use flotilla_apis::names::{
    agent_cluster_role, execution_namespace, push_secret_name, AGENT_BOOTSTRAP_ROLE, AGENT_ROLE,
    AGENT_SERVICE_ACCOUNT, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_USER_PREFIX, FIELD_MANAGER,
    REQUESTED_BY_ANNOTATION, SYSTEM_NAMESPACE, WORK_FINALIZER,
};
use flotilla_apis::work::v1alpha1::Work;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use kube::{Api, Client, ResourceExt};
use serde_json::{json, Value};

use crate::{Error, Result};

/// Label on a cluster's execution namespace: the cluster's name.
pub const CLUSTER_LABEL: &str = "cluster.flotilla.io/name";
/// On a cluster's Lease once its join is complete (the bootstrap grant taken back): the join
/// completion controller watches only Leases without it, so the renewals that follow every
/// few seconds do not reach it. Taken off whenever a bootstrap grant is made again.
pub const JOIN_COMPLETE_LABEL: &str = "cluster.flotilla.io/join-complete";

/// Accepts cluster `name`: creates what its agent needs and marks it `Joined=True`.
/// `approver` is recorded in the condition's message.
pub async fn approve(hub: &Client, name: &str, approver: &str) -> Result<()> {
    let clusters: Api<Cluster> = Api::all(hub.clone());
    let cluster = clusters.get(name).await.map_err(|e| not_found(name, e))?;
    let ns = execution_namespace(name);
    let mut objects = vec![json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "labels": {CLUSTER_LABEL: name}},
    })];
    let already_joined = cluster
        .status
        .as_ref()
        .is_some_and(|s| conditions::is_true(&s.conditions, CONDITION_JOINED));
    let mut granted = false;
    if cluster.spec.sync_mode == SyncMode::Pull {
        objects.extend(agent_rbac(name));
        let requested_by = cluster
            .annotations()
            .get(REQUESTED_BY_ANNOTATION)
            .filter(|u| u.starts_with(BOOTSTRAP_USER_PREFIX));
        if let (Some(user), false) = (requested_by, already_joined) {
            objects.extend(bootstrap_rbac(name, cluster.uid().as_deref(), user));
            granted = true;
        }
    }
    for object in &objects {
        apply(hub, object).await?;
    }
    ensure_lease(hub, name, granted).await?;
    let mut conditions = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    if !conditions::is_true(&conditions, CONDITION_JOINED) {
        let message = format!("approved by {approver}; waiting for the agent to connect");
        let approved = Set {
            type_: CONDITION_JOINED,
            status: "True",
            reason: REASON_APPROVED,
            message: &message,
        };
        conditions::set(&mut conditions, approved, Timestamp::now());
        let patch = json!({"status": {"conditions": conditions}});
        clusters
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| hub_error(format!("marking Cluster {name} joined"), e))?;
    }
    tracing::info!(cluster = %name, %approver, "cluster approved");
    Ok(())
}

/// Re-applies the agent's Role and RoleBinding in the execution namespace of cluster `name`
/// (a joined pull cluster), so an agent approved by an older hub gets the rules added since
/// (HealthReports, ServiceExports, EndpointSlices) without being approved again. Server-side
/// applied: nothing changes when they are current. Only these two: they go with the namespace,
/// so a refresh racing [`remove`] cannot leave anything behind the Cluster.
pub async fn refresh_agent_rbac(hub: &Client, name: &str) -> Result<()> {
    for object in agent_namespace_rbac(name) {
        apply(hub, &object).await?;
    }
    tracing::debug!(cluster = %name, "agent RBAC re-applied");
    Ok(())
}

/// The agent's service account and its RBAC: [`agent_namespace_rbac`], then its own Cluster's
/// status and its own Lease — nothing else.
fn agent_rbac(name: &str) -> Vec<Value> {
    let ns = execution_namespace(name);
    let subject =
        json!([{"kind": "ServiceAccount", "name": AGENT_SERVICE_ACCOUNT, "namespace": ns}]);
    let cluster_role = agent_cluster_role(name);
    let mut objects = vec![json!({"apiVersion": "v1", "kind": "ServiceAccount",
                                  "metadata": {"name": AGENT_SERVICE_ACCOUNT, "namespace": ns}})];
    objects.extend(agent_namespace_rbac(name));
    objects.extend([
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": cluster_role, "labels": {CLUSTER_LABEL: name}},
        "rules": [
          {"apiGroups": ["cluster.flotilla.io"], "resources": ["clusters"],
           "resourceNames": [name], "verbs": ["get"]},
          {"apiGroups": ["cluster.flotilla.io"], "resources": ["clusters/status"],
           "resourceNames": [name], "verbs": ["get", "update", "patch"]},
        ]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": cluster_role, "labels": {CLUSTER_LABEL: name}},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
               "subjects": subject}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": cluster_role, "namespace": SYSTEM_NAMESPACE, "labels": {CLUSTER_LABEL: name}},
        "rules": [
          {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
           "resourceNames": [name], "verbs": ["get", "update", "patch"]},
        ]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": cluster_role, "namespace": SYSTEM_NAMESPACE, "labels": {CLUSTER_LABEL: name}},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": cluster_role},
               "subjects": subject}),
    ]);
    objects
}

/// The agent's Role and RoleBinding in its execution namespace: its Works (and their status),
/// its HealthReport's status (its health votes), the export requests and EndpointSlice copies
/// of multi-cluster services, its events, renewing its own token.
fn agent_namespace_rbac(name: &str) -> Vec<Value> {
    let ns = execution_namespace(name);
    let subject =
        json!([{"kind": "ServiceAccount", "name": AGENT_SERVICE_ACCOUNT, "namespace": ns}]);
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": AGENT_ROLE, "namespace": ns},
        "rules": [
          {"apiGroups": ["work.flotilla.io"], "resources": ["works"],
           "verbs": ["get", "list", "watch", "update", "patch"]},
          {"apiGroups": ["work.flotilla.io"], "resources": ["works/status"],
           "verbs": ["get", "update", "patch"]},
          {"apiGroups": ["networking.flotilla.io"], "resources": ["healthreports"],
           "verbs": ["get", "list", "watch"]},
          {"apiGroups": ["networking.flotilla.io"], "resources": ["healthreports/status"],
           "verbs": ["get", "update", "patch"]},
          {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
           "verbs": ["create", "update", "patch"]},
          {"apiGroups": [""], "resources": ["serviceaccounts/token"],
           "resourceNames": [AGENT_SERVICE_ACCOUNT], "verbs": ["create"]},
          // Multi-cluster services: the export requests the hub writes here, and the copies
          // of the member's EndpointSlices the agent keeps beside them.
          {"apiGroups": ["multicluster.x-k8s.io"], "resources": ["serviceexports"],
           "verbs": ["get", "list", "watch"]},
          {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
           "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
        ]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": AGENT_ROLE, "namespace": ns},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AGENT_ROLE},
               "subjects": subject}),
    ]
}

/// Lets the bootstrap user that asked to join fetch the agent's first token, nothing more.
/// Owned by the Cluster (uid `owner`), so the garbage collector removes the grant with it.
fn bootstrap_rbac(name: &str, owner: Option<&str>, user: &str) -> Vec<Value> {
    let ns = execution_namespace(name);
    let owners = json!([{"apiVersion": "cluster.flotilla.io/v1alpha1", "kind": "Cluster",
                         "name": name, "uid": owner.unwrap_or_default()}]);
    let meta = json!({"name": AGENT_BOOTSTRAP_ROLE, "namespace": ns,
                      "labels": {CLUSTER_LABEL: name}, "ownerReferences": owners});
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
               "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"],
                          "resourceNames": [AGENT_SERVICE_ACCOUNT], "verbs": ["create"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AGENT_BOOTSTRAP_ROLE},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}),
    ]
}

/// The join of cluster `name` is complete (its agent renews its Lease with its own credential):
/// takes back the bootstrap credential's grant to fetch the agent's token. Returns whether there
/// was one to take back.
pub async fn complete_join(hub: &Client, name: &str) -> Result<bool> {
    let ns = execution_namespace(name);
    let mut removed = false;
    for kind in ["RoleBinding", "Role"] {
        let api: Api<DynamicObject> = Api::namespaced_with(hub.clone(), &ns, &resource(kind));
        match api
            .delete(AGENT_BOOTSTRAP_ROLE, &DeleteParams::background())
            .await
        {
            Ok(_) => removed = true,
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                return Err(hub_error(
                    format!("deleting {kind} {ns}/{AGENT_BOOTSTRAP_ROLE}"),
                    e,
                ))
            }
        }
    }
    if removed {
        tracing::info!(cluster = %name, "join complete: the bootstrap credential's grant is removed");
    }
    label_join_complete(hub, name, true).await?;
    Ok(removed)
}

/// Puts [`JOIN_COMPLETE_LABEL`] on cluster `name`'s Lease (`complete`) or takes it off. A
/// Lease that is gone needs neither.
async fn label_join_complete(hub: &Client, name: &str, complete: bool) -> Result<()> {
    let leases: Api<Lease> = Api::namespaced(hub.clone(), SYSTEM_NAMESPACE);
    let value = if complete { json!("true") } else { Value::Null };
    let patch = json!({"metadata": {"labels": {JOIN_COMPLETE_LABEL: value}}});
    match leases
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(hub_error(
            format!("labelling Lease {SYSTEM_NAMESPACE}/{name}"),
            e,
        )),
    }
}

/// The Lease the agent renews; created here because a pull agent may only update it. With
/// `granted` (a bootstrap grant just made), a Lease left from an earlier, completed join loses
/// [`JOIN_COMPLETE_LABEL`], so that the grant is taken back again.
async fn ensure_lease(hub: &Client, name: &str, granted: bool) -> Result<()> {
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": name, "namespace": SYSTEM_NAMESPACE,
                                    "labels": {CLUSTER_LABEL: name}}});
    let api = dynamic(hub, &lease, Some(SYSTEM_NAMESPACE));
    match api.get_opt(name).await {
        Ok(Some(found)) if granted && found.labels().contains_key(JOIN_COMPLETE_LABEL) => {
            label_join_complete(hub, name, false).await
        }
        Ok(Some(_)) => Ok(()),
        Ok(None) => apply(hub, &lease).await,
        Err(e) => Err(hub_error(
            format!("reading Lease {SYSTEM_NAMESPACE}/{name}"),
            e,
        )),
    }
}

/// Keeps the ClusterSet `default` bound to every namespace (`all_namespaces`) or not, as the
/// hub's `--default-clusterset-binding` says: written at once, then every minute (so a deleted
/// or edited one comes back). Runs until dropped.
pub async fn keep_default_clusterset(hub: Client, all_namespaces: bool) {
    let sets: Api<ClusterSet> = Api::all(hub);
    let set = json!({
        "apiVersion": "cluster.flotilla.io/v1alpha1",
        "kind": "ClusterSet",
        "metadata": {"name": DEFAULT_CLUSTERSET},
        "spec": {"allNamespaces": all_namespaces},
    });
    let params = PatchParams::apply("flotilla-hub").force();
    loop {
        match sets
            .patch(DEFAULT_CLUSTERSET, &params, &Patch::Apply(&set))
            .await
        {
            Ok(_) => tracing::debug!(all_namespaces, "ClusterSet default kept"),
            Err(e) => tracing::warn!(error = %e, "writing the ClusterSet default"),
        }
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    }
}

/// What `remove` did.
#[derive(Debug, Default)]
pub struct Removed {
    /// Works whose finalizer was dropped (their objects stay in the member).
    pub works_released: usize,
}

/// Removes cluster `name` from the hub; see the module docs for what is (and is not) removed.
pub async fn remove(hub: &Client, name: &str) -> Result<Removed> {
    let clusters: Api<Cluster> = Api::all(hub.clone());
    let cluster = clusters.get(name).await.map_err(|e| not_found(name, e))?;
    let ns = execution_namespace(name);
    let role = agent_cluster_role(name);
    // The service account first: from this moment the agent's tokens are refused.
    delete(
        hub,
        &resource("ServiceAccount"),
        Some(&ns),
        AGENT_SERVICE_ACCOUNT,
    )
    .await?;
    let works: Api<Work> = Api::namespaced(hub.clone(), &ns);
    let mut released = 0;
    match works.list(&ListParams::default()).await {
        Ok(list) => {
            for w in list.items {
                if w.finalizers().iter().any(|f| f == WORK_FINALIZER) {
                    let rest: Vec<_> = w
                        .finalizers()
                        .iter()
                        .filter(|f| *f != WORK_FINALIZER)
                        .collect();
                    let patch = json!({"metadata": {"finalizers": rest}});
                    works
                        .patch(
                            &w.name_any(),
                            &PatchParams::default(),
                            &Patch::Merge(&patch),
                        )
                        .await
                        .map_err(|e| {
                            hub_error(format!("releasing Work {ns}/{}", w.name_any()), e)
                        })?;
                    released += 1;
                }
            }
        }
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => return Err(hub_error(format!("listing the Works in {ns}"), e)),
    }
    delete(hub, &resource("Namespace"), None, &ns).await?;
    delete(hub, &resource("ClusterRoleBinding"), None, &role).await?;
    delete(hub, &resource("ClusterRole"), None, &role).await?;
    delete(hub, &resource("RoleBinding"), Some(SYSTEM_NAMESPACE), &role).await?;
    delete(hub, &resource("Role"), Some(SYSTEM_NAMESPACE), &role).await?;
    delete(hub, &resource("Lease"), Some(SYSTEM_NAMESPACE), name).await?;
    if cluster.spec.sync_mode == SyncMode::Push {
        let secret = cluster
            .spec
            .secret_ref
            .as_ref()
            .map(|r| (r.namespace.clone(), r.name.clone()))
            .unwrap_or_else(|| (SYSTEM_NAMESPACE.into(), push_secret_name(name)));
        // Only the hub's own credential Secrets: a reference into another namespace (refused
        // at admission today, possibly stored before) never makes removal delete a user's.
        if secret.0 == SYSTEM_NAMESPACE {
            delete(hub, &resource("Secret"), Some(&secret.0), &secret.1).await?;
        }
    }
    if let Some(id) = cluster
        .annotations()
        .get(REQUESTED_BY_ANNOTATION)
        .and_then(|u| u.strip_prefix(BOOTSTRAP_USER_PREFIX))
    {
        let token = format!("{BOOTSTRAP_TOKEN_SECRET_PREFIX}{id}");
        delete(hub, &resource("Secret"), Some(SYSTEM_NAMESPACE), &token).await?;
    }
    clusters
        .delete(name, &DeleteParams::default())
        .await
        .map_err(|e| hub_error(format!("deleting Cluster {name}"), e))?;
    tracing::info!(cluster = %name, works_released = released, "cluster removed");
    Ok(Removed {
        works_released: released,
    })
}

async fn delete(hub: &Client, ar: &ApiResource, ns: Option<&str>, name: &str) -> Result<()> {
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(hub.clone(), ns, ar),
        None => Api::all_with(hub.clone(), ar),
    };
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(hub_error(format!("deleting {} {name}", ar.kind), e)),
    }
}

/// Server-side applies `object` (as field manager flotilla, forcing: these objects are ours).
pub(crate) async fn apply(hub: &Client, object: &Value) -> Result<()> {
    let ns = object["metadata"]["namespace"].as_str();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let api = dynamic(hub, object, ns);
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    .map(|_| ())
    .map_err(|e| {
        hub_error(
            format!("applying {} {name}", object["kind"].as_str().unwrap_or("")),
            e,
        )
    })
}

/// An API for `object`, whose kind is one [`resource`] knows.
fn dynamic(hub: &Client, object: &Value, ns: Option<&str>) -> Api<DynamicObject> {
    let ar = resource(object["kind"].as_str().unwrap_or_default());
    match ns {
        Some(ns) => Api::namespaced_with(hub.clone(), ns, &ar),
        None => Api::all_with(hub.clone(), &ar),
    }
}

/// The API resource of each kind this module writes or deletes, from k8s-openapi's types.
fn resource(kind: &str) -> ApiResource {
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    match kind {
        "Namespace" => ApiResource::erase::<Namespace>(&()),
        "ServiceAccount" => ApiResource::erase::<ServiceAccount>(&()),
        "Secret" => ApiResource::erase::<Secret>(&()),
        "Lease" => ApiResource::erase::<Lease>(&()),
        "Role" => ApiResource::erase::<Role>(&()),
        "RoleBinding" => ApiResource::erase::<RoleBinding>(&()),
        "ClusterRole" => ApiResource::erase::<ClusterRole>(&()),
        "ClusterRoleBinding" => ApiResource::erase::<ClusterRoleBinding>(&()),
        // Only the kinds above are written here; anything else gets Kubernetes' usual plural.
        other => ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("", "v1", other),
            &format!("{}s", other.to_lowercase()),
        ),
    }
}

fn not_found(name: &str, e: kube::Error) -> Error {
    match &e {
        kube::Error::Api(s) if s.code == 404 => Error::NoSuchCluster(name.to_owned()),
        _ => hub_error(format!("reading Cluster {name}"), e),
    }
}

fn hub_error(action: String, source: kube::Error) -> Error {
    Error::Hub { action, source }
}
