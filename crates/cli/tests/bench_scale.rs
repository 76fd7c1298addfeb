//! `flotilla bench scale --quick` runs end to end (a hub and `flotilla sim` with 20 clusters, all
//! joined in Push mode; 100 Deployments Divided over them, changed at a light rate and at the
//! main one, one cluster failed over, all deleted) and writes a report with every figure next to issue 15's targets.

use std::process::Command;

#[test]
fn quick_scale_benchmark_reports_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("BENCH.md");
    let run = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["bench", "scale", "--quick", "--output"])
        .arg(&out)
        .current_dir(dir.path())
        .output()
        .expect("run flotilla bench scale");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "bench failed: {stderr}");
    let report = std::fs::read_to_string(&out).expect("report written");
    for row in [
        "— scale: 20 simulated member clusters (flotilla bench scale) — commit ",
        "| all clusters Ready on the hub, from the simulator's start | ",
        "| clusters still Ready after the idle window | 20 of 20 | all | yes |",
        "| hub CPU, idle | ",
        "| ≤ 10% of one core | ",
        "| hub resident memory, idle (peak) | ",
        "| hub open files | ",
        "| simulator resident memory (peak) | ",
        "| simulator CPU, idle | ",
        "| Deployments Divided | 100 × 10 replicas, 7 groups, ",
        "| bindings not FullyApplied | 0 | 0 | yes |",
        "| Works applied per second (first create → last FullyApplied) | ",
        "| hub resident memory, loaded (peak) | ",
        "| template change → applied in all its clusters, p50 / p99 / max | ",
        "| changes failed or not seen everywhere within 30 s | 0 + 0 | 0 | yes |",
        "| … the same at a light load (other templates, changed before), p50 / p99 / max | ",
        "changes at 10/s to 10 templates",
        "| … of those, changes failed or not seen everywhere within 30 s | 0 + 0 | 0 | yes |",
        "| failover: one cluster stopped → its bindings applied elsewhere | ",
        "| ≤ 45 s | yes |",
        "| cleanup: namespace deleted → its Works gone | ",
    ] {
        assert!(report.contains(row), "report lacks {row:?}:\n{report}");
    }
    // The hub and the simulator it started are stopped.
    let pids: Vec<u32> = stderr
        .lines()
        .filter(|l| l.contains("hub ready, pid") || l.contains("simulator started, pid"))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    assert_eq!(pids.len(), 2, "progress names both processes: {stderr}");
    for pid in pids {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "process {pid} still runs after the benchmark"
        );
    }
}
