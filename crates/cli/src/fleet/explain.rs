//! `flotilla explain placement KIND/NAME -n NS`: why an object runs where it runs, and which
//! controller process works its binding ([`shard`]); `flotilla explain interpret KIND/NAME`:
//! what its ResourceInterpreter's rules say about it ([`interpret`]).

mod interpret;
mod shard;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use flotilla_apis::cluster::v1alpha1::{bound_sets, Cluster, ClusterSet, ClusterSetBinding};
use flotilla_apis::work::v1alpha1::{ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
use flotilla_controllers::propagation::{scheduling, workload};
use flotilla_scheduler::{explain, schedule, Eviction};
use kube::api::ListParams;
use kube::Api;

/// `flotilla explain ...`
#[derive(Args, Debug)]
pub struct ExplainArgs {
    #[command(subcommand)]
    command: ExplainCommand,
    /// The hub's admin kubeconfig (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, env = "KUBECONFIG", global = true)]
    kubeconfig: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum ExplainCommand {
    /// Print every cluster with the reason it was filtered out, or its score and replicas,
    /// for the object's binding, as the scheduler sees it now.
    Placement {
        /// The object as KIND/NAME, e.g. deployment/web, deploy/web or deployments.apps/web
        /// (the kind as kubectl takes it: kind, singular, plural or short name, optionally
        /// with its group).
        object: String,
        /// The object's namespace (omit for cluster-scoped objects).
        #[arg(short, long)]
        namespace: Option<String>,
    },
    /// Print what each rule of the object's ResourceInterpreter returns for it (replicas and
    /// per-replica requests, health, status, dependencies), or where a rule fails.
    Interpret {
        /// The object as KIND/NAME, as for `placement`.
        object: String,
        /// The object's namespace (omit for cluster-scoped objects).
        #[arg(short, long)]
        namespace: Option<String>,
    },
}

/// Runs `flotilla explain`.
pub async fn run(args: ExplainArgs) -> Result<()> {
    let hub = super::hub_client(args.kubeconfig.as_deref()).await?;
    match args.command {
        ExplainCommand::Placement { object, namespace } => placement(hub, object, namespace).await,
        ExplainCommand::Interpret { object, namespace } => {
            interpret::run(hub, &object, namespace.as_deref()).await
        }
    }
}

/// KIND and NAME of `object`.
pub(crate) fn kind_and_name(object: &str) -> Result<(&str, &str)> {
    object
        .split_once('/')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty())
        .context("give the object as KIND/NAME, e.g. deployment/web")
}

async fn placement(hub: kube::Client, object: String, namespace: Option<String>) -> Result<()> {
    let (kind, name) = kind_and_name(&object)?;
    let kind = resolve(&hub, kind).await?.1.kind;
    let binding = workload::binding_name(name, &kind);
    let spec: ResourceBindingSpec = match &namespace {
        Some(ns) => Api::<ResourceBinding>::namespaced(hub.clone(), ns)
            .get_opt(&binding)
            .await
            .context("read the binding")?
            .map(|b| b.spec),
        None => Api::<ClusterResourceBinding>::all(hub.clone())
            .get_opt(&binding)
            .await
            .context("read the cluster binding")?
            .map(|b| b.spec.spec),
    }
    .with_context(|| {
        format!(
            "{object} has no binding {binding:?}: no propagation policy selects it (see `kubectl get propagationpolicies,clusterpropagationpolicies -A`)"
        )
    })?;
    let worked_by = shard::line(&hub, namespace.as_deref(), &binding).await;
    let clusters = Api::<Cluster>::all(hub.clone())
        .list(&ListParams::default())
        .await
        .context("list the clusters")?
        .items;
    // A namespace's binding places onto the ClusterSets bound there only.
    let sets = match &namespace {
        Some(ns) => {
            let bindings = Api::<ClusterSetBinding>::namespaced(hub.clone(), ns)
                .list(&ListParams::default())
                .await
                .context("list the ClusterSetBindings")?
                .items;
            let sets = Api::<ClusterSet>::all(hub.clone())
                .list(&ListParams::default())
                .await
                .context("list the ClusterSets")?
                .items;
            Some(bound_sets(ns, &bindings, &sets))
        }
        None => None,
    };
    let eviction = Eviction {
        now: k8s_openapi::jiff::Timestamp::now(),
        default_toleration: scheduling::Options::default().failover_toleration,
    };
    let Some(mut req) = scheduling::request(&spec, Some(eviction)) else {
        println!("{object} follows the workloads that use it (propagateDeps); it has no placement of its own.");
        for r in &spec.required_by {
            let clusters: Vec<&str> = r.clusters.iter().map(|c| c.name.as_str()).collect();
            println!("  needed by binding {} in {}", r.name, clusters.join(", "));
        }
        println!("{worked_by}");
        return Ok(());
    };
    let policy = spec
        .policy_ref
        .as_ref()
        .map(|p| format!("{} {}", p.kind, p.name))
        .unwrap_or_else(|| "no policy".into());
    println!("{object}: binding {binding}, placed by {policy}");
    println!("{worked_by}");
    if let Some(sets) = &sets {
        let names: Vec<&str> = sets.iter().map(String::as_str).collect();
        println!(
            "ClusterSets bound in {}: {}",
            namespace.as_deref().unwrap_or_default(),
            names.join(", ")
        );
    }
    req.cluster_sets = sets.as_ref();
    print!("{}", explain::render(&schedule(&req, &clusters)));
    Ok(())
}

/// The resource named by `given` as kubectl takes it (a kind, singular, plural or short name,
/// optionally `.group`-qualified) and its group/version, from the hub's discovery.
pub(crate) async fn resolve(
    hub: &kube::Client,
    given: &str,
) -> Result<(
    String,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource,
)> {
    let lower = given.to_ascii_lowercase();
    let (name, group) = match lower.split_once('.') {
        Some((n, g)) => (n.to_owned(), Some(g.to_owned())),
        None => (lower.clone(), None),
    };
    let mut lists = vec![hub
        .list_core_api_resources("v1")
        .await
        .context("read the hub's discovery")?];
    for g in hub
        .list_api_groups()
        .await
        .context("read the hub's discovery")?
        .groups
    {
        if group.as_deref().is_some_and(|want| want != g.name) {
            continue;
        }
        if let Some(v) = g
            .preferred_version
            .or_else(|| g.versions.into_iter().next())
        {
            lists.push(
                hub.list_api_group_resources(&v.group_version)
                    .await
                    .with_context(|| format!("read the hub's discovery of {}", v.group_version))?,
            );
        }
    }
    let qualified = group.is_some();
    for list in lists {
        let core = !list.group_version.contains('/');
        if qualified && core {
            continue;
        }
        for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
            let names = [&r.kind.to_ascii_lowercase(), &r.name, &r.singular_name];
            let short = r.short_names.iter().flatten();
            if names.into_iter().chain(short).any(|n| *n == name) {
                return Ok((list.group_version.clone(), r.clone()));
            }
        }
    }
    bail!("the hub serves no kind called {given:?}: see `kubectl api-resources`")
}

