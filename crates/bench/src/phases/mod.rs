//! The measured phases, run in order against one server: create and update throughput, open-loop
//! GET and LIST latency, watch delivery, and memory once the store holds 100,000 ConfigMaps.
//!
//! A failed phase becomes a failed figure and the run goes on; only setup (the namespaces)
//! stops it.

mod fairness;
mod latency;
mod memory;
mod throughput;
mod watch;

use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use serde_json::json;

use super::client::Client;
use super::figures::{thousands, Figure, Goal, Measured, Missing};
use super::progress::Progress;
use throughput::Stored;

/// Bytes of data in each ConfigMap.
const DATA_BYTES: usize = 1024;

/// The client counts of the throughput phases, with the keys of their figures.
const CLIENTS: [(usize, &str, &str); 2] = [
    (16, "create-16", "update-16"),
    (64, "create-64", "update-64"),
];

/// How much work each phase does.
pub struct Scale {
    /// "full" or "quick", for the report.
    pub name: &'static str,
    /// Whether the targets apply (they are stated for the full run).
    pub targets: bool,
    /// ConfigMaps created (then updated) per client count.
    pub objects: usize,
    /// HTTP/2 connections of the throughput phases.
    pub connections: usize,
    /// Time budget of each throughput phase.
    pub budget: Duration,
    /// GETs per second.
    pub get_rate: u64,
    /// LISTs per second.
    pub list_rate: u64,
    /// LISTs per second of the flooding user in the fairness phase.
    pub flood_rate: u64,
    /// How long each open-loop phase offers its load.
    pub latency_duration: Duration,
    /// ConfigMaps in the listed namespace.
    pub list_objects: usize,
    /// Concurrent watchers.
    pub watchers: usize,
    /// Creates per second while watched.
    pub watch_rate: u64,
    /// Creates while watched.
    pub watch_events: usize,
    /// ConfigMaps stored when memory is read.
    pub memory_objects: usize,
}

impl Scale {
    /// The run the targets are stated for (a few minutes).
    pub fn full() -> Scale {
        Scale {
            name: "full",
            targets: true,
            objects: 20_000,
            connections: 4,
            budget: Duration::from_secs(30),
            get_rate: 2_000,
            list_rate: 50,
            flood_rate: 2_000,
            latency_duration: Duration::from_secs(20),
            list_objects: 100,
            watchers: 1_000,
            watch_rate: 10,
            watch_events: 200,
            memory_objects: 100_000,
        }
    }

    /// A short run (about 20 s) that proves the tool works; its figures mean little.
    pub fn quick() -> Scale {
        Scale {
            name: "quick",
            targets: false,
            objects: 1_000,
            connections: 4,
            budget: Duration::from_secs(15),
            get_rate: 500,
            list_rate: 20,
            flood_rate: 200,
            latency_duration: Duration::from_secs(2),
            list_objects: 100,
            watchers: 100,
            watch_rate: 20,
            watch_events: 20,
            memory_objects: 3_000,
        }
    }

    fn goal(&self, goal: Goal) -> Option<Goal> {
        self.targets.then_some(goal)
    }
}

/// The namespaces a run creates: objects, the listed namespace, the watched namespace.
pub fn namespaces(run: &str) -> [String; 3] {
    [
        run.to_string(),
        format!("{run}-list"),
        format!("{run}-watch"),
    ]
}

/// A ConfigMap with `DATA_BYTES` of `fill`, optionally a resourceVersion (for updates) and
/// one annotation.
fn configmap(
    ns: &str,
    name: &str,
    rv: Option<&str>,
    annotation: Option<(&str, &str)>,
    fill: u8,
) -> Result<Bytes> {
    let data = String::from_utf8(vec![fill; DATA_BYTES]).context("fill must be ASCII")?;
    let mut metadata = json!({"name": name, "namespace": ns});
    if let Some(rv) = rv {
        metadata["resourceVersion"] = json!(rv);
    }
    if let Some((k, v)) = annotation {
        metadata["annotations"] = json!({ k: v });
    }
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"payload": data}});
    Ok(Bytes::from(serde_json::to_vec(&cm)?))
}

