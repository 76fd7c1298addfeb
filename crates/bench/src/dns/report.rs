//! The DNS benchmark's section of BENCHMARKS.md: how it ran, then one row per figure with
//! flotilla's value, knotd's, the ratio and the target.

use std::time::Duration;

use super::super::figures::thousands;
use super::super::procs::Rss;
use super::super::report::{one_line, yes};
use super::perf::Run;
use super::records::{TTL, ZONE};
use super::{Measured, Plan, Turn};

/// The memory target at 10,000 services, in bytes.
pub const MEMORY_TARGET: u64 = 50_000_000;

/// The target for a verdict change to show in answers.
pub const VERDICT_TARGET: Duration = Duration::from_millis(100);

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

/// The section as Markdown.
pub fn render(s: &Section) -> String {
    let p = &s.plan;
    let m = &s.measured;
    let (f, k) = (&m.flotilla, &m.knot);
    let names = p.services * (1 + 2 * p.endpoints);
    let mut out = format!(
        "## {} — DNS (`flotilla bench dns`) — commit {}\n\n- Machine: {}\n- Run: {}\n",
        s.when, s.commit, s.machine, s.run
    );
    out += &format!(
        "- Records: {} services × {} endpoints (clusters m1…m{} in up to 3 regions), IPv4, TTL \
         {TTL} s, zone {ZONE}: each service's global, regional and cluster names ({} names, {} A \
         records); knotd from a zone file, flotilla from the same fleet as a `--fleet-file`, all \
         endpoints healthy (round robin answers them all); {} names checked to get the same \
         records from both before measuring.\n",
        thousands(p.services as u64),
        p.endpoints,
        p.endpoints,
        thousands(names as u64),
        thousands((p.services * 3 * p.endpoints) as u64),
        m.checked
    );
    out += &format!(
        "- Servers: {} (`knotd -c knot.conf`, background-workers = {} (the cores), UDP and TCP \
         workers its default); `flotilla dns --fleet-file` of this build. Each alone, one after \
         the other, on 127.0.0.1.\n",
        m.knot_version,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    out += &format!(
        "- Client: {} over UDP, no EDNS, `-c {} -T {} -q {}`, the {} global names shuffled: a \
         {} s warm-up, a {} s saturating run, then {} s at `-Q {}` with `-v` for each answer's \
         latency (p50/p99 of service time, not of queueing at saturation).\n\n",
        super::perf::dnsperf_version(),
        p.load.clients,
        p.load.threads,
        p.load.outstanding,
        thousands(p.services as u64),
        secs(p.warmup),
        secs(p.duration),
        secs(p.duration),
        thousands(p.latency_rate)
    );
    out += "| figure | flotilla dns | knotd | flotilla / knotd | target | met |\n\
            |---|---|---|---|---|---|\n";
    let (fs, ks) = (&f.saturated, &k.saturated);
    let met = fs.qps >= ks.qps && fs.lost == 0;
    out += &format!(
        "| answers/s, saturating | {} | {} | {:.2}× | ≥ knotd's, 0 lost | {} |\n",
        thousands(fs.qps.round() as u64),
        thousands(ks.qps.round() as u64),
        fs.qps / ks.qps.max(1e-9),
        yes(met)
    );
    out += &format!(
        "| queries lost, saturating | {} | {} | | 0 | {} |\n",
        lost(fs),
        lost(ks),
        yes(fs.lost == 0)
    );
    out += &format!(
        "| answers other than NOERROR, saturating | {} | {} | | 0 | {} |\n",
        thousands(fs.errors()),
        thousands(ks.errors()),
        yes(fs.errors() == 0)
    );
    out += &format!(
        "| mean ± stddev latency, saturating | {} ± {} | {} ± {} | {:.2}× | | |\n",
        ms(fs.mean),
        ms(fs.stddev),
        ms(ks.mean),
        ms(ks.stddev),
        ratio(fs.mean, ks.mean)
    );
    out += &format!(
        "| p50 / p99 / max latency at {}/s (`-v`) | {} | {} | {} | | |\n",
        thousands(p.latency_rate),
        percentiles(f),
        percentiles(k),
        match (f.paced.latency, k.paced.latency) {
            (Some(a), Some(b)) =>
                format!("{:.2}× / {:.2}×", ratio(a.p50, b.p50), ratio(a.p99, b.p99)),
            _ => String::new(),
        }
    );
    out += &format!(
        "| answers/s and lost at {}/s | {} | {} | | | |\n",
        thousands(p.latency_rate),
        paced(&f.paced),
        paced(&k.paced)
    );
    out += &format!(
        "| memory after the runs, VmRSS / VmHWM, {} services | {} | {} | {} | | |\n",
        thousands(p.services as u64),
        memory(f.memory),
        memory(k.memory),
        match (f.memory, k.memory) {
            (Some(a), Some(b)) => format!("{:.2}×", a.now as f64 / b.now.max(1) as f64),
            _ => String::new(),
        }
    );
    let large = thousands(p.memory_services as u64);
    match &m.memory_large {
        Ok(r) => {
            out += &format!(
            "| memory after load, VmRSS / VmHWM, {large} services | {} | – | | ≤ 50 MB | {} |\n",
            memory(Some(*r)),
            yes(r.peak.max(r.now) <= MEMORY_TARGET)
        )
        }
        Err(e) => {
            out += &format!(
                "| memory at {large} services | failed: {} | – | | ≤ 50 MB | **no** |\n",
                cell(e)
            )
        }
    }
    match &m.verdict {
        Ok(t) => {
            out += &format!(
                "| verdict change shown, {large} services: endpoint Unhealthy → gone from the \
                 answer, p50 / p99 / max of {} | {} / {} / {} | – | | ≤ 100 ms | {} |\n",
                t.removed.count,
                ms(t.removed.p50),
                ms(t.removed.p99),
                ms(t.removed.max),
                yes(t.removed.max <= VERDICT_TARGET)
            );
            out += &format!(
                "| verdict change shown, {large} services: Healthy again → back in the answer, \
                 p50 / p99 / max of {} | {} / {} / {} | – | | ≤ 100 ms | {} |\n",
                t.returned.count,
                ms(t.returned.p50),
                ms(t.returned.p99),
                ms(t.returned.max),
                yes(t.returned.max <= VERDICT_TARGET)
            );
        }
        Err(e) => {
            out += &format!(
                "| verdict change shown | failed: {} | – | | ≤ 100 ms | **no** |\n",
                cell(e)
            )
        }
    }
    out += "\nflotilla / knotd: above 1 means flotilla answers more per second; for latency and \
            memory, below 1 means flotilla is faster or smaller. ";
    if let Ok(t) = &m.verdict {
        out += &format!(
            "A verdict change is timed end to end through the static fleet: the {:.1} MB fleet file \
             is replaced (written beside it, renamed over it) with one endpoint's verdict \
             changed, and the service's name is asked about every millisecond from the rename \
             until the answer shows it; `flotilla dns --fleet-file` looks at the file's \
             metadata every 5 ms, then parses it and redoes only the services that changed \
             (a new snapshot sharing everything else with the old one) and swaps it in.\n",
            t.file_bytes as f64 / 1e6
        );
    } else {
        out += "\n";
    }
    out
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}

fn lost(r: &Run) -> String {
    format!("{} of {}", thousands(r.lost), thousands(r.sent))
}

fn paced(r: &Run) -> String {
    format!(
        "{} answers/s, {} lost",
        thousands(r.qps.round() as u64),
        thousands(r.lost)
    )
}

fn percentiles(t: &Turn) -> String {
    match t.paced.latency {
        Some(l) => format!("{} / {} / {}", ms(l.p50), ms(l.p99), ms(l.max)),
        None => "no answers".into(),
    }
}

fn memory(r: Option<Rss>) -> String {
    match r {
        Some(r) => format!(
            "{:.1} MB / {:.1} MB",
            r.now as f64 / 1e6,
            r.peak as f64 / 1e6
        ),
        None => "unknown".into(),
    }
}

fn cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}
