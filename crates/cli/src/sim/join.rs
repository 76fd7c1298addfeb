//! Joining every simulated cluster to the hub in Push mode.

use std::path::Path;

use anyhow::{Context, Result};
use kube::config::Kubeconfig;
use kube::ResourceExt;

use crate::fleet::client::hub_client;
use crate::fleet::join::register;

/// Clusters registered at once.
const JOINING: usize = 16;

/// Register `names` (in order: the n-th gets the n-th topology of the scheduler bench's fleet)
/// on the hub of `hub_kubeconfig`, each with its kubeconfig from `dir`.
pub async fn all(hub_kubeconfig: &Path, dir: &Path, names: &[String]) -> Result<()> {
    let hub = hub_client(Some(hub_kubeconfig)).await?;
    super::join_each(names, JOINING, "Push", |mut cluster| {
        let hub = &hub;
        async move {
            let name = cluster.name_any();
            let path = dir.join(format!("{name}.kubeconfig"));
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let member = Kubeconfig::from_yaml(&text)
                .with_context(|| format!("{} is no kubeconfig", path.display()))?;
            cluster.status = None;
            register(hub, cluster, &member, &text, "flotilla sim")
                .await
                .with_context(|| format!("joining {name} to the hub"))?;
            Ok(())
        }
    })
    .await
}