/// Run every phase against the server of `client`, in namespaces named after `run`; `pids`
/// are the server's processes (empty: memory is not measured).
pub async fn run_all(
    client: &Client,
    run: &str,
    scale: &Scale,
    progress: &Progress,
    pids: &[u32],
) -> Result<Vec<Figure>> {
    let [ns, list_ns, watch_ns] = namespaces(run);
    for n in [&ns, &list_ns, &watch_ns] {
        let body = serde_json::to_vec(
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
        )?;
        client
            .post("/api/v1/namespaces", Bytes::from(body))
            .await
            .with_context(|| format!("cannot create the namespace {n}"))?;
    }
    let mut figures = Vec::new();
    let mut stored = 0usize;
    if !pids.is_empty() {
        figures.push(Figure::new(
            "rss-start",
            "resident memory at start (no ConfigMaps)".into(),
            None,
            memory_now(pids),
        ));
    }

    let pool = client.with_connections(scale.connections);
    let mut created: Vec<Vec<Stored>> = Vec::new();
    for (clients, key, _) in CLIENTS {
        let phase = progress.phase(&format!("create, {clients} clients"), scale.objects as u64);
        let prefix = format!("c{clients}");
        let (tally, objects) = throughput::create(
            &pool,
            &ns,
            &prefix,
            scale.objects,
            clients,
            scale.budget,
            phase.bar(),
        )
        .await;
        stored += tally.done;
        phase.done(&format!("{:.0}/s{}", tally.rate(), suffix(tally.detail())));
        figures.push(Figure::new(
            key,
            format!(
                "creates/s, {clients} clients ({} ConfigMaps of 1 KiB over {} connections)",
                thousands(scale.objects as u64),
                pool.connections()
            ),
            scale.goal(Goal::AtLeastPerSecond(8_000.0)),
            tally
                .require_some()
                .map(|_| (Measured::PerSecond(tally.rate()), tally.detail())),
        ));
        created.push(objects);
    }
    let mut get_paths = Vec::new();
    for ((clients, _, key), objects) in CLIENTS.into_iter().zip(created) {
        let phase = progress.phase(&format!("update, {clients} clients"), objects.len() as u64);
        if get_paths.is_empty() {
            get_paths = objects
                .iter()
                .map(|o| format!("/api/v1/namespaces/{ns}/configmaps/{}", o.name))
                .collect();
        }
        let (tally, _) =
            throughput::update(&pool, &ns, objects, clients, scale.budget, phase.bar()).await;
        phase.done(&format!("{:.0}/s{}", tally.rate(), suffix(tally.detail())));
        figures.push(Figure::new(
            key,
            format!("updates/s, {clients} clients (each object once, 1 KiB of new data)"),
            None,
            tally
                .require_some()
                .map(|_| (Measured::PerSecond(tally.rate()), tally.detail())),
        ));
    }

    let total = scale.get_rate * scale.latency_duration.as_secs();
    let phase = progress.phase(&format!("GET at {}/s", scale.get_rate), total);
    let get = latency::get(
        &pool,
        get_paths,
        scale.get_rate,
        scale.latency_duration,
        phase.bar(),
    )
    .await;
    phase.done(&latency_line(&get));
    figures.push(Figure::new(
        "get",
        format!(
            "GET p50 / p99 at {}/s, open loop ({} requests)",
            thousands(scale.get_rate),
            thousands(total)
        ),
        scale.goal(Goal::P99AtMost(Duration::from_millis(5))),
        get.map(|g| (Measured::Latency(g.summary), g.detail())),
    ));

    let phase = progress.phase(
        &format!("LIST of {} objects", scale.list_objects),
        scale.list_objects as u64,
    );
    let (tally, listed) = throughput::create(
        &pool,
        &list_ns,
        "l",
        scale.list_objects,
        16,
        scale.budget,
        phase.bar(),
    )
    .await;
    stored += tally.done;
    phase.done(&format!("{} created", tally.done));
    let total = scale.list_rate * scale.latency_duration.as_secs();
    let phase = progress.phase(&format!("LIST at {}/s", scale.list_rate), total);
    let list = if tally.done == scale.list_objects {
        let path = format!("/api/v1/namespaces/{list_ns}/configmaps");
        latency::get(
            &pool,
            vec![path],
            scale.list_rate,
            scale.latency_duration,
            phase.bar(),
        )
        .await
    } else {
        Err(anyhow::anyhow!(
            "only {} of {} objects to list were created{}",
            tally.done,
            scale.list_objects,
            suffix(tally.detail())
        ))
    };
    phase.done(&latency_line(&list));
    figures.push(Figure::new(
        "list",
        format!(
            "LIST ({} objects) p50 / p99 at {}/s, open loop",
            scale.list_objects, scale.list_rate
        ),
        None,
        list.map(|l| (Measured::Latency(l.summary), l.detail())),
    ));

    let total = (scale.flood_rate + fairness::CALM_RATE) * scale.latency_duration.as_secs();
    let phase = progress.phase(
        &format!(
            "one ServiceAccount LISTing at {}/s, another user's GETs",
            thousands(scale.flood_rate)
        ),
        total,
    );
    let paths = listed
        .iter()
        .map(|o| format!("/api/v1/namespaces/{list_ns}/configmaps/{}", o.name))
        .collect();
    let fair = fairness::run(
        client,
        &list_ns,
        format!("/api/v1/namespaces/{list_ns}/configmaps"),
        paths,
        scale.flood_rate,
        scale.latency_duration,
        phase.bar(),
    )
    .await;
    let (flood, calm) = match fair {
        Ok(f) => (Ok(f.flood), Ok(f.calm)),
        Err(e) => (Err(anyhow::anyhow!("{e:#}")), Err(e)),
    };
    phase.done(&format!("the other user's GETs: {}", latency_line(&calm)));
    figures.push(Figure::new(
        "fair-get",
        format!(
            "another user's GET p50 / p99 ({}/s) while one ServiceAccount LISTs {} objects at \
             {}/s, open loop",
            fairness::CALM_RATE,
            scale.list_objects,
            thousands(scale.flood_rate)
        ),
        scale.goal(Goal::P99AtMost(Duration::from_millis(20))),
        calm.map(|c| (Measured::Latency(c.summary), c.detail())),
    ));
    figures.push(Figure::new(
        "fair-flood",
        "… the flooding ServiceAccount's LISTs p50 / p99 (refusals such as 429 among its errors)"
            .into(),
        None,
        flood.map(|f| (Measured::Latency(f.summary), f.detail())),
    ));

    let shape = watch::Shape {
        watchers: scale.watchers,
        rate: scale.watch_rate,
        events: scale.watch_events,
    };
    let phase = progress.phase(
        &format!("watch delivery to {} watchers", scale.watchers),
        scale.watch_events as u64,
    );
    let delivery = watch::run(client, &watch_ns, &shape, phase.bar()).await;
    let connections = delivery.as_ref().map(|d| d.connections).unwrap_or(0);
    match &delivery {
        Ok(d) => {
            stored += d.created;
            phase.done(&format!(
                "p50 {} p99 {}, {} of {} delivered",
                super::stats::ms(d.summary.p50),
                super::stats::ms(d.summary.p99),
                d.delivered,
                d.expected
            ));
        }
        Err(e) => phase.done(&format!("failed: {e:#}")),
    }
    figures.push(Figure::new(
        "watch",
        format!(
            "watch delivery p50 / p99, {} watchers on {connections} connection{}, {} creates/s for {} s",
            thousands(scale.watchers as u64),
            if connections == 1 { "" } else { "s" },
            scale.watch_rate,
            scale.watch_events as u64 / scale.watch_rate.max(1)
        ),
        scale.goal(Goal::P99AtMost(Duration::from_millis(50))),
        delivery.map(|d| (Measured::Latency(d.summary), d.detail())),
    ));

    figures.push(fill_and_measure(&pool, &ns, scale, progress, pids, stored).await);
    Ok(figures)
}

