//! Rendering a binding's Works: which clusters its template goes to, the template read from
//! the hub, the override policies that select it, and one Work per cluster, written only when
//! what it would say changed (a hash in the annotation `work.flotilla.io/render-hash`); and
//! which Works go when the binding leaves their cluster.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::names::{execution_namespace, WORK_FINALIZER};
use flotilla_apis::policy::v1alpha1::{
    ClusterOverridePolicy, ConflictResolution, OverridePolicy, ResourceSelector,
};
use flotilla_apis::work::v1alpha1::{
    GracefulEvictionTask, ResourceBindingSpec, Work, WORK_REVISION_ANNOTATION,
};
use futures::StreamExt;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};
use serde_json::{json, Value};

use super::{cluster_of, Context, MANAGER, RENDER_HASH_ANNOTATION};
use crate::propagation::binding::{
    BindingObject, BINDING_LABEL, BINDING_NAMESPACE_ANNOTATION, BINDING_NAME_ANNOTATION,
    ORPHAN_ANNOTATION,
};
use crate::propagation::scope;
use crate::propagation::select::{best_match, Subject};
use crate::propagation::workload::{binding_label, discover, dynamic_api, fnv64, work_name};
use crate::render::{render, rules_for_cluster, MatchedPolicy, ReplicaShare};
use crate::{Error, Result};

/// The clusters a binding's template goes to: the scheduler's choice, and for a dependency
/// the clusters of the workloads it follows (an attached binding has no placement of its own;
/// an object a policy selects and a workload needs goes to both).
pub(super) fn targets(spec: &ResourceBindingSpec) -> Vec<String> {
    let own = spec.placement.iter().flat_map(|_| &spec.clusters);
    let set: BTreeSet<String> = own
        .chain(spec.required_by.iter().flat_map(|r| &r.clusters))
        .map(|t| t.name.clone())
        .collect();
    set.into_iter().collect()
}

/// The Works to delete: those of clusters neither targeted nor still evicting (a task keeps
/// its cluster's copy serving until the replacement is up), unless being deleted already.
pub(super) fn leaving<'a>(
    works: &'a [Arc<Work>],
    targets: &[String],
    tasks: &[GracefulEvictionTask],
) -> Vec<&'a Arc<Work>> {
    let keep: BTreeSet<&str> = targets
        .iter()
        .map(String::as_str)
        .chain(tasks.iter().map(|t| t.from_cluster.as_str()))
        .collect();
    works
        .iter()
        .filter(|w| !keep.contains(cluster_of(w)) && w.meta().deletion_timestamp.is_none())
        .collect()
}

/// Whether `current` says what `body` ([`work_body`]) would: then it is not written again.
pub(super) fn written(current: Option<&Work>, body: &Value) -> bool {
    let hash = render_hash(body);
    current.is_some_and(|w| {
        w.annotations()
            .get(RENDER_HASH_ANNOTATION)
            .map(String::as_str)
            == Some(hash)
    })
}

/// The render hash a Work body ([`work_body`]) carries.
fn render_hash(body: &Value) -> &str {
    body["metadata"]["annotations"][RENDER_HASH_ANNOTATION]
        .as_str()
        .unwrap_or_default()
}

/// Who a binding's Works belong to, and what they say besides the manifest.
pub(super) struct Owner<'a> {
    /// The binding's namespace (`None`: a ClusterResourceBinding).
    pub ns: Option<&'a str>,
    /// The binding's name.
    pub name: &'a str,
    /// Its [`BINDING_LABEL`] value.
    pub label: &'a str,
    /// `spec.conflictResolution`.
    pub conflict: ConflictResolution,
    /// The member copies stay when the Works go.
    pub orphan: bool,
    /// The rollout revision the Works are rendered from (annotated on them), if the binding
    /// rolls out progressively.
    pub revision: Option<&'a str>,
    /// The plural resource name of the template's kind on the hub: with an interpreter that
    /// reads the members' health or status, the Works ask for the whole status back
    /// ([`super::feedback::WHOLE_STATUS`]).
    pub plural: Option<&'a str>,
}

