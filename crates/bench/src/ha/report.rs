//! The HA benchmark's section of BENCHMARKS.md: how it ran, one row per figure with the issue's
//! target, then where the CPU went in the throughput runs and what would scale on more cores.

use std::time::Duration;

use super::super::figures::thousands;
use super::super::report::{one_line, yes};
use super::super::stats::ms;
use super::commits::Commits;
use super::cpu::Usage;
use super::delivery::Delivery;
use super::failover::Failover;
use super::load::Throughput;
use super::takeover::{Takeover, SHARDS};
use super::Plan;

/// The targets.
pub const RATIO_TARGET: f64 = 0.8;
/// Cross-replica watch delivery p99.
pub const DELIVERY_P99: Duration = Duration::from_millis(100);
/// Shards owned again after a controller process dies.
pub const TAKEOVER: Duration = Duration::from_secs(15);

/// A throughput run and the CPU it used.
pub type Run = (Throughput, Usage, Commits);

/// Everything [`super::measure`] found; a phase that failed holds why.
pub struct Measured {
    /// The throughput pairs, in the order they ran.
    pub rounds: Vec<Round>,
    /// Cross-replica watch delivery.
    pub delivery: Result<Delivery, String>,
    /// Watchers of a killed replica, and writes during it.
    pub failover: Result<Failover, String>,
    /// Controller takeover; `Err("not measured: …")` without `flotilla controllers`.
    pub takeover: Result<Takeover, String>,
}

/// One round of the throughput pair.
pub struct Round {
    /// 16 clients on 1 replica.
    pub one: Result<Run, String>,
    /// 16 clients spread over 3 replicas, right after.
    pub three: Result<Run, String>,
}

impl Round {
    /// 3 replicas' creates/s over 1 replica's, when both ran.
    pub fn ratio(&self) -> Option<f64> {
        match (&self.one, &self.three) {
            (Ok((one, _, _)), Ok((three, _, _))) => Some(three.rate() / one.rate().max(1e-9)),
            _ => None,
        }
    }
}

impl Measured {
    /// The round whose ratio is the median of those that ran (the lower of the middle two
    /// for an even count), and its ratio.
    pub fn median(&self) -> Option<(&Round, f64)> {
        let mut ran: Vec<(&Round, f64)> = self
            .rounds
            .iter()
            .filter_map(|r| r.ratio().map(|x| (r, x)))
            .collect();
        ran.sort_by(|a, b| a.1.total_cmp(&b.1));
        let middle = ran.len().checked_sub(1)? / 2;
        Some(ran[middle])
    }
}

