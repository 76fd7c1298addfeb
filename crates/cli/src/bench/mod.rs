//! `flotilla bench api`: drive a Kubernetes API server over HTTPS and report throughput,
//! latency and memory; append the figures to BENCHMARKS.md.
//!
//! By default it starts its own hub (this binary, `serve`, SQLite in a temp dir) and stops it at
//! the end; `--kubeconfig` measures any other server instead (e.g. a kube-apiserver + etcd, with
//! `--pid` naming the process whose memory to read).

mod client;
mod phases;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};

use client::{read_kubeconfig, Client};

/// `flotilla bench …`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand, Debug)]
enum What {
    /// Benchmark the Kubernetes API: create/update throughput, GET/LIST latency at a fixed
    /// load, watch delivery latency with 1,000 watchers, memory per 100,000 ConfigMaps.
    Api(ApiArgs),
}

/// Options of `flotilla bench api`.
#[derive(Args, Debug)]
pub struct ApiArgs {
    /// Measure the server of this kubeconfig instead of starting a hub.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// With --kubeconfig: the server's process id, to read its memory.
    #[arg(long)]
    pid: Option<u32>,
    /// A name for the target in the report.
    #[arg(long, default_value = "flotilla hub (SQLite)")]
    label: String,
    /// Short run (about 20 s) with small counts, to check the tool works.
    #[arg(long)]
    quick: bool,
    /// Where to append the results.
    #[arg(long, default_value = "BENCHMARKS.md")]
    output: PathBuf,
}

/// Run a benchmark.
pub async fn run(args: BenchArgs) -> Result<()> {
    match args.what {
        What::Api(a) => api(a).await,
    }
}

struct Hub {
    child: Child,
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

fn start_hub() -> Result<Hub> {
    let dir = tempfile::tempdir().context("temp dir for the hub")?;
    let exe = std::env::current_exe().context("locating this binary")?;
    let child = Command::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting flotilla serve")?;
    let kubeconfig = dir.path().join("admin.kubeconfig");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kubeconfig.exists() {
        if Instant::now() > deadline {
            bail!("the hub did not write its kubeconfig within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Hub {
        child,
        _dir: dir,
        kubeconfig,
    })
}

/// Resident memory of a process in MiB.
fn rss_mib(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

async fn api(a: ApiArgs) -> Result<()> {
    let hub = match &a.kubeconfig {
        Some(_) => None,
        None => Some(start_hub()?),
    };
    let kubeconfig = a
        .kubeconfig
        .clone()
        .or_else(|| hub.as_ref().map(|h| h.kubeconfig.clone()))
        .context("no kubeconfig")?;
    let pid = a.pid.or_else(|| hub.as_ref().map(|h| h.child.id()));
    let target = read_kubeconfig(&kubeconfig)?;
    let client = Client::new(&target)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while client
        .ok(hyper::Method::GET, "/readyz", None)
        .await
        .is_err()
    {
        if Instant::now() > deadline {
            bail!("{} is not ready after 30 s", target.server);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let scale = if a.quick {
        phases::Scale::quick()
    } else {
        phases::Scale::full()
    };
    let figures = phases::run_all(
        &client,
        &scale,
        pid.and_then(|p| rss_mib(p).map(|_| p))
            .map(|p| move || rss_mib(p)),
    )
    .await?;
    let report = phases::report(&a.label, &scale, &figures);
    println!("{report}");
    append(&a.output, &report)?;
    eprintln!("appended to {}", a.output.display());
    Ok(())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map(|kb| format!("{:.0} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_default();
    format!(
        "{} cores, {cpu}, {mem}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    )
}

fn append(path: &std::path::Path, report: &str) -> Result<()> {
    use std::io::Write;
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    if new {
        writeln!(f, "# Benchmarks\n\nFigures printed by `flotilla bench …`, newest last. Each section says when, on what machine and at which commit it was measured.\n")?;
    }
    writeln!(
        f,
        "## {} — {} — commit {commit}\n\nMachine: {}\n\n{report}\n",
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        env!("CARGO_PKG_VERSION"),
        machine()
    )?;
    Ok(())
}