/// A hub object given as KIND/NAME: its kind as the hub serves it, and the API that reads it.
pub(crate) struct Object {
    /// `group/version` (`v1` for the core group).
    pub group_version: String,
    /// The kind's discovery entry.
    pub resource: k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource,
    /// Its name.
    pub name: String,
    /// Objects of the kind, in the namespace given.
    pub api: Api<kube::api::DynamicObject>,
}

/// Resolves `object` (KIND/NAME) in `namespace` on the hub (the object need not exist).
pub(crate) async fn object(
    hub: &kube::Client,
    object: &str,
    namespace: Option<&str>,
) -> Result<Object> {
    let (kind, name) = kind_and_name(object)?;
    let (group_version, resource) = resolve(hub, kind).await?;
    let (group, version) = workload::split_api_version(&group_version);
    let gvk = kube::api::GroupVersionKind::gvk(group, version, &resource.kind);
    let api_resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, &resource.name);
    let api = match (resource.namespaced, namespace) {
        (true, Some(ns)) => Api::namespaced_with(hub.clone(), ns, &api_resource),
        (true, None) => Api::default_namespaced_with(hub.clone(), &api_resource),
        (false, _) => Api::all_with(hub.clone(), &api_resource),
    };
    Ok(Object {
        group_version,
        resource,
        name: name.to_owned(),
        api,
    })
}
