//! The report: a Markdown section naming when, on what machine and at which commit the figures
//! were measured, then one table row per figure with its target (and, when a peer server was
//! measured too, the peer's figure and the ratio hub/peer). It is printed and appended to
//! BENCHMARKS.md.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use super::figures::{thousands, Figure};
use super::stats::{ms, Summary};

/// The header a new BENCHMARKS.md starts with.
const HEADER: &str = "# Benchmarks\n\nFigures printed by `flotilla bench …`, newest last. Each \
section says when, on what machine and at which commit it was measured. Unless a section says \
otherwise, the load generator ran on the same machine as the server and shared its cores.\n";

/// One measured server.
pub struct Measured {
    /// Its name in the report.
    pub label: String,
    /// What it is and where (URL, data directory).
    pub about: String,
    /// Its figures.
    pub figures: Vec<Figure>,
}

/// Everything a report section says.
pub struct Section {
    /// `YYYY-MM-DD HH:MM UTC`.
    pub when: String,
    /// From [`machine`].
    pub machine: String,
    /// From [`commit`].
    pub commit: String,
    /// "full" or "quick", and how the binary was built.
    pub run: String,
    /// The server the targets are about.
    pub target: Measured,
    /// The same server run otherwise (e.g. `--durability relaxed`): its figures in a column
    /// of their own after the target's.
    pub also: Vec<Measured>,
    /// A server measured for comparison.
    pub peer: Option<Measured>,
}

/// `2 CPUs, AMD EPYC 7B13, 23.5 GiB memory` from nproc, /proc/cpuinfo and /proc/meminfo.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".into());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    format!(
        "{cpus} CPUs (nproc), {}, {} memory",
        cpu_model(&cpuinfo).unwrap_or_else(|| "unknown CPU".into()),
        mem_total(&meminfo).unwrap_or_else(|| "unknown".into())
    )
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    let line = cpuinfo.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

fn mem_total(meminfo: &str) -> Option<String> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{:.1} GiB", kb / 1024.0 / 1024.0))
}

/// The commit checked out where the benchmark runs (or else where its binary was built),
/// marked when the tree differs from it; `unknown` outside a git checkout.
pub fn commit() -> String {
    let here = std::env::current_dir().unwrap_or_default();
    let built = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    [here, built]
        .iter()
        .find_map(|dir| commit_in(dir))
        .unwrap_or_else(|| "unknown".into())
}

fn commit_in(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let hash = git(&["rev-parse", "--short", "HEAD"])?;
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{hash} (with uncommitted changes)")
    } else {
        hash
    })
}

/// The type of the file system holding `path` (`ext4`, `tmpfs`, …) from /proc/self/mounts: the
/// mount whose directory is the longest prefix of the path.
pub fn filesystem_of(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let (_, dir, kind) = (fields.next()?, fields.next()?, fields.next()?);
            path.starts_with(dir).then(|| (dir.len(), kind.to_owned()))
        })
        .max_by_key(|(len, _)| *len)
        .map_or_else(|| "an unknown file system".into(), |(_, kind)| kind)
}

/// The section as Markdown.
pub fn render(s: &Section) -> String {
    let mut out = format!(
        "## {} — `flotilla bench api` — commit {}\n\n- Machine: {}\n- Run: {}\n- Target: {} — {}\n",
        s.when, s.commit, s.machine, s.run, s.target.label, s.target.about
    );
    for also in &s.also {
        out += &format!("- Also: {} — {}\n", also.label, also.about);
    }
    if let Some(peer) = &s.peer {
        out += &format!("- Peer: {} — {}\n", peer.label, peer.about);
    }
    out += "\n";
    let mut head = format!("| figure | {} | target | met |", s.target.label);
    for also in &s.also {
        head += &format!(" {} |", also.label);
    }
    if let Some(peer) = &s.peer {
        head += &format!(" {} | {} / {} |", peer.label, s.target.label, peer.label);
    }
    let columns = head.matches(" |").count();
    out += &format!("{head}\n|{}\n", "---|".repeat(columns));
    for f in &s.target.figures {
        let figure_of = |m: &Measured| -> String {
            m.figures
                .iter()
                .find(|o| o.key == f.key)
                .map(|o| cell(&o.value_text()))
                .unwrap_or_default()
        };
        let mut row = format!(
            "| {} | {} | {} | {} |",
            f.label,
            cell(&f.value_text()),
            goal_text(f),
            met_text(f)
        );
        for also in &s.also {
            row += &format!(" {} |", figure_of(also));
        }
        if let Some(peer) = &s.peer {
            let p = peer.figures.iter().find(|p| p.key == f.key);
            row += &format!(
                " {} | {} |",
                figure_of(peer),
                p.and_then(|p| ratio(f, p)).unwrap_or_default()
            );
        }
        out += &row;
        out += "\n";
    }
    if let Some(peer) = &s.peer {
        out += &format!(
            "\n{} / {}: for rates, above 1 means {} is faster; for latencies (p99) and memory, \
             below 1 means {} is faster or smaller.\n",
            s.target.label, peer.label, s.target.label, s.target.label
        );
    }
    out
}

