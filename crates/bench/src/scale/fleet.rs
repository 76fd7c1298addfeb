//! The hub and the simulator of a scale run: started in a temporary directory, watched, and
//! stopped by process id (also when the run fails or is interrupted: [`Proc`] stops on drop).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_testkit::hub::Serve;
use flotilla_testkit::members::client_for;
use kube::api::ListParams;
use kube::{Api, Client};

use super::Plan;
use crate::fleet::join::wait_for_hub;
use crate::fleet::ready;
use crate::procs::{self, Proc};
use crate::progress::Progress;

/// A hub and a simulator whose clusters joined it.
pub struct SimFleet {
    /// `flotilla sim`. Declared first: it stops before the hub.
    pub sim: Proc,
    /// `flotilla serve`.
    pub hub: Proc,
    /// The hub's admin client.
    pub client: Client,
    /// How many clusters the simulator serves.
    clusters: usize,
    /// The simulator's kubeconfigs: `<name>.kubeconfig` per cluster, `sim.kubeconfig` for its
    /// control API.
    sim_dir: PathBuf,
    /// When the simulator started.
    started: Instant,
    /// Data and logs (removed at the end).
    _dir: tempfile::TempDir,
}

impl SimFleet {
    /// Start the hub (with `hub_args` added to `flotilla serve`), then
    /// `flotilla sim --count clusters --mode mode` joining it (its agents beating every 2 s
    /// when `quick`, as the hub's push workers do then).
    pub async fn start(
        plan: &Plan,
        hub_args: &[String],
        quick: bool,
        progress: &Progress,
    ) -> Result<SimFleet> {
        let clusters = plan.clusters;
        let keep_logs = procs::logs_wanted();
        let dir = tempfile::Builder::new()
            .prefix("flotilla-bench-scale-")
            .disable_cleanup(keep_logs)
            .tempdir()
            .context("cannot create a temporary directory for the hub and the simulator")?;
        if keep_logs {
            progress.note(&format!(
                "FLOTILLA_BENCH_LOG is set: the hub's and the simulator's logs stay in {}",
                dir.path().display()
            ));
        }
        progress.note("starting `flotilla serve` (SQLite)");
        let hub_dir = dir.path().join("hub");
        let serve = Serve::new(&procs::flotilla_binary()?, &hub_dir)
            .args(hub_args)
            .rust_log(&procs::log_filter())
            .log(&dir.path().join("hub.log"));
        let mut hub = serve.start()?;
        let admin = serve.kubeconfig();
        let client = wait_for_hub(&mut hub, &admin).await?;
        progress.note(&format!("hub ready, pid {}", hub.pid()));
        let count = clusters.to_string();
        let sim_dir = dir.path().join("sim");
        let args = [
            "sim".as_ref(),
            "--count".as_ref(),
            count.as_ref(),
            "--out".as_ref(),
            sim_dir.as_os_str(),
            "--hub-kubeconfig".as_ref(),
            admin.as_os_str(),
            "--mode".as_ref(),
            plan.mode.name().as_ref(),
            "--heartbeat-interval".as_ref(),
            (if quick { "2s" } else { "10s" }).as_ref(),
        ];
        let sim = procs::start("sim", &args, &dir.path().join("sim.log"))?;
        progress.note(&format!("simulator started, pid {}", sim.pid()));
        Ok(SimFleet {
            sim,
            hub,
            client,
            clusters: clusters as usize,
            sim_dir,
            started: Instant::now(),
            _dir: dir,
        })
    }

    /// How many clusters the simulator serves.
    pub fn clusters(&self) -> usize {
        self.clusters
    }

    /// A client of simulated cluster `name`, with its own kubeconfig.
    pub async fn member(&self, name: &str) -> Result<Client> {
        client_for(&self.sim_dir.join(format!("{name}.kubeconfig")))
            .await
            .with_context(|| format!("a client of the simulated cluster {name}"))
    }

    /// Stop (`stop`) or start again (`start`) simulated cluster `name`: stopped, it answers
    /// every request with 503, as an unreachable cluster would fail.
    pub async fn control(&self, verb: &str, name: &str) -> Result<()> {
        let sim = client_for(&self.sim_dir.join("sim.kubeconfig")).await?;
        let req = hyper::Request::post(format!("/sim/clusters/{name}/{verb}"))
            .body(Vec::new())
            .context("building a control request")?;
        sim.request_text(req)
            .await
            .with_context(|| format!("asking the simulator to {verb} {name}"))?;
        Ok(())
    }

    /// Both processes still run.
    pub fn check_alive(&mut self) -> Result<()> {
        self.hub.check_alive().context("the hub")?;
        self.sim.check_alive().context("the simulator")
    }

    /// How many Clusters are `Ready=True` on the hub.
    pub async fn ready_count(&self) -> Result<usize> {
        let clusters = Api::<Cluster>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .context("listing the Clusters on the hub")?;
        Ok(clusters.items.iter().filter(|c| ready(c)).count())
    }

    /// Wait until `clusters` Clusters are Ready; returns how long that took from the
    /// simulator's start.
    pub async fn wait_ready(
        &mut self,
        clusters: u32,
        timeout: Duration,
        progress: &Progress,
    ) -> Result<Duration> {
        let want = usize::try_from(clusters).unwrap_or(usize::MAX);
        let phase = progress.phase(
            &format!("waiting for the {clusters} simulated clusters to be Ready on the hub"),
            u64::from(clusters),
        );
        loop {
            self.check_alive()?;
            let n = self.ready_count().await?;
            phase.bar().set_position(n as u64);
            if n >= want {
                let took = self.started.elapsed();
                phase.done(&format!(
                    "all Ready {:.1} s after the start",
                    took.as_secs_f64()
                ));
                return Ok(took);
            }
            if self.started.elapsed() > timeout {
                bail!(
                    "only {n} of the {clusters} clusters were Ready {} s after the simulator \
                     started",
                    timeout.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// The end of both logs, for an error.
    pub fn log_tails(&self) -> String {
        format!(
            "the end of the hub's log:\n{}\nthe end of the simulator's log:\n{}",
            self.hub.log_tail(20),
            self.sim.log_tail(20)
        )
    }

    /// Stop the simulator, then the hub.
    pub fn stop(mut self) {
        let _ = self.sim.stop();
        let _ = self.hub.stop();
    }
}
