//! dnsperf, the load generator: one run against one server, and what its output says.
//!
//! A throughput run saturates the server (`-q` queries outstanding, no rate limit) and reads
//! dnsperf's summary: answers/s, lost queries, response codes and the mean latency. A latency
//! run offers a fixed rate (`-Q`) well below either server's capacity with `-v`, which prints
//! every answer's latency, so the percentiles are of service time rather than of queueing
//! behind a saturated socket (and `-v`'s printing does not cost the throughput run).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use super::super::stats::{summarize, Summary};

/// The client settings, the same for both servers.
#[derive(Clone, Debug)]
pub struct Load {
    /// `-c`: client sockets.
    pub clients: u32,
    /// `-T`: threads.
    pub threads: u32,
    /// `-q`: queries outstanding at most.
    pub outstanding: u32,
}

/// One dnsperf run's settings beyond [`Load`].
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// `-l`: how long.
    pub duration: Duration,
    /// `-Q`: queries per second at most (none: as fast as answered).
    pub rate: Option<u64>,
    /// `-v`: record every answer's latency.
    pub per_query: bool,
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// Queries sent.
    pub sent: u64,
    /// Queries never answered (within dnsperf's 5 s timeout, or outstanding at the end).
    pub lost: u64,
    /// Answers per second.
    pub qps: f64,
    /// dnsperf's `Response codes:` line, e.g. `NOERROR 100 (100.00%)`.
    pub rcodes: String,
    /// Mean latency.
    pub mean: Duration,
    /// Its standard deviation.
    pub stddev: Duration,
    /// Percentiles of the per-answer latencies (`-v` runs only).
    pub latency: Option<Summary>,
}

impl Run {
    /// Answers that were not NOERROR, from the response-code line.
    pub fn errors(&self) -> u64 {
        let fields: Vec<&str> = self.rcodes.split_whitespace().collect();
        let mut errors = 0;
        for pair in fields.windows(2) {
            if pair[0].chars().all(|c| c.is_ascii_uppercase()) && pair[0] != "NOERROR" {
                errors += pair[1].parse::<u64>().unwrap_or(0);
            }
        }
        errors
    }
}

/// Run dnsperf against 127.0.0.1:`port` with the queries in `queries`.
pub async fn run(port: u16, queries: &Path, load: &Load, pace: Pace) -> Result<Run> {
    let mut cmd = tokio::process::Command::new("dnsperf");
    cmd.arg("-s")
        .arg("127.0.0.1")
        .arg("-p")
        .arg(port.to_string())
        .arg("-d")
        .arg(queries)
        .arg("-l")
        .arg(format!("{:.3}", pace.duration.as_secs_f64()))
        .arg("-c")
        .arg(load.clients.to_string())
        .arg("-T")
        .arg(load.threads.to_string())
        .arg("-q")
        .arg(load.outstanding.to_string());
    if let Some(rate) = pace.rate {
        cmd.arg("-Q").arg(rate.to_string());
    }
    if pace.per_query {
        cmd.arg("-v");
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start dnsperf")?;
    let mut stderr = child.stderr.take().context("dnsperf's stderr")?;
    let errors = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let mut lines = BufReader::new(child.stdout.take().context("dnsperf's stdout")?).lines();
    let mut latencies = Vec::new();
    let mut summary = String::new();
    while let Some(line) = lines
        .next_line()
        .await
        .context("reading dnsperf's output")?
    {
        match line.strip_prefix("> ") {
            Some(answer) => {
                if let Some(l) = answer_latency(answer) {
                    latencies.push(l);
                }
            }
            None => {
                summary += &line;
                summary.push('\n');
            }
        }
    }
    let status = child.wait().await.context("waiting for dnsperf")?;
    let stderr = errors.await.unwrap_or_default();
    if !status.success() {
        bail!("dnsperf failed ({status}): {}", stderr.trim());
    }
    let mut run = parse_summary(&summary)
        .with_context(|| format!("dnsperf printed no statistics:\n{summary}{}", stderr.trim()))?;
    run.latency = summarize(latencies);
    Ok(run)
}

/// `dnsperf 2.10.0`, from its help text (`dnsperf` without a version when it does not say).
pub fn dnsperf_version() -> String {
    std::process::Command::new("dnsperf")
        .arg("-h")
        .output()
        .ok()
        .and_then(|o| {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let line = text.lines().find(|l| l.starts_with("Version "))?;
            Some(format!(
                "dnsperf {}",
                line.trim_start_matches("Version ").trim()
            ))
        })
        .unwrap_or_else(|| "dnsperf".into())
}

/// The latency of one `-v` line after `> `: `NOERROR name A 0.000297` (a timed-out query's
/// code is `T` and has none).
fn answer_latency(line: &str) -> Option<Duration> {
    let mut fields = line.split_whitespace();
    let code = fields.next()?;
    if code == "T" || code == "I" {
        return None;
    }
    let secs: f64 = fields.next_back()?.parse().ok()?;
    Some(Duration::from_secs_f64(secs.max(0.0)))
}

/// The figures of dnsperf's `Statistics:` block.
fn parse_summary(text: &str) -> Option<Run> {
    let value = |key: &str| -> Option<&str> {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(key))
            .map(str::trim)
    };
    let first = |key: &str| -> Option<&str> { value(key)?.split_whitespace().next() };
    let secs = |key: &str| -> Option<Duration> {
        let s: f64 = first(key)?.parse().ok()?;
        Some(Duration::from_secs_f64(s.max(0.0)))
    };
    Some(Run {
        sent: first("Queries sent:")?.parse().ok()?,
        lost: first("Queries lost:")?.parse().ok()?,
        qps: first("Queries per second:")?.parse().ok()?,
        rcodes: value("Response codes:").unwrap_or_default().to_string(),
        mean: secs("Average Latency (s):")?,
        stddev: secs("Latency StdDev (s):").unwrap_or_default(),
        latency: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "DNS Performance Testing Tool\nVersion 2.10.0\n\n\
        [Status] Command line: dnsperf -s 127.0.0.1\n[Status] Testing complete (time limit)\n\n\
        Statistics:\n\n  Queries sent:         1000\n  Queries completed:    998 (99.80%)\n\
        \x20 Queries lost:         2 (0.20%)\n\n\
        \x20 Response codes:       NOERROR 990 (99.20%), SERVFAIL 8 (0.80%)\n\
        \x20 Average packet size:  request 32, response 64\n  Run time (s):         1.000158\n\
        \x20 Queries per second:   997.842\n\n\
        \x20 Average Latency (s):  0.000283 (min 0.000173, max 0.000583)\n\
        \x20 Latency StdDev (s):   0.000175\n\n";

    #[test]
    fn reads_the_statistics() {
        let r = parse_summary(OUTPUT).unwrap();
        assert_eq!((r.sent, r.lost), (1000, 2));
        assert!((r.qps - 997.842).abs() < 1e-9);
        assert_eq!(r.mean, Duration::from_micros(283));
        assert_eq!(r.stddev, Duration::from_micros(175));
        assert_eq!(r.errors(), 8);
        assert!(parse_summary("[Status] nothing\n").is_none());
    }

    #[test]
    fn reads_per_query_latencies() {
        assert_eq!(
            answer_latency("NOERROR a.b.test A 0.000297"),
            Some(Duration::from_nanos(297_000))
        );
        assert_eq!(answer_latency("T a.b.test A"), None);
    }
}
