//! Joining every simulated cluster to the hub in Push mode.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use futures::{StreamExt, TryStreamExt};
use kube::config::Kubeconfig;

use crate::fleet::client::hub_client;
use crate::fleet::join::register;

/// Clusters registered at once.
const JOINING: usize = 16;

/// Register `names` (in order: the n-th gets the n-th topology of the scheduler bench's fleet)
/// on the hub of `hub_kubeconfig`, each with its kubeconfig from `dir`.
pub async fn all(hub_kubeconfig: &Path, dir: &Path, names: &[String]) -> Result<()> {
    let hub = hub_client(Some(hub_kubeconfig)).await?;
    let fleet = flotilla_bench::simulated_fleet(names.len(), 1);
    let started = Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    futures::stream::iter(names.iter().zip(fleet))
        .map(|(name, mut cluster)| {
            let (hub, done) = (&hub, &done);
            async move {
                let path = dir.join(format!("{name}.kubeconfig"));
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let member = Kubeconfig::from_yaml(&text)
                    .with_context(|| format!("{} is no kubeconfig", path.display()))?;
                cluster.metadata.name = Some(name.clone());
                cluster.status = None;
                register(hub, cluster, &member, &text, "flotilla sim")
                    .await
                    .with_context(|| format!("joining {name} to the hub"))?;
                super::report(done, names.len() as u32, "joined the hub");
                anyhow::Ok(())
            }
        })
        .buffer_unordered(JOINING)
        .try_collect::<()>()
        .await?;
    tracing::info!(
        clusters = names.len(),
        seconds = started.elapsed().as_secs_f64(),
        "every simulated cluster joined the hub in Push mode"
    );
    Ok(())
}
