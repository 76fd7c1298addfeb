//! One pass of the MCS controller: every export planned ([`super::plan`]) and the hub brought in
//! step: export requests, ServiceImports, the exports' conditions, the members' Works.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::multicluster::{
    export_request_name, ServiceExport, ServiceImport, CONDITION_CONFLICT, CONDITION_VALID,
    MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_NAME_LABEL,
    SOURCE_CLUSTER_LABEL,
};
use flotilla_apis::names::{cluster_of_execution_namespace, execution_namespace};
use flotilla_apis::scope::is_hub_namespace;
use flotilla_apis::work::v1alpha1::Work;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, CustomResourceExt, Resource, ResourceExt};
use serde_json::{json, Value};

use super::plan::{
    conflict, exporting_clusters, import_manifests, invalid, namespace_clusters, service_import,
    shape, Placed, Shape, REASON_NO_CONFLICTS, REASON_NO_SERVICE, REASON_VALID,
};
use super::{
    import_work_name, Stores, CONTENT_HASH_ANNOTATION, CRD_WORK, IMPORT_WORK_LABEL, MANAGER,
};
use crate::propagation::workload::{binding_name, fnv64, work_name};
use crate::{Error, Result};

/// What the pass wants to exist in the execution namespaces.
#[derive(Default)]
struct Wanted {
    /// Export requests: (execution namespace, name) → body.
    requests: BTreeMap<(String, String), Value>,
    /// Works: (execution namespace, name) → body.
    works: BTreeMap<(String, String), Value>,
}

/// Plans every export and writes what changed; failures are logged and retried next pass.
pub(super) async fn pass(hub: &Client, stores: &Stores) {
    let mut wanted = Wanted::default();
    let mut crd_members = BTreeSet::new();
    let exports = stores.exports.state();
    // Read only when there is something to plan: most passes of a fleet without exports
    // would copy every binding's placement for nothing.
    let seen = match exports.is_empty() {
        true => Seen::default(),
        false => Seen {
            placed: stores.placements.snapshot(),
            slices: stores.slices.state(),
        },
    };
    for export in exports {
        let ns = export.namespace().unwrap_or_default();
        if is_hub_namespace(&ns) || export.meta().deletion_timestamp.is_some() {
            continue;
        }
        match export_one(hub, stores, &seen, &export, &mut wanted).await {
            Ok(members) => crd_members.extend(members),
            Err(e) => {
                tracing::warn!(namespace = %ns, export = %export.name_any(), error = %e, "multi-cluster service");
            }
        }
    }
    for member in crd_members {
        let es = execution_namespace(&member);
        wanted
            .works
            .insert((es.clone(), CRD_WORK.into()), crd_work(&es));
    }
    if let Err(e) = converge(hub, stores, &wanted).await {
        tracing::warn!(error = %e, "multi-cluster service requests and Works");
    }
}

/// What one pass reads for every export, taken once at its start.
#[derive(Default)]
struct Seen {
    /// Every binding's placement.
    placed: Vec<Placed>,
    /// The hub's EndpointSlices.
    slices: Vec<Arc<EndpointSlice>>,
}

