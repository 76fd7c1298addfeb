//! A replica dies under its watchers and under writes: watchers of one namespace on replica-2
//! while a writer creates ConfigMaps at a fixed rate through all three replicas in turn;
//! replica-2 is killed with SIGKILL (`scripts/ha stop`), its watchers reconnect to replica-3
//! from their last resourceVersion. Measured: the time from the kill to every watcher resumed
//! (its first event on replica-3), 410s, what each watcher missed or got twice, and — once the
//! writer is done — how many acknowledged creates cannot be read on the survivors, and on
//! replica-2 once it is started again (must be 0).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;

use super::super::client::Client;
use super::super::open_loop::OpenLoop;
use super::super::progress::Progress;
use super::super::stats::{self, Summary};
use super::delivery::list_rv;
use super::load::{self, Created};
use super::set::HaSet;
use super::watch::{self, Watcher};

/// How long the watchers get to resume after the kill.
const RESUME_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the watchers get for the last events once the writer is done.
const GRACE: Duration = Duration::from_secs(10);

/// How the phase is shaped.
pub struct Shape {
    /// Watchers on replica-2.
    pub watchers: usize,
    /// Creates per second, spread over the three replicas.
    pub rate: u64,
    /// How long the writer writes.
    pub duration: Duration,
    /// When, after the writer starts, replica-2 is killed.
    pub kill_after: Duration,
}

/// What the phase measured.
#[derive(Debug)]
pub struct Failover {
    /// Watchers on replica-2.
    pub watchers: usize,
    /// From the kill to the last watcher resumed; `None` if one never did.
    pub all_resumed: Option<Duration>,
    /// From the kill to each watcher resumed.
    pub resumed: Option<Summary>,
    /// Watchers that did not resume within the timeout.
    pub not_resumed: usize,
    /// From the kill to the first watcher seeing its stream break.
    pub noticed: Option<Duration>,
    /// 410 Gone answers over all watchers.
    pub gone: usize,
    /// Acknowledged creates missed, over all watchers.
    pub missed: usize,
    /// Events delivered twice, over all watchers.
    pub duplicated: usize,
    /// Events out of resourceVersion order or with another resourceVersion than answered.
    pub disordered: usize,
    /// Watchers whose feed held every acknowledged create once, in order.
    pub clean_watchers: usize,
    /// The first watch error after the kill other than the break itself.
    pub watch_error: Option<String>,
    /// The writer: creates offered, acknowledged, failed (mostly those sent to the dead
    /// replica) and the first failure.
    pub offered: usize,
    /// Acknowledged creates.
    pub acked: usize,
    /// Failed creates and the first failure.
    pub failed: (usize, Option<String>),
    /// Acknowledged creates not readable, per replica read (`replica-1`, `replica-3`,
    /// `replica-2 restarted`), or why it could not be read.
    pub lost: Vec<(String, Result<usize, String>)>,
}

impl Failover {
    /// The most acknowledged creates missing on any replica read (`None` if none was read).
    pub fn lost_max(&self) -> Option<usize> {
        self.lost
            .iter()
            .filter_map(|(_, l)| l.as_ref().ok().copied())
            .max()
    }
}

