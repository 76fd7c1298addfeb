//! The measured phases and the report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use futures::StreamExt;
use http_body_util::BodyExt;
use hyper::Method;
use serde_json::{json, Value};

use super::client::Client;

/// How much work each phase does.
pub struct Scale {
    creates: usize,
    get_rate: u64,
    get_secs: u64,
    list_rate: u64,
    list_secs: u64,
    watchers: usize,
    watch_events: usize,
    rss_objects: usize,
}

impl Scale {
    /// The full run the issue's targets are about.
    pub fn full() -> Scale {
        Scale {
            creates: 20_000,
            get_rate: 2000,
            get_secs: 10,
            list_rate: 50,
            list_secs: 10,
            watchers: 1000,
            watch_events: 100,
            rss_objects: 100_000,
        }
    }

    /// A short run that proves the tool works.
    pub fn quick() -> Scale {
        Scale {
            creates: 1000,
            get_rate: 500,
            get_secs: 2,
            list_rate: 20,
            list_secs: 2,
            watchers: 50,
            watch_events: 20,
            rss_objects: 3000,
        }
    }
}

/// The figures.
#[derive(Default, Debug)]
pub struct Figures {
    creates_16: f64,
    creates_64: f64,
    updates_64: f64,
    get: (f64, f64),
    list: (f64, f64),
    watch: (f64, f64, usize),
    rss: Option<(usize, f64)>,
}

fn payload(ns: &str, name: &str) -> Vec<u8> {
    let data = "x".repeat(1000);
    serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": {"d": data}})).unwrap_or_default()
}

async fn namespace(c: &Client, name: &str) -> Result<()> {
    let body = serde_json::to_vec(
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )?;
    c.ok(Method::POST, "/api/v1/namespaces", Some(body))
        .await
        .map(|_| ())
}