/// The Work each target cluster should have, or why it has none (the cluster is not
/// registered, rendering failed, the manifest is out of the binding's reach): `template`
/// rendered with the cluster's share of `shares` and the rules of the `matched` override
/// policies that target it. `cluster` looks a registered cluster up by name.
pub(super) fn planned_works(
    owner: &Owner<'_>,
    template: &Value,
    targets: &[String],
    cluster: impl Fn(&str) -> Option<Arc<Cluster>>,
    matched: &[MatchedPolicy<'_>],
    shares: &HashMap<String, ReplicaShare>,
    interpreter: Option<&flotilla_interpreter::Interpreter>,
) -> Vec<(String, std::result::Result<Value, String>)> {
    let plan = |name: &str| {
        let cluster = cluster(name).ok_or("the cluster is not registered")?;
        let rules = rules_for_cluster(matched, &cluster);
        let share = shares.get(name).copied();
        let manifest =
            render(template, &cluster, share, interpreter, &rules).map_err(|e| e.to_string())?;
        if let Some(why) = scope::refused_manifest(owner.ns, &manifest) {
            return Err(why);
        }
        let body = work_body(
            owner.ns,
            owner.name,
            owner.label,
            name,
            manifest,
            owner.conflict,
            owner.orphan,
        );
        let reads = interpreter.is_some_and(|i| i.reads_members());
        let feedback = owner.plural.filter(|_| reads);
        Ok(match (owner.revision, feedback) {
            (None, None) => body,
            (revision, plural) => {
                let mut body = body;
                if let Some(r) = revision {
                    body["metadata"]["annotations"][WORK_REVISION_ANNOTATION] = json!(r);
                }
                if let Some(plural) = plural {
                    body["spec"]["statusFeedback"] = whole_status_rule(&body, plural);
                }
                seal(body)
            }
        })
    };
    targets.iter().map(|c| (c.clone(), plan(c))).collect()
}

/// What [`write_works`] left: why some target clusters have no Work, and the render hash
/// each of the others' Works carries now (written or already so).
#[derive(Debug, Default)]
pub(super) struct Wrote {
    /// Why a target cluster has no Work, by cluster.
    pub failures: HashMap<String, String>,
    /// The render hash of each other target cluster's Work.
    pub hashes: HashMap<String, String>,
    /// The clusters whose Work was written (made or changed) here: what their members
    /// reported so far is of what they ran before.
    pub rewritten: HashSet<String>,
}

impl Wrote {
    /// Adds what another [`write_works`] (of the same binding, other clusters) left.
    pub fn extend(&mut self, other: Wrote) {
        self.failures.extend(other.failures);
        self.hashes.extend(other.hashes);
        self.rewritten.extend(other.rewritten);
    }
}

/// Applies the [`planned_works`] of binding `b` whose Work would change. `revision`: the
/// rollout revision `template` is.
pub(super) async fn write_works<B: BindingObject>(
    ctx: &Context,
    b: &B,
    template: &Value,
    targets: &[String],
    shares: &HashMap<String, ReplicaShare>,
    works: &[Arc<Work>],
    revision: Option<&str>,
) -> Result<Wrote> {
    let name = b.name_any();
    let ns = b.scope_namespace();
    let label = binding_label(ns, &name);
    let resource = &b.spec().resource;
    let plural = ctx
        .kinds
        .lock()
        .get(&(resource.api_version.clone(), resource.kind.clone()))
        .map(|(r, _)| r.plural.clone());
    let owner = Owner {
        ns,
        name: &name,
        label: &label,
        conflict: b.spec().conflict_resolution,
        orphan: b.annotations().get(ORPHAN_ANNOTATION).map(String::as_str) == Some("true"),
        revision,
        plural: plural.as_deref(),
    };
    let overrides = matched_overrides(ctx, template);
    let matched: Vec<MatchedPolicy<'_>> = overrides.iter().map(Overrides::matched).collect();
    let registered = |c: &str| ctx.clusters.get(&ObjectRef::new(c));
    let interpreter = ctx
        .interpreters
        .for_kind(&resource.api_version, &resource.kind);
    let plan = planned_works(
        &owner,
        template,
        targets,
        registered,
        &matched,
        shares,
        interpreter.as_deref(),
    );
    let mut wrote = Wrote::default();
    let mut changed = Vec::new();
    for (cluster_name, planned) in plan {
        match planned {
            Ok(body) => {
                let current = works
                    .iter()
                    .find(|w| cluster_of(w) == cluster_name.as_str());
                let hash = render_hash(&body).to_owned();
                wrote.hashes.insert(cluster_name.clone(), hash);
                if !written(current.map(|w| &**w), &body) {
                    wrote.rewritten.insert(cluster_name.clone());
                    changed.push(apply_work(ctx, cluster_name, body));
                }
            }
            Err(why) => {
                wrote.failures.insert(cluster_name, why);
            }
        }
    }
    // A change of the template touches every cluster's Work: written side by side, so a
    // binding to many clusters is not a round trip per cluster; all are tried, the first
    // error returned.
    let results: Vec<Result<()>> = futures::stream::iter(changed)
        .buffer_unordered(CONCURRENT_WRITES)
        .collect()
        .await;
    results.into_iter().collect::<Result<()>>()?;
    Ok(wrote)
}

/// How many of one binding's Works are written at once.
const CONCURRENT_WRITES: usize = 16;

async fn apply_work(ctx: &Context, cluster: String, body: Value) -> Result<()> {
    let wname = body["metadata"]["name"].as_str().unwrap_or_default();
    let es = execution_namespace(&cluster);
    // The answer (the whole Work) is not read: the watch brings it.
    let api = Api::<Work>::namespaced(ctx.hub.clone(), &es);
    flotilla_watch::quiet::patch(
        &api,
        wname,
        None,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map_err(Error::hub(format!("apply Work {es}/{wname}")))?;
    Ok(())
}

/// The Work for one cluster, with the hash of its content in an annotation.
pub(super) fn work_body(
    ns: Option<&str>,
    binding: &str,
    label: &str,
    cluster: &str,
    manifest: Value,
    conflict: ConflictResolution,
    orphan: bool,
) -> Value {
    let conflict = flotilla_apis::work::v1alpha1::ConflictPolicy::from(conflict);
    let mut annotations = serde_json::Map::new();
    annotations.insert(BINDING_NAME_ANNOTATION.into(), json!(binding));
    if let Some(ns) = ns {
        annotations.insert(BINDING_NAMESPACE_ANNOTATION.into(), json!(ns));
    }
    let body = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "Work",
        "metadata": {
            "name": work_name(ns, binding),
            "namespace": execution_namespace(cluster),
            "labels": {BINDING_LABEL: label},
            "annotations": annotations,
            // The agent's (or push worker's) own finalizer, there from the start: it applies
            // the Work at first sight instead of adding it and waiting for the Work to come
            // back (one write and one watch round trip less per Work).
            "finalizers": [WORK_FINALIZER],
        },
        "spec": {
            "manifests": [manifest],
            "conflictPolicy": conflict,
            "deletePolicy": if orphan { "Orphan" } else { "Delete" },
        },
    });
    seal(body)
}

