//! `flotilla explain placement KIND/NAME -n NS`: why an object runs where it runs.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use flotilla_apis::cluster::v1alpha1::Cluster;
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
        /// The object as KIND/NAME, e.g. deployment/web (the kind in any case, singular).
        object: String,
        /// The object's namespace (omit for cluster-scoped objects).
        #[arg(short, long)]
        namespace: Option<String>,
    },
}

/// Runs `flotilla explain`.
pub async fn run(args: ExplainArgs) -> Result<()> {
    let hub = super::hub_client(args.kubeconfig.as_deref()).await?;
    let ExplainCommand::Placement { object, namespace } = args.command;
    let Some((kind, name)) = object.split_once('/') else {
        bail!("give the object as KIND/NAME, e.g. deployment/web");
    };
    let binding = workload::binding_name(name, kind);
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
    let clusters = Api::<Cluster>::all(hub)
        .list(&ListParams::default())
        .await
        .context("list the clusters")?
        .items;
    let eviction = Eviction {
        now: k8s_openapi::jiff::Timestamp::now(),
        default_toleration: scheduling::Options::default().failover_toleration,
    };
    let Some(req) = scheduling::request(&spec, Some(eviction)) else {
        println!("{object} follows the workloads that use it; it has no placement of its own.");
        return Ok(());
    };
    let policy = spec
        .policy_ref
        .as_ref()
        .map(|p| format!("{} {}", p.kind, p.name))
        .unwrap_or_else(|| "no policy".into());
    println!("{object}: binding {binding}, placed by {policy}");
    print!("{}", explain::render(&schedule(&req, &clusters)));
    Ok(())
}
