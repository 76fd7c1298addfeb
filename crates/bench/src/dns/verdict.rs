//! flotilla alone at a larger fleet: its memory after load, and how long a verdict change
//! takes to show in its answers.
//!
//! The verdict change goes the whole way a static fleet's does: the fleet file is replaced
//! (written beside it, then renamed over it) with one endpoint Unhealthy; `flotilla dns
//! --fleet-file` notices the new file, parses it, updates its snapshot and swaps it in; the
//! benchmark asks for the service's global name about every millisecond from the rename on,
//! until the endpoint's address is gone from the answer. Then the endpoint is made Healthy
//! again and timed until its address is back. Each change is a different service.

use std::net::IpAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::super::figures::thousands;
use super::super::procs::{self, Rss};
use super::super::progress::Progress;
use super::super::stats::{summarize, Summary};
use super::records::{Generated, ZONE};
use super::{perf, probe, servers, Plan};

/// How long one change may take to show before the measurement gives up.
const CHANGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause between two questions while waiting for a change.
const POLL: Duration = Duration::from_millis(1);

/// Verdict changes timed from the rename of the fleet file to the first answer showing them.
#[derive(Clone, Debug)]
pub struct Timings {
    /// Bytes of the fleet file.
    pub file_bytes: usize,
    /// An endpoint marked Unhealthy until its address left the answer.
    pub removed: Summary,
    /// The endpoint marked Healthy again until its address was back.
    pub returned: Summary,
}

/// Start flotilla on `plan.memory_services` services, load it, read its memory, then time
/// verdict changes. The outer error means the server could not be measured at all.
pub async fn large(plan: &Plan, dir: &Path, progress: &Progress) -> Result<(Rss, Result<Timings>)> {
    let n = plan.memory_services;
    let g = Generated::new(n, plan.endpoints);
    let fleet_file = dir.join("fleet-large.json");
    let queries = dir.join("queries-large.txt");
    let healthy = serde_json::to_vec(&g.fleet(&[]))?;
    std::fs::write(&fleet_file, &healthy)
        .with_context(|| format!("cannot write {}", fleet_file.display()))?;
    std::fs::write(&queries, g.queries(ZONE))
        .with_context(|| format!("cannot write {}", queries.display()))?;

    let phase = progress.phase(
        &format!(
            "flotilla dns at {} services: load, then memory",
            thousands(n as u64)
        ),
        1,
    );
    let mut server = servers::flotilla(
        dir,
        ZONE,
        &fleet_file,
        &g.global_name(0, ZONE),
        "flotilla-dns-large.log",
    )
    .await?;
    let pace = perf::Pace {
        duration: plan.duration.min(Duration::from_secs(5)),
        rate: None,
        per_query: false,
    };
    let run = perf::run(server.addr.port(), &queries, &plan.load, pace).await?;
    server.check_alive()?;
    let rss = procs::rss(server.pid())?;
    phase.done(&format!(
        "{:.0} answers/s; VmRSS {} MB, VmHWM {} MB",
        run.qps,
        rss.now / 1_000_000,
        rss.peak / 1_000_000
    ));

    let phase = progress.phase(
        "verdict changes through the fleet file",
        plan.verdict_changes as u64,
    );
    let timings = changes(&g, &fleet_file, &healthy, &mut server, plan, phase.bar()).await;
    if let Ok(t) = &timings {
        phase.done(&format!(
            "removed in p50 {:?} / max {:?}, back in p50 {:?} / max {:?}",
            t.removed.p50, t.removed.max, t.returned.p50, t.returned.max
        ));
    } else {
        phase.done("failed");
    }
    server.stop().context("stopping flotilla dns")?;
    Ok((rss, timings))
}

async fn changes(
    g: &Generated,
    fleet_file: &Path,
    healthy: &[u8],
    server: &mut servers::Server,
    plan: &Plan,
    bar: &indicatif::ProgressBar,
) -> Result<Timings> {
    let mut prober = probe::Prober::new().await?;
    let n = g.services.len();
    let mut removed = Vec::new();
    let mut returned = Vec::new();
    for i in 0..plan.verdict_changes {
        // Spread over the fleet (7919 is prime, so the services differ while i < n).
        let s = (i * 7919 + n / 2) % n;
        let c = i % g.clusters.len();
        let name = g.global_name(s, ZONE);
        let address = IpAddr::V4(g.services[s].addresses[c]);
        let before = prober
            .ask(server.addr, &name, Duration::from_secs(2))
            .await?;
        if !before.addresses.contains(&address) {
            bail!("{name} is answered without {address} before the change: {before:?}");
        }
        let sick = serde_json::to_vec(&g.fleet(&[(s, c)]))?;
        removed.push(
            replace_and_wait(fleet_file, &sick, server, &mut prober, &name, |a| {
                !a.contains(&address)
            })
            .await?,
        );
        returned.push(
            replace_and_wait(fleet_file, healthy, server, &mut prober, &name, |a| {
                a.contains(&address)
            })
            .await?,
        );
        bar.inc(1);
    }
    Ok(Timings {
        file_bytes: healthy.len(),
        removed: summarize(removed).context("no verdict changes")?,
        returned: summarize(returned).context("no verdict changes")?,
    })
}

/// Write `contents` beside `file`, rename it over `file`, and ask for `name` until `shown`
/// holds for the answer's addresses: the time from the rename to that answer.
async fn replace_and_wait(
    file: &Path,
    contents: &[u8],
    server: &mut servers::Server,
    prober: &mut probe::Prober,
    name: &str,
    shown: impl Fn(&std::collections::BTreeSet<IpAddr>) -> bool,
) -> Result<Duration> {
    let next = file.with_extension("json.next");
    std::fs::write(&next, contents).with_context(|| format!("cannot write {}", next.display()))?;
    let started = Instant::now();
    std::fs::rename(&next, file).with_context(|| format!("cannot replace {}", file.display()))?;
    loop {
        let answer = prober
            .ask(server.addr, name, Duration::from_secs(1))
            .await?;
        if shown(&answer.addresses) {
            return Ok(started.elapsed());
        }
        if started.elapsed() > CHANGE_TIMEOUT {
            server.check_alive()?;
            bail!(
                "{name} still answered {:?} {} s after the fleet file changed",
                answer.addresses,
                CHANGE_TIMEOUT.as_secs()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}