/// `body` with its content hash in [`RENDER_HASH_ANNOTATION`].
fn seal(mut body: Value) -> Value {
    if let Some(a) = body["metadata"]["annotations"].as_object_mut() {
        a.remove(RENDER_HASH_ANNOTATION);
    }
    let hash = format!("{:016x}", fnv64(body.to_string().as_bytes()));
    body["metadata"]["annotations"][RENDER_HASH_ANNOTATION] = json!(hash);
    body
}

/// The feedback rule reading the whole `status` of a Work's (only) manifest, whose kind's plural
/// resource name is `plural`.
fn whole_status_rule(body: &Value, plural: &str) -> Value {
    let manifest = &body["spec"]["manifests"][0];
    let (group, _) = crate::propagation::workload::split_api_version(
        manifest["apiVersion"].as_str().unwrap_or_default(),
    );
    let mut resource = json!({
        "group": group,
        "resource": plural,
        "name": manifest["metadata"]["name"],
    });
    if let Some(ns) = manifest["metadata"]["namespace"].as_str() {
        resource["namespace"] = json!(ns);
    }
    json!([{
        "resource": resource,
        "jsonPaths": [{"name": super::feedback::WHOLE_STATUS, "path": ".status"}],
    }])
}

/// Override policies that select a template, kept alive for rendering.
enum Overrides {
    Namespaced(Arc<OverridePolicy>),
    Cluster(Arc<ClusterOverridePolicy>),
}

