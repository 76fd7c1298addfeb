//! `flotilla cluster approve|remove NAME`: the hub's half of the double opt-in, and its undoing.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use super::client::hub_config;

/// `flotilla cluster ...`
#[derive(Args, Debug)]
pub struct ClusterArgs {
    #[command(subcommand)]
    command: ClusterCommand,
    /// The hub's admin kubeconfig (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, env = "KUBECONFIG", global = true)]
    kubeconfig: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum ClusterCommand {
    /// Accept a cluster that asked to join (`kubectl get clusters` shows it Joined=False,
    /// PendingApproval): create its execution namespace and the agent credential's RBAC, and
    /// let its agent fetch that credential.
    Approve {
        /// The cluster's name.
        name: String,
    },
    /// Remove a cluster from the hub: revoke its agent's credential at once, delete its
    /// execution namespace, RBAC, Lease and (push) member credential, and the Cluster. Objects
    /// flotilla applied in the member keep running there. Also denies a pending join request.
    Remove {
        /// The cluster's name.
        name: String,
    },
}

/// Runs `flotilla cluster`.
pub async fn run(args: ClusterArgs) -> Result<()> {
    let (config, kubeconfig) = hub_config(args.kubeconfig.as_deref()).await?;
    let user = kubeconfig
        .current_context
        .as_deref()
        .and_then(|c| kubeconfig.contexts.iter().find(|x| x.name == c))
        .and_then(|c| c.context.as_ref())
        .and_then(|c| c.user.clone())
        .unwrap_or_else(|| "the admin".into());
    let hub = kube::Client::try_from(config)?;
    match args.command {
        ClusterCommand::Approve { name } => {
            flotilla_controllers::registry::approve(
                &hub,
                &name,
                &format!("kubeconfig user {user}"),
            )
            .await?;
            println!("cluster {name} approved: its agent can now fetch its credential and join");
        }
        ClusterCommand::Remove { name } => {
            let removed = flotilla_controllers::registry::remove(&hub, &name).await?;
            println!(
                "cluster {name} removed ({} Works released; their objects stay in the member)",
                removed.works_released
            );
        }
    }
    Ok(())
}