fn goal_text(f: &Figure) -> String {
    f.goal.map(|g| g.text()).unwrap_or_default()
}

fn met_text(f: &Figure) -> &'static str {
    f.met().map(yes).unwrap_or_default()
}

/// A "met" cell: `yes`, or a bold `no`.
pub(crate) fn yes(met: bool) -> &'static str {
    if met {
        "yes"
    } else {
        "**no**"
    }
}

/// The ratio of the two headline numbers (rate, p99 or bytes), e.g. `1.25×`.
fn ratio(a: &Figure, b: &Figure) -> Option<String> {
    let (a, b) = (a.value.as_ref().ok()?, b.value.as_ref().ok()?);
    let (a, b) = (a.headline(), b.headline());
    (b > 0.0).then(|| format!("{:.2}×", a / b))
}

/// Keep a table cell on one row: no newlines or pipes from error messages.
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// Append `section` to `path`, starting the file with a header when it is new.
pub fn append(path: &Path, section: &str) -> Result<()> {
    let new = !path.exists() || std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {} to append the figures", path.display()))?;
    let mut text = String::new();
    if new {
        text += HEADER;
    }
    text += "\n";
    text += section;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write to {}", path.display()))
}

/// Print the report, and append it to `output` if given.
pub(crate) fn publish(text: &str, output: Option<&Path>) -> Result<()> {
    println!("\n{text}");
    if let Some(path) = output {
        append(path, text)?;
        eprintln!("appended to {}", path.display());
    }
    Ok(())
}

/// The root of the git checkout the current directory is in, if any.
pub(crate) fn repo_root() -> Option<std::path::PathBuf> {
    Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
}

/// Where a benchmark's report goes: the options every `flotilla bench …` shares.
#[derive(clap::Args, Debug)]
pub struct OutputArgs {
    /// Append the report to this file [default: BENCHMARKS.md at the root of the git checkout
    /// of the current directory, or in the current directory].
    #[arg(long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Print the report without appending it anywhere.
    #[arg(long, conflicts_with = "output")]
    no_append: bool,
}

impl OutputArgs {
    /// Where to append the report: nowhere with `--no-append`, else `--output`, else nowhere
    /// for a `--quick` run, else the checkout's BENCHMARKS.md.
    pub fn path(&self, quick: bool) -> Option<std::path::PathBuf> {
        if self.no_append {
            return None;
        }
        if let Some(p) = &self.output {
            return Some(p.clone());
        }
        if quick {
            return None;
        }
        Some(repo_root().unwrap_or_default().join("BENCHMARKS.md"))
    }
}

/// `debug` or `release`: how this binary was built, for the report.
pub(crate) fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Warn that a full run of a debug build measures little.
pub(crate) fn warn_if_debug(quick: bool) {
    if cfg!(debug_assertions) && !quick {
        eprintln!(
            "warning: this is a debug build, whose figures say little: \
             build with `cargo build --release` and run target/release/flotilla"
        );
    }
}

/// The 1-minute load average from /proc/loadavg (`?` if unreadable).
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The head of a member-cluster benchmark's section: when, on what machine, at which commit,
/// how it ran and on which members.
pub(crate) struct Head {
    /// `YYYY-MM-DD HH:MM UTC`.
    pub when: String,
    /// From [`machine`].
    pub machine: String,
    /// From [`commit`].
    pub commit: String,
    /// Scale, build and load.
    pub run: String,
    /// Which member is joined how.
    pub members: String,
}

impl Head {
    /// The section's title (`title` names the benchmark) and its list of facts.
    pub fn render(&self, title: &str) -> String {
        format!(
            "## {} — {title} — commit {}\n\n- Machine: {}\n- Run: {}\n- Members: {}\n\n",
            self.when, self.commit, self.machine, self.run, self.members
        )
    }
}

/// A phase's part of a section: `text` of what it measured, or why it failed.
pub(crate) fn phase<T>(r: &Result<T, String>, text: impl FnOnce(&T) -> String) -> String {
    match r {
        Ok(v) => text(v),
        Err(e) => format!("The phase failed: {}\n", one_line(e)),
    }
}

/// Keep error text on one line.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The cells `count | p50 | p95 | p99 | max` of a latency table row (dashes without samples).
pub(crate) fn summary_cells(s: Option<Summary>) -> String {
    match s {
        Some(s) => format!(
            "{} | {} | {} | {} | {}",
            thousands(s.count as u64),
            ms(s.p50),
            ms(s.p95),
            ms(s.p99),
            ms(s.max)
        ),
        None => "0 | – | – | – | –".into(),
    }
}

#[cfg(test)]
mod tests;