impl Overrides {
    fn matched(&self) -> MatchedPolicy<'_> {
        match self {
            Self::Namespaced(p) => MatchedPolicy::from(&**p),
            Self::Cluster(p) => MatchedPolicy::from(&**p),
        }
    }
}

/// The override policies whose `resourceSelectors` select the template (an empty list selects
/// everything in the policy's reach); an OverridePolicy only reaches its own namespace.
fn matched_overrides(ctx: &Context, template: &Value) -> Vec<Overrides> {
    let meta = &template["metadata"];
    let labels = serde_json::from_value(meta["labels"].clone()).unwrap_or_default();
    let subject = Subject {
        api_version: template["apiVersion"].as_str().unwrap_or_default(),
        kind: template["kind"].as_str().unwrap_or_default(),
        namespace: meta["namespace"].as_str(),
        name: meta["name"].as_str().unwrap_or_default(),
        labels: &labels,
    };
    let selects = |selectors: &[ResourceSelector]| {
        selectors.is_empty() || best_match(selectors, &subject).is_some()
    };
    let mut out: Vec<Overrides> = ctx
        .overrides
        .state()
        .into_iter()
        .filter(|p| subject.namespace.is_some() && p.namespace().as_deref() == subject.namespace)
        .filter(|p| selects(&p.spec.resource_selectors))
        .map(Overrides::Namespaced)
        .collect();
    out.extend(
        ctx.cluster_overrides
            .state()
            .into_iter()
            .filter(|p| selects(&p.spec.resource_selectors))
            .map(Overrides::Cluster),
    );
    out
}

/// A binding's template, as [`template`] found it.
pub(super) enum Template {
    Found(Value),
    Gone,
    /// Its kind is out of the binding's reach (why).
    Refused(String),
}

/// The template of a binding in namespace `ns`, fetched from the hub; not read at all when
/// its kind is out of the binding's reach.
pub(super) async fn template(
    ctx: &Context,
    ns: Option<&str>,
    spec: &ResourceBindingSpec,
) -> Result<Template> {
    let r = &spec.resource;
    let key = (r.api_version.clone(), r.kind.clone());
    let known = ctx.kinds.lock().get(&key).cloned();
    let (resource, namespaced) = match known {
        Some(k) => k,
        None => {
            let k = discover(&ctx.hub, &r.api_version, &r.kind)
                .await
                .map_err(Error::hub(format!("discover {} {}", r.api_version, r.kind)))?;
            ctx.kinds.lock().insert(key, k.clone());
            k
        }
    };
    if let Some(why) = scope::refused_kind(ns, &r.kind, namespaced) {
        return Ok(Template::Refused(why));
    }
    let api = dynamic_api(
        ctx.hub.clone(),
        &resource,
        namespaced,
        r.namespace.as_deref(),
    );
    let obj = api
        .get_opt(&r.name)
        .await
        .map_err(Error::hub(format!("read {} {}", r.kind, r.name)))?;
    Ok(obj.map_or(Template::Gone, |o| {
        let mut v = serde_json::to_value(o).unwrap_or_default();
        v["apiVersion"] = json!(resource.api_version);
        v["kind"] = json!(resource.kind);
        Template::Found(v)
    }))
}

#[cfg(test)]
mod tests;