/// Create `n` ConfigMaps with `workers` concurrent clients; returns creates/s and (name, rv).
async fn creates(
    c: &Client,
    ns: &str,
    prefix: &str,
    n: usize,
    workers: usize,
) -> Result<(f64, Vec<(String, String)>)> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..workers {
        let (c, next, ns, prefix) = (c.clone(), next.clone(), ns.to_string(), prefix.to_string());
        tasks.push(tokio::spawn(async move {
            let mut made = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return Ok::<_, anyhow::Error>(made);
                }
                let name = format!("{prefix}-{i}");
                let (body, _) = c
                    .ok(
                        Method::POST,
                        &format!("/api/v1/namespaces/{ns}/configmaps"),
                        Some(payload(&ns, &name)),
                    )
                    .await?;
                let v: Value = serde_json::from_slice(&body)?;
                made.push((
                    name,
                    v["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                ));
            }
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    Ok((n as f64 / started.elapsed().as_secs_f64(), all))
}

async fn updates(
    c: &Client,
    ns: &str,
    objects: Vec<(String, String)>,
    workers: usize,
) -> Result<f64> {
    let n = objects.len();
    let chunks: Vec<Vec<(String, String)>> = (0..workers)
        .map(|w| objects.iter().skip(w).step_by(workers).cloned().collect())
        .collect();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for chunk in chunks {
        let (c, ns) = (c.clone(), ns.to_string());
        tasks.push(tokio::spawn(async move {
            for (name, rv) in chunk {
                let mut body: Value = serde_json::from_slice(&payload(&ns, &name))?;
                body["metadata"]["resourceVersion"] = json!(rv);
                body["data"]["d"] = json!("y".repeat(1000));
                c.ok(
                    Method::PUT,
                    &format!("/api/v1/namespaces/{ns}/configmaps/{name}"),
                    Some(serde_json::to_vec(&body)?),
                )
                .await?;
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// Open-loop load: requests start on a fixed schedule; latency counts from the scheduled time,
/// so a stalled server cannot hide behind fewer requests.
async fn fixed_rate(c: &Client, path: String, rate: u64, secs: u64) -> Result<(f64, f64)> {
    let total = rate * secs;
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let start = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(total as usize);
    for i in 0..total {
        let at = start + interval * i as u32;
        tokio::time::sleep_until(at).await;
        let (c, path) = (c.clone(), path.clone());
        tasks.push(tokio::spawn(async move {
            c.ok(Method::GET, &path, None).await?;
            Ok::<_, anyhow::Error>(at.elapsed())
        }));
    }
    let mut lat = Vec::with_capacity(tasks.len());
    for t in tasks {
        lat.push(t.await??);
    }
    Ok((pct(&mut lat, 0.50), pct(&mut lat, 0.99)))
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v[i].as_secs_f64() * 1000.0
}

fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Watch delivery: `watchers` watches of one namespace; objects carry their send time.
async fn watch_latency(
    c: &Client,
    ns: &str,
    watchers: usize,
    events: usize,
) -> Result<(f64, f64, usize)> {
    let (body, _) = c
        .ok(
            Method::GET,
            &format!("/api/v1/namespaces/{ns}/configmaps?limit=1"),
            None,
        )
        .await?;
    let rv = serde_json::from_slice::<Value>(&body)?["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    let conns: Vec<Client> = (0..watchers.div_ceil(100))
        .map(|_| c.fresh())
        .collect::<Result<_>>()?;
    let writer = c.fresh()?;
    let mut tasks = Vec::new();
    for w in 0..watchers {
        let stream = conns[w % conns.len()]
            .watch(&format!(
                "/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={rv}"
            ))
            .await?;
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut buf = Vec::new();
            let mut body = stream.into_data_stream();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            while lat.len() < events {
                let chunk = match tokio::time::timeout_at(deadline, body.next()).await {
                    Ok(Some(Ok(c))) => c,
                    _ => break,
                };
                let arrived = now_nanos();
                buf.extend_from_slice(&chunk);
                // Find the send time without decoding the event: the watcher must cost far
                // less than the server it measures (both share this machine's cores).
                while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=nl).collect();
                    if let Some(sent) = sent_time(&line) {
                        lat.push(Duration::from_nanos(arrived.saturating_sub(sent) as u64));
                    }
                }
            }
            lat
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..events {
        let mut body: Value = serde_json::from_slice(&payload(ns, &format!("w-{i}")))?;
        body["metadata"]["annotations"] = json!({"bench/sent": now_nanos().to_string()});
        writer
            .ok(
                Method::POST,
                &format!("/api/v1/namespaces/{ns}/configmaps"),
                Some(serde_json::to_vec(&body)?),
            )
            .await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.context("watcher task")?);
    }
    let n = all.len();
    Ok((pct(&mut all, 0.50), pct(&mut all, 0.99), n))
}

const SENT: &[u8] = b"\"bench/sent\":\"";

/// The `bench/sent` annotation of a watch event line.
fn sent_time(line: &[u8]) -> Option<u128> {
    let at = line.windows(SENT.len()).position(|w| w == SENT)? + SENT.len();
    let digits: Vec<u8> = line[at..]
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// Run every phase.
pub async fn run_all<F: Fn() -> Option<f64>>(
    c: &Client,
    s: &Scale,
    rss: Option<F>,
) -> Result<Figures> {
    let run = format!("bench-{}", now_nanos() % 1_000_000);
    let mut f = Figures::default();
    namespace(c, &run).await?;
    eprintln!("[1/6] creates with 16 clients…");
    f.creates_16 = creates(c, &run, "a", s.creates, 16).await?.0;
    eprintln!("[2/6] creates with 64 clients…");
    let (rate, made) = creates(c, &run, "b", s.creates, 64).await?;
    f.creates_64 = rate;
    eprintln!("[3/6] updates with 64 clients…");
    f.updates_64 = updates(c, &run, made, 64).await?;
    eprintln!(
        "[4/6] GET at {}/s and LIST at {}/s…",
        s.get_rate, s.list_rate
    );
    f.get = fixed_rate(
        c,
        format!("/api/v1/namespaces/{run}/configmaps/a-1"),
        s.get_rate,
        s.get_secs,
    )
    .await?;
    let small = format!("{run}-list");
    namespace(c, &small).await?;
    creates(c, &small, "l", 100, 16).await?;
    f.list = fixed_rate(
        c,
        format!("/api/v1/namespaces/{small}/configmaps"),
        s.list_rate,
        s.list_secs,
    )
    .await?;
    eprintln!("[5/6] watch delivery to {} watchers…", s.watchers);
    let w = format!("{run}-watch");
    namespace(c, &w).await?;
    f.watch = watch_latency(c, &w, s.watchers, s.watch_events).await?;
    if let Some(rss) = rss {
        eprintln!("[6/6] memory at {} ConfigMaps…", s.rss_objects);
        let have = 2 * s.creates + 100 + s.watch_events;
        if s.rss_objects > have {
            creates(c, &run, "m", s.rss_objects - have, 64).await?;
        }
        f.rss = rss().map(|m| (s.rss_objects.max(have), m));
    }
    Ok(f)
}

/// The report as a Markdown table.
pub fn report(label: &str, s: &Scale, f: &Figures) -> String {
    let mut out = format!("Target: {label}\n\n| figure | value | target |\n|---|---|---|\n");
    out += &format!(
        "| creates/s, 16 clients ({} × 1 KiB ConfigMaps) | {:.0} | ≥ 8,000 |\n",
        s.creates, f.creates_16
    );
    out += &format!(
        "| creates/s, 64 clients | {:.0} | ≥ 8,000 |\n",
        f.creates_64
    );
    out += &format!("| updates/s, 64 clients | {:.0} | |\n", f.updates_64);
    out += &format!(
        "| GET p50 / p99 at {}/s | {:.2} ms / {:.2} ms | p99 ≤ 5 ms |\n",
        s.get_rate, f.get.0, f.get.1
    );
    out += &format!(
        "| LIST (100 objects) p50 / p99 at {}/s | {:.2} ms / {:.2} ms | |\n",
        s.list_rate, f.list.0, f.list.1
    );
    out += &format!(
        "| watch delivery p50 / p99, {} watchers × {} events at 10/s ({} of {} delivered) | {:.1} ms / {:.1} ms | p99 ≤ 50 ms |\n",
        s.watchers, s.watch_events, f.watch.2, s.watchers * s.watch_events, f.watch.0, f.watch.1
    );
    if let Some((n, mib)) = f.rss {
        out += &format!(
            "| resident memory at {n} ConfigMaps of 1 KiB | {mib:.0} MiB | ≤ 400 MB at 100,000 |\n"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_time_is_found_without_decoding() {
        let line =
            br#"{"type":"ADDED","object":{"metadata":{"annotations":{"bench/sent":"12345"}}}}"#;
        assert_eq!(sent_time(line), Some(12345));
        assert_eq!(sent_time(b"{}"), None);
    }

    #[test]
    fn percentiles() {
        let mut v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(pct(&mut v, 0.5), 50.0);
        assert_eq!(pct(&mut v, 0.99), 99.0);
        assert_eq!(pct(&mut [], 0.99), 0.0);
    }
}
