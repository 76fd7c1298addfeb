//! The two DNS servers under test, each started on a free 127.0.0.1 port in the benchmark's
//! temporary directory and stopped (by its own process id) when dropped: knotd with a zone file,
//! and this build's `flotilla dns --fleet-file`.

use std::ffi::OsStr;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::super::procs::{self, Proc};
use super::probe;

/// How long a server gets to load its records and answer.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The programs the benchmark runs besides flotilla: one plain line naming the packages when
/// one is missing.
pub fn check_tools() -> Result<()> {
    let missing: Vec<&str> = ["knotd", "dnsperf"]
        .into_iter()
        .filter(|t| find(t).is_none())
        .collect();
    if !missing.is_empty() {
        bail!(
            "{} not found: apt-get install knot dnsperf",
            missing.join(" and ")
        );
    }
    Ok(())
}

/// `tool` on PATH or in /usr/sbin (where Debian puts knotd, outside a user's PATH).
pub fn find(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// A port free for both UDP and TCP on 127.0.0.1 (free now: the server binds it next).
pub fn free_port() -> Result<u16> {
    for _ in 0..50 {
        let tcp = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("cannot bind a TCP port")?;
        let port = tcp.local_addr()?.port();
        if UdpSocket::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return Ok(port);
        }
    }
    bail!("found no port free for both UDP and TCP on 127.0.0.1")
}

/// A DNS server the benchmark started.
pub struct Server {
    /// `knotd` or `flotilla dns`.
    pub label: &'static str,
    /// Where it answers.
    pub addr: SocketAddr,
    proc: Proc,
}

impl Server {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// An error quoting its log if it has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        self.proc.check_alive()
    }

    /// Stop it (SIGTERM, then SIGKILL).
    pub fn stop(mut self) -> Result<()> {
        self.proc.stop()
    }

    /// Wait until it answers `name` with at least one record.
    async fn wait_ready(&mut self, name: &str) -> Result<()> {
        let started = Instant::now();
        let mut last = String::from("no answer yet");
        while started.elapsed() < READY_TIMEOUT {
            self.check_alive()?;
            match probe::ask(self.addr, name, Duration::from_millis(500)).await {
                Ok(a) if !a.addresses.is_empty() => return Ok(()),
                Ok(a) => last = format!("answered {} without records", a.rcode),
                Err(e) => last = format!("{e:#}"),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!(
            "{} at {} did not answer {name} within {} s ({last}); the end of its log:\n{}",
            self.label,
            self.addr,
            READY_TIMEOUT.as_secs(),
            self.proc.log_tail(20)
        )
    }
}

/// Start knotd on the zone file `zone_file` in `dir`, and wait until it answers `sample`.
pub async fn knotd(dir: &Path, zone: &str, zone_file: &Path, sample: &str) -> Result<Server> {
    let knotd = find("knotd").context("knotd not found: apt-get install knot dnsperf")?;
    let port = free_port()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let conf = dir.join("knot.conf");
    std::fs::write(
        &conf,
        super::records::knot_conf(dir, port, zone, zone_file, cores),
    )
    .with_context(|| format!("cannot write {}", conf.display()))?;
    let proc = Proc::start(
        "knotd",
        &knotd,
        &[OsStr::new("-c"), conf.as_os_str()],
        "warn",
        &dir.join("knotd.log"),
    )?;
    let mut server = Server {
        label: "knotd",
        addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        proc,
    };
    server.wait_ready(sample).await?;
    Ok(server)
}

/// Start `flotilla dns --fleet-file fleet_file` (this build), and wait until it answers
/// `sample`. `log` names its log file in `dir`.
pub async fn flotilla(
    dir: &Path,
    zone: &str,
    fleet_file: &Path,
    sample: &str,
    log: &str,
) -> Result<Server> {
    let port = free_port()?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listen = addr.to_string();
    let proc = procs::start(
        "flotilla dns",
        &[
            OsStr::new("dns"),
            OsStr::new("--fleet-file"),
            fleet_file.as_os_str(),
            OsStr::new("--listen"),
            OsStr::new(&listen),
            OsStr::new("--zone"),
            OsStr::new(zone),
        ],
        &dir.join(log),
    )?;
    let mut server = Server {
        label: "flotilla dns",
        addr,
        proc,
    };
    server.wait_ready(sample).await?;
    Ok(server)
}