/// Plans one export, writes its ServiceImport and conditions, and adds its requests and Works
/// to `wanted`; returns the members that receive the import.
async fn export_one(
    hub: &Client,
    stores: &Stores,
    seen: &Seen,
    export: &ServiceExport,
    wanted: &mut Wanted,
) -> Result<BTreeSet<String>> {
    let ns = export.namespace().unwrap_or_default();
    let name = export.name_any();
    let placed = &seen.placed;
    let service = stores.services.get(&ObjectRef::new(&name).within(&ns));
    let exporting = exporting_clusters(placed, &ns, &name);
    let now = Timestamp::now();
    let mut conds = export
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    let imports: Api<ServiceImport> = Api::namespaced(hub.clone(), &ns);
    let service = match (invalid(service.as_deref(), &exporting), service) {
        (None, Some(service)) => service,
        (problem, _) => {
            let (reason, message) = problem.unwrap_or((REASON_NO_SERVICE, String::new()));
            let mut changed = conditions::set(&mut conds, valid(false, reason, &message), now);
            changed |= conds.iter().any(|c| c.type_ == CONDITION_CONFLICT);
            conds.retain(|c| c.type_ != CONDITION_CONFLICT);
            if changed {
                write_conditions(hub, &ns, &name, &conds).await?;
            }
            if stores
                .imports
                .get(&ObjectRef::new(&name).within(&ns))
                .is_some()
            {
                delete(&imports, &name, "ServiceImport").await?;
            }
            return Ok(BTreeSet::new());
        }
    };
    let mut changed = conditions::set(
        &mut conds,
        valid(true, REASON_VALID, "the Service is exported"),
        now,
    );
    let hub_shape = shape(&serde_json::to_value(&*service).unwrap_or_default());
    let shapes = rendered_shapes(stores, &ns, &name, &exporting, &hub_shape);
    let (c_status, c_reason, c_message) = match conflict(&shapes) {
        Some((reason, message)) => ("True", reason, message),
        None => (
            "False",
            REASON_NO_CONFLICTS,
            "the exporting clusters agree".into(),
        ),
    };
    let set = Set {
        type_: CONDITION_CONFLICT,
        status: c_status,
        reason: c_reason,
        message: &c_message,
    };
    changed |= conditions::set(&mut conds, set, now);
    if changed {
        write_conditions(hub, &ns, &name, &conds).await?;
    }
    let import = service_import(&service, &exporting);
    write_import(stores, &imports, export, &import).await?;
    for cluster in &exporting {
        let es = execution_namespace(cluster);
        let request = export_request_name(&ns, &name);
        let body = json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha1",
            "kind": "ServiceExport",
            "metadata": {"name": request, "namespace": es,
                         "labels": {SERVICE_NAMESPACE_LABEL: ns, SERVICE_NAME_LABEL: name}},
            "spec": {},
        });
        wanted.requests.insert((es, request), body);
    }
    let ours: Vec<&EndpointSlice> = seen
        .slices
        .iter()
        .map(|s| &**s)
        .filter(|s| exported_slice(s, &ns, &name, &exporting))
        .collect();
    let manifests = import_manifests(&import, &ours);
    let members = namespace_clusters(placed, &ns);
    for member in &members {
        let es = execution_namespace(member);
        let work = import_work_name(&ns, &name);
        let body = work_body(&es, &work, manifests.clone(), "Delete", "Overwrite");
        wanted.works.insert((es, work), body);
    }
    Ok(members)
}

fn valid<'a>(ok: bool, reason: &'a str, message: &'a str) -> Set<'a> {
    Set {
        type_: CONDITION_VALID,
        status: if ok { "True" } else { "False" },
        reason,
        message,
    }
}

/// Whether hub slice `s` is an agent's copy of Service `ns`/`name`, from an exporting
/// cluster, kept in that cluster's own execution namespace (an agent can write nowhere else).
fn exported_slice(s: &EndpointSlice, ns: &str, name: &str, exporting: &BTreeSet<String>) -> bool {
    let labels = s.labels();
    let Some(cluster) = labels.get(SOURCE_CLUSTER_LABEL) else {
        return false;
    };
    labels.get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGED_BY)
        && labels.get(SERVICE_NAMESPACE_LABEL).map(String::as_str) == Some(ns)
        && labels.get(SERVICE_NAME_LABEL).map(String::as_str) == Some(name)
        && exporting.contains(cluster)
        && s.namespace().as_deref() == Some(execution_namespace(cluster).as_str())
}

/// Each exporting cluster's Service as rendered into its Work (overrides applied), or the
/// hub's when its Work is not there yet.
fn rendered_shapes(
    stores: &Stores,
    ns: &str,
    name: &str,
    exporting: &BTreeSet<String>,
    hub: &Shape,
) -> BTreeMap<String, Shape> {
    let work = work_name(Some(ns), &binding_name(name, "Service"));
    exporting
        .iter()
        .map(|c| {
            let es = execution_namespace(c);
            let rendered = stores
                .works
                .get(&ObjectRef::new(&work).within(&es))
                .and_then(|w| w.spec.manifests.first().map(|m| shape(&m.0)));
            (c.clone(), rendered.unwrap_or_else(|| hub.clone()))
        })
        .collect()
}

async fn write_conditions(
    hub: &Client,
    ns: &str,
    name: &str,
    conds: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition],
) -> Result<()> {
    Api::<ServiceExport>::namespaced(hub.clone(), ns)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"conditions": conds}})),
        )
        .await
        .map_err(Error::hub(format!(
            "writing the conditions of ServiceExport {ns}/{name}"
        )))?;
    Ok(())
}