/// Run the phase on `set` (3 replicas) in the namespace `ns`; replica-2 is running again at
/// the end.
pub async fn run(
    set: &mut HaSet,
    ns: &str,
    shape: &Shape,
    progress: &Progress,
) -> Result<Failover> {
    let clients: Vec<Client> = set.replicas.iter().map(|r| r.client.clone()).collect();
    load::namespace(&clients[0], ns).await?;
    let from = list_rv(&clients[1], ns).await?;
    let watchers: Vec<Watcher> = (0..shape.watchers)
        .map(|_| Watcher::start(vec![clients[1].clone(), clients[2].clone()], ns, from))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let offered = (shape.rate as f64 * shape.duration.as_secs_f64()).round() as usize;
    let phase = progress.phase(
        &format!(
            "failover: {} watchers on replica-2, {}/s creates through all 3, SIGKILL of replica-2 \
             after {:.0} s",
            shape.watchers,
            shape.rate,
            shape.kill_after.as_secs_f64()
        ),
        offered as u64,
    );
    let writer = OpenLoop::<Created>::new();
    let sending = {
        let (writer, clients, ns, bar) = (
            writer.clone(),
            clients.clone(),
            ns.to_string(),
            phase.bar().clone(),
        );
        let rate = shape.rate;
        tokio::spawn(async move {
            writer
                .send(offered, rate, Instant::now(), move |i| {
                    let r = i % clients.len();
                    let (client, ns, bar) = (clients[r].clone(), ns.clone(), bar.clone());
                    async move {
                        let c = load::create(&client, &ns, &format!("f-{i}"))
                            .await
                            .map_err(|e| format!("{e:#}"));
                        bar.inc(1);
                        c
                    }
                })
                .await
        })
    };
    tokio::time::sleep(shape.kill_after).await;
    let killed = Instant::now();
    set.stop(2).await.context("killing replica-2")?;
    let deadline = killed + RESUME_TIMEOUT;
    while !watchers.iter().all(Watcher::resumed) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sending.await.context("the writer task failed")?;
    let (acked, failed) = writer.take();
    let deadline = Instant::now() + GRACE;
    while watchers.iter().any(|w| w.events() < acked.len()) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let logs: Vec<watch::Log> = watchers.into_iter().map(Watcher::stop).collect();
    phase.done(&format!(
        "{} of {offered} creates acknowledged, {} watchers resumed",
        acked.len(),
        logs.iter().filter(|l| l.resumed.is_some()).count()
    ));

    let mut f = tally(&logs, &acked, killed);
    f.offered = offered;
    f.failed = failed;
    f.acked = acked.len();
    let names: HashSet<&str> = acked.iter().map(|c| c.name.as_str()).collect();
    for (k, label) in [(1, "replica-1"), (3, "replica-3")] {
        let lost = missing(&set.replicas[k - 1].client, ns, &names).await;
        f.lost
            .push((label.into(), lost.map_err(|e| format!("{e:#}"))));
    }
    let phase = progress.phase("failover: starting replica-2 again", 1);
    let restarted = set.start(2).await;
    phase.done(if restarted.is_ok() { "ready" } else { "failed" });
    let lost = match restarted {
        Ok(()) => missing(&set.replicas[1].client, ns, &names)
            .await
            .map_err(|e| format!("{e:#}")),
        Err(e) => Err(format!("{e:#}")),
    };
    f.lost.push(("replica-2 restarted".into(), lost));
    Ok(f)
}

/// Sum up the watchers' logs.
fn tally(logs: &[watch::Log], acked: &[Created], killed: Instant) -> Failover {
    let mut f = Failover {
        watchers: logs.len(),
        all_resumed: None,
        resumed: None,
        not_resumed: 0,
        noticed: None,
        gone: 0,
        missed: 0,
        duplicated: 0,
        disordered: 0,
        clean_watchers: 0,
        watch_error: None,
        offered: 0,
        acked: 0,
        failed: (0, None),
        lost: Vec::new(),
    };
    let mut resumed = Vec::new();
    for log in logs {
        match log.resumed {
            Some(at) => resumed.push(at.saturating_duration_since(killed)),
            None => {
                f.not_resumed += 1;
                if f.watch_error.is_none() {
                    f.watch_error = log.first_error.clone();
                }
            }
        }
        if let Some((at, _)) = &log.broke {
            let d = at.saturating_duration_since(killed);
            f.noticed = Some(f.noticed.map_or(d, |n: Duration| n.min(d)));
        }
        f.gone += log.gone;
        let c = watch::check(&log.events, acked);
        f.missed += c.missed;
        f.duplicated += c.duplicated;
        f.disordered += c.out_of_order + c.rv_mismatch;
        if c.clean() {
            f.clean_watchers += 1;
        }
    }
    if f.not_resumed == 0 {
        f.all_resumed = resumed.iter().max().copied();
    }
    f.resumed = stats::summarize(resumed);
    f
}

/// How many of `names` a list of `ns` on `client` lacks.
async fn missing(client: &Client, ns: &str, names: &HashSet<&str>) -> Result<usize> {
    let body = client
        .get(&format!("/api/v1/namespaces/{ns}/configmaps"))
        .await?;
    let list: Value = serde_json::from_slice(&body).context("decoding the ConfigMap list")?;
    let items = list["items"]
        .as_array()
        .context("the ConfigMap list has no items")?;
    let present: HashSet<&str> = items
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    Ok(names.iter().filter(|n| !present.contains(*n)).count())
}