/// Create ConfigMaps until the run has stored `scale.memory_objects`, then read the memory.
async fn fill_and_measure(
    pool: &Client,
    ns: &str,
    scale: &Scale,
    progress: &Progress,
    pids: &[u32],
    stored: usize,
) -> Figure {
    let label = format!(
        "resident memory at {} ConfigMaps of 1 KiB",
        thousands(scale.memory_objects as u64)
    );
    let goal = (scale.memory_objects >= 100_000)
        .then_some(Goal::AtMostBytes(400_000_000))
        .filter(|_| scale.targets);
    if pids.is_empty() {
        return Figure {
            key: "rss",
            label,
            value: Err(Missing::Skipped(
                "name the server's process with --pid (or --peer-pid)".into(),
            )),
            detail: None,
            goal,
        };
    }
    let more = scale.memory_objects.saturating_sub(stored);
    let phase = progress.phase(
        &format!("fill to {} ConfigMaps", scale.memory_objects),
        more as u64,
    );
    let (tally, _) =
        throughput::create(pool, ns, "m", more, 64, scale.budget * 3, phase.bar()).await;
    let value = if tally.done < more {
        Err(anyhow::anyhow!(
            "only {} of {more} ConfigMaps were created{}",
            tally.done,
            suffix(tally.detail())
        ))
    } else {
        // Let the server finish what the writes left behind (caches, compaction) first.
        tokio::time::sleep(Duration::from_secs(2)).await;
        memory_now(pids)
    };
    match &value {
        Ok((m, _)) => phase.done(&m.text()),
        Err(e) => phase.done(&format!("failed: {e:#}")),
    }
    Figure::new("rss", label, goal, value)
}

fn memory_now(pids: &[u32]) -> Result<(Measured, Option<String>)> {
    let detail = (pids.len() > 1).then(|| format!("sum of {} processes", pids.len()));
    Ok((Measured::Bytes(memory::resident(pids)?), detail))
}

fn latency_line(r: &Result<latency::OpenLoop>) -> String {
    match r {
        Ok(o) => format!(
            "p50 {} p99 {} max {}{}",
            super::stats::ms(o.summary.p50),
            super::stats::ms(o.summary.p99),
            super::stats::ms(o.summary.max),
            suffix(o.detail())
        ),
        Err(e) => format!("failed: {e:#}"),
    }
}

fn suffix(detail: Option<String>) -> String {
    detail.map(|d| format!(" ({d})")).unwrap_or_default()
}

#[cfg(test)]
mod tests;