/// Everything the section says.
pub struct Section {
    /// `YYYY-MM-DD HH:MM UTC`.
    pub when: String,
    /// From `report::machine`.
    pub machine: String,
    /// From `report::commit`.
    pub commit: String,
    /// Scale, build and load.
    pub run: String,
    /// The settings.
    pub plan: Plan,
    /// The figures.
    pub measured: Measured,
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn failed(e: &str) -> String {
    if e.starts_with("not measured") {
        one_line(e)
    } else {
        format!("failed: {}", one_line(e))
    }
}

/// The section as Markdown.
pub fn render(s: &Section) -> String {
    let (p, m) = (&s.plan, &s.measured);
    let mut out = format!(
        "## {} — HA hub (`flotilla bench ha`) — commit {}\n\n- Machine: {}\n- Run: {}\n",
        s.when, s.commit, s.machine, s.run
    );
    out += &format!(
        "- Set: `scripts/ha up 3` — one PostgreSQL (fsync on), one nats-server (JetStream), 3 \
         `flotilla serve --store postgres://… --nats …` replicas with `--no-controllers` \
         (HA_NO_CONTROLLERS=1; the API plane is measured, controllers run as separate \
         processes in the last row), all on 127.0.0.1 with the load generator; each \
         throughput run on a set of its own, started empty (`up 1`, `up 3`).\n- Load: \
         {} closed-loop clients creating 1 KiB ConfigMaps for {} (after a {} warm-up), on one \
         replica, then spread over three, {} time(s) in turn; then {}/s open-loop creates for \
         the watch and failover phases; {} watchers in the failover.\n\n",
        p.clients,
        secs(p.throughput),
        secs(p.warmup),
        p.rounds,
        p.rate,
        p.watchers
    );
    out += "| figure | value | target | met |\n|---|---|---|---|\n";
    out += &throughput_rows(p, m);
    out += &delivery_rows(&m.delivery);
    out += &failover_rows(p, &m.failover);
    out += &match &m.takeover {
        Ok(t) => format!(
            "| controller takeover: SIGKILL of one of 2 `flotilla controllers` → the other holds \
             all {SHARDS} shard Leases | {} (before: a {}, b {}; both held all {SHARDS} {} after \
             starting) | ≤ {} | {} |\n",
            secs(t.took),
            t.split.0,
            t.split.1,
            secs(t.settled),
            secs(TAKEOVER),
            yes(t.took <= TAKEOVER)
        ),
        Err(e) => format!(
            "| controller takeover (SIGKILL of one of 2 `flotilla controllers`) | {} | ≤ {} | |\n",
            failed(e),
            secs(TAKEOVER)
        ),
    };
    out += "\n";
    out += &cpu_text(p, m);
    out
}

fn throughput_cell(r: &Result<Run, String>) -> String {
    match r {
        Ok((t, _, _)) => {
            let mut text = format!(
                "{}/s ({} creates",
                thousands(t.rate().round() as u64),
                thousands(t.done as u64)
            );
            if let Some(l) = t.latency {
                text += &format!(
                    "; each create p50 {} / p99 {} / max {}",
                    ms(l.p50),
                    ms(l.p99),
                    ms(l.max)
                );
            }
            if t.errors > 0 {
                text += &format!(
                    ", {} failed: {}",
                    t.errors,
                    one_line(t.first_error.as_deref().unwrap_or(""))
                );
            }
            text + ")"
        }
        Err(e) => failed(e),
    }
}

fn throughput_rows(p: &Plan, m: &Measured) -> String {
    let per = |n: usize| -> String {
        let each: Vec<String> = (0..n)
            .map(|r| (0..p.clients).filter(|c| c % n == r).count().to_string())
            .collect();
        each.join("/")
    };
    let mut out = String::new();
    for (i, r) in m.rounds.iter().enumerate() {
        let round = if m.rounds.len() > 1 {
            format!("round {}: ", i + 1)
        } else {
            String::new()
        };
        out += &format!(
            "| {round}creates/s, {} clients, 1 replica | {} | | |\n",
            p.clients,
            throughput_cell(&r.one)
        );
        out += &format!(
            "| {round}creates/s, {} clients over 3 replicas ({}) | {} | | |\n",
            p.clients,
            per(3),
            throughput_cell(&r.three)
        );
    }
    let ratios: Vec<String> = m
        .rounds
        .iter()
        .map(|r| r.ratio().map_or("–".into(), |x| format!("{x:.2}×")))
        .collect();
    out += &match m.median() {
        Some((_, ratio)) if m.rounds.len() > 1 => format!(
            "| 3 replicas / 1 replica, median of {} rounds | {ratio:.2}× (rounds: {}) | ≥ \
             {RATIO_TARGET}× | {} |\n",
            m.rounds.len(),
            ratios.join(", "),
            yes(ratio >= RATIO_TARGET)
        ),
        Some((_, ratio)) => format!(
            "| 3 replicas / 1 replica | {ratio:.2}× | ≥ {RATIO_TARGET}× | {} |\n",
            yes(ratio >= RATIO_TARGET)
        ),
        None => format!("| 3 replicas / 1 replica | – | ≥ {RATIO_TARGET}× | **no** |\n"),
    };
    out
}

fn delivery_rows(d: &Result<Delivery, String>) -> String {
    let d = match d {
        Ok(d) => d,
        Err(e) => {
            return format!(
                "| cross-replica watch delivery p50 / p99 / max | {} | p99 ≤ {} | **no** |\n",
                failed(e),
                ms(DELIVERY_P99)
            )
        }
    };
    let mut out = match d.latency {
        Some(l) => format!(
            "| cross-replica watch delivery: create answered by replica-2/3 → ADDED on \
             replica-1's watch, p50 / p99 / max | {} / {} / {} ({} creates at {}/s; {} events \
             came before their answer, counted as 0) | p99 ≤ {} | {} |\n",
            ms(l.p50),
            ms(l.p99),
            ms(l.max),
            thousands(l.count as u64),
            d.rate,
            d.before_answer,
            ms(DELIVERY_P99),
            yes(l.p99 <= DELIVERY_P99)
        ),
        None => format!(
            "| cross-replica watch delivery p50 / p99 / max | no event arrived ({}) | p99 ≤ {} \
             | **no** |\n",
            one_line(d.watch_error.as_deref().unwrap_or("no error")),
            ms(DELIVERY_P99)
        ),
    };
    let c = &d.check;
    let mut text = format!(
        "{} of {} acknowledged creates ({} offered); {} missed, {} duplicated, {} out of order, {} with \
         another resourceVersion",
        thousands((d.created - c.missed) as u64),
        thousands(d.created as u64),
        thousands(d.offered as u64),
        c.missed,
        c.duplicated,
        c.out_of_order,
        c.rv_mismatch
    );
    if d.create_errors.0 > 0 {
        text += &format!(
            "; {} creates failed: {}",
            d.create_errors.0,
            one_line(d.create_errors.1.as_deref().unwrap_or(""))
        );
    }
    out += &format!(
        "| … every created object delivered on replica-1 exactly once, in resourceVersion \
         order | {text} | all, once, in order | {} |\n",
        yes(c.clean() && d.created > 0)
    );
    out
}

fn failover_rows(p: &Plan, f: &Result<Failover, String>) -> String {
    let f = match f {
        Ok(f) => f,
        Err(e) => {
            return format!(
                "| SIGKILL of replica-2 → its watchers resumed on replica-3 | {} | | **no** |\n\
                 | acknowledged creates lost | not measured | 0 | **no** |\n",
                failed(e)
            )
        }
    };
    let resumed = match (f.all_resumed, f.resumed, f.noticed) {
        (Some(all), Some(each), Some(noticed)) => format!(
            "{} after the first watcher's stream broke (the SIGKILL landing); {} from the start \
             of `scripts/ha stop`, whose bash took {} to send it; each watcher: p50 {}",
            secs(all.saturating_sub(noticed)),
            secs(all),
            secs(noticed),
            secs(each.p50.saturating_sub(noticed)),
        ),
        _ => format!(
            "{} of {} watchers did not resume within 30 s ({})",
            f.not_resumed,
            f.watchers,
            one_line(f.watch_error.as_deref().unwrap_or("no error"))
        ),
    };
    let mut out = format!(
        "| SIGKILL of replica-2 → all {} of its watchers resumed on replica-3 from their last \
         resourceVersion (first event there) | {resumed} | | |\n",
        f.watchers
    );
    let clean = f.gone == 0 && f.missed == 0 && f.duplicated == 0 && f.disordered == 0;
    out += &format!(
        "| … 410 Gone / acknowledged creates missed / delivered twice / out of order, over all \
         watchers | {} / {} / {} / {} ({} of {} watchers saw every acknowledged create once, in \
         order) | 0 | {} |\n",
        f.gone,
        f.missed,
        f.duplicated,
        f.disordered,
        f.clean_watchers,
        f.watchers,
        yes(clean && f.not_resumed == 0)
    );
    let reads: Vec<String> = f
        .lost
        .iter()
        .map(|(on, l)| match l {
            Ok(n) => format!("{on}: {n}"),
            Err(e) => format!("{on}: not read ({})", one_line(e)),
        })
        .collect();
    let lost = f.lost_max();
    out += &format!(
        "| acknowledged creates lost (written at {}/s through all 3 replicas across the kill) | \
         {} of {} ({}); {} of {} creates failed, most sent to the dead replica{} | 0 | {} |\n",
        p.rate,
        lost.map_or("–".into(), |n| thousands(n as u64)),
        thousands(f.acked as u64),
        reads.join(", "),
        thousands(f.failed.0 as u64),
        thousands(f.offered as u64),
        f.failed
            .1
            .as_deref()
            .map(|e| format!(" (first: {})", one_line(e)))
            .unwrap_or_default(),
        yes(lost == Some(0) && f.lost.iter().all(|(_, l)| l.is_ok()))
    );
    out
}

/// The group commits of the two throughput runs (nothing when the replicas did not say).
fn group_text(one: &Commits, three: &Commits) -> String {
    let per = |c: &Commits| {
        let (txns, writes) = c.total();
        (txns > 0).then(|| writes as f64 / txns as f64)
    };
    let (Some(p1), Some(p3)) = (per(one), per(three)) else {
        return String::new();
    };
    let writes = three.total().1.max(1) as f64;
    let shares: Vec<String> = three
        .0
        .iter()
        .map(|(_, w)| format!("{:.0}%", *w as f64 / writes * 100.0))
        .collect();
    format!(
        "- Group commit: {p1:.1} writes per PostgreSQL transaction on 1 replica, {p3:.1} on 3 \
         (the writes each replica's writer committed: {}).\n",
        shares.join(" / ")
    )
}

/// Where the CPU went in the median round's two throughput runs, and what that says about
/// more cores.
fn cpu_text(p: &Plan, m: &Measured) -> String {
    let Some((round, _)) = m.median() else {
        return String::new();
    };
    let (Ok((one, u1, c1)), Ok((three, u3, c3))) = (&round.one, &round.three) else {
        return String::new();
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let line = |name: &str, t: &Throughput, u: &Usage| {
        let wall = t.elapsed.as_secs_f64().max(1e-9);
        let per_k = |cpu: f64| cpu / (t.done.max(1) as f64) * 1_000.0;
        let replicas: Vec<String> = u
            .replicas
            .iter()
            .map(|c| format!("{:.2}", c / wall))
            .collect();
        format!(
            "- {name}: replicas {} cores ({}), PostgreSQL {:.2}, nats-server {:.2}, the clients \
             {:.2} — {:.2} of {cores} cores busy; CPU per 1,000 creates: replicas {:.2} s, \
             PostgreSQL {:.2} s, clients {:.2} s.\n",
            format_args!("{:.2}", u.replicas_total() / wall),
            replicas.join(" + "),
            u.postgres / wall,
            u.nats / wall,
            u.load / wall,
            u.total() / wall,
            per_k(u.replicas_total()),
            per_k(u.postgres),
            per_k(u.load),
        )
    };
    let mut out = String::from(
        "Where the CPU went during the throughput runs of the median round (from /proc: each \
         replica, PostgreSQL's postmaster and backends, nats-server, this process), in cores used on average:\n\n",
    );
    out += &line("1 replica", one, u1);
    out += &line("3 replicas", three, u3);
    out += &group_text(c1, c3);
    let per_create = |cpu: f64, t: &Throughput| cpu / t.done.max(1) as f64;
    let replica_cost = per_create(u3.replicas_total(), three);
    let pg_cost = per_create(u3.postgres, three);
    let extra = replica_cost / per_create(u1.replicas_total(), one).max(1e-12);
    let pg_extra = pg_cost / per_create(u1.postgres, one).max(1e-12);
    out += &format!(
        "\nWhat would scale on more cores: each create costs the replicas {extra:.2}× and \
         PostgreSQL {pg_extra:.2}× the CPU it costs with one replica (every replica applies every \
         other replica's commits to its watch cache, and the writes made on the others travel \
         to the writer of record and back over NATS); on these \
         {cores} cores, shared by all parts, that extra work cannot be spread out. The replicas' \
         share scales out: given their own cores, each replica core would take about {} \
         creates/s ({:.0} µs of replica CPU per create). PostgreSQL's does not: it spent {:.0} \
         µs per create, so one PostgreSQL core caps the set near {} creates/s whatever the \
         number of replicas (an estimate from CPU alone; commit latency and lock waits come on \
         top).\n",
        thousands((1.0 / replica_cost.max(1e-12)).round() as u64),
        replica_cost * 1e6,
        pg_cost * 1e6,
        thousands((1.0 / pg_cost.max(1e-12)).round() as u64),
    );
    let busy = |t: &Throughput, u: &Usage| u.total() / t.elapsed.as_secs_f64().max(1e-9);
    let (b1, b3) = (busy(one, u1), busy(three, u3));
    if b1.max(b3) < 0.9 * cores {
        let p50 = |t: &Throughput| t.latency.map(|l| ms(l.p50)).unwrap_or_else(|| "–".into());
        out += &format!(
            "Neither run filled the cores ({b1:.2} and {b3:.2} of {cores} busy): with {} \
             clients each waiting for its answer, the rate is bound by each create's latency — \
             p50 {} on 1 replica, {} on 3 — as much as by CPU, so the time a create waits in \
             replica mode is the first thing to shorten.\n",
            p.clients,
            p50(one),
            p50(three)
        );
    }
    out
}

#[cfg(test)]
mod tests;