/// Writes the hub's ServiceImport (owned by its export) and its status, when they changed.
async fn write_import(
    stores: &Stores,
    api: &Api<ServiceImport>,
    export: &ServiceExport,
    import: &ServiceImport,
) -> Result<()> {
    let name = import.name_any();
    let ns = import.namespace().unwrap_or_default();
    let current = stores.imports.get(&ObjectRef::new(&name).within(&ns));
    if current.as_ref().is_none_or(|c| c.spec != import.spec) {
        let owner = json!([{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport",
                            "name": export.name_any(), "uid": export.uid(), "controller": true}]);
        let body = json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha1",
            "kind": "ServiceImport",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": owner},
            "spec": import.spec,
        });
        api.patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(Error::hub(format!("writing ServiceImport {ns}/{name}")))?;
    }
    if current.as_ref().and_then(|c| c.status.as_ref()) != import.status.as_ref() {
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": import.status})),
        )
        .await
        .map_err(Error::hub(format!(
            "writing the status of ServiceImport {ns}/{name}"
        )))?;
    }
    Ok(())
}

/// A Work the controller writes into execution namespace `es`.
fn work_body(es: &str, name: &str, manifests: Vec<Value>, delete: &str, conflict: &str) -> Value {
    let mut body = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": name, "namespace": es, "labels": {IMPORT_WORK_LABEL: "true"}},
        "spec": {"manifests": manifests, "deletePolicy": delete, "conflictPolicy": conflict},
    });
    let hash = format!("{:016x}", fnv64(body.to_string().as_bytes()));
    body["metadata"]["annotations"] = json!({CONTENT_HASH_ANNOTATION: hash});
    body
}

/// The Work that installs the ServiceImport CRD in a member (left there when the Work goes:
/// removing a CRD would remove every ServiceImport, whoever wrote them).
fn crd_work(es: &str) -> Value {
    let crd = serde_json::to_value(ServiceImport::crd()).unwrap_or_default();
    work_body(es, CRD_WORK, vec![crd], "Orphan", "Adopt")
}

/// Writes the wanted requests and Works that are missing or changed, deletes the others.
async fn converge(hub: &Client, stores: &Stores, wanted: &Wanted) -> Result<()> {
    let mut first_error = None;
    for ((es, name), body) in &wanted.requests {
        if stores
            .exports
            .get(&ObjectRef::new(name).within(es))
            .is_none()
        {
            let api = Api::<ServiceExport>::namespaced(hub.clone(), es);
            let r = api
                .patch(
                    name,
                    &PatchParams::apply(MANAGER).force(),
                    &Patch::Apply(body),
                )
                .await
                .map_err(Error::hub(format!("writing export request {es}/{name}")));
            first_error = first_error.or(r.err());
        }
    }
    for request in stores.exports.state() {
        let es = request.namespace().unwrap_or_default();
        let name = request.name_any();
        let ours = cluster_of_execution_namespace(&es).is_some()
            && request.labels().contains_key(SERVICE_NAMESPACE_LABEL);
        if ours && !wanted.requests.contains_key(&(es.clone(), name.clone())) {
            let api = Api::<ServiceExport>::namespaced(hub.clone(), &es);
            first_error = first_error.or(delete(&api, &name, "export request").await.err());
        }
    }
    for ((es, name), body) in &wanted.works {
        let hash = body["metadata"]["annotations"][CONTENT_HASH_ANNOTATION].as_str();
        let current = stores.works.get(&ObjectRef::new(name).within(es));
        if current.is_some_and(|w| {
            w.annotations()
                .get(CONTENT_HASH_ANNOTATION)
                .map(String::as_str)
                == hash
        }) {
            continue;
        }
        let api = Api::<Work>::namespaced(hub.clone(), es);
        let r = api
            .patch(
                name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(body),
            )
            .await
            .map_err(Error::hub(format!("writing Work {es}/{name}")));
        first_error = first_error.or(r.err());
    }
    for work in stores.works.state() {
        let es = work.namespace().unwrap_or_default();
        let name = work.name_any();
        let ours = work.labels().contains_key(IMPORT_WORK_LABEL);
        let gone = work.meta().deletion_timestamp.is_some();
        if ours && !gone && !wanted.works.contains_key(&(es.clone(), name.clone())) {
            let api = Api::<Work>::namespaced(hub.clone(), &es);
            first_error = first_error.or(delete(&api, &name, "Work").await.err());
        }
    }
    first_error.map_or(Ok(()), Err)
}

async fn delete<K>(api: &Api<K>, name: &str, what: &str) -> Result<()>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(source) => Err(Error::Hub {
            action: format!("deleting {what} {name}"),
            source,
        }),
    }
}
