//! `flotilla bench propagation --quick` runs end to end on three real member clusters (from
//! `flotilla_testkit::Members`: a fresh set, or the one in `$FLOTILLA_MEMBERS_DIR`) and writes
//! a report with every figure: change latency in all members and in each, create latency, the
//! hub's memory and throughput, and cleanup with nothing left behind.

use std::process::Command;

use flotilla_testkit::Members;

#[test]
fn quick_benchmark_reports_every_figure() {
    let members = Members::up(3).expect("member clusters (scripts/members build)");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("BENCH.md");
    let run = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["bench", "propagation", "--quick", "--output"])
        .arg(&out)
        .arg("--members-dir")
        .arg(members.dir())
        .current_dir(dir.path())
        .output()
        .expect("run flotilla bench propagation");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "bench failed: {stderr}");
    let report = std::fs::read_to_string(&out).expect("report written");
    for row in [
        "## ",
        "— Propagation (`flotilla bench propagation`) — commit ",
        "| change in all 3 members | 100 |",
        "| change in member-1 (pull) | 100 |",
        "| change in member-2 (pull) | 100 |",
        "| change in member-3 (push) | 100 |",
        "| create: Deployment in all 3 members | 20 |",
        "| create: running (1/1 ready) in all 3 members | 20 |",
        "Target (issue 6): p99 ≤ 1 s",
        "Karmada's published figure is p99 1.3 s",
        "Changes not seen in all 3 members within 30 s: 0.",
        "| hub VmRSS, idle after the members joined |",
        "| hub VmRSS before the creates |",
        "| hub VmRSS, all 300 bindings FullyApplied |",
        "| hub VmRSS after cleanup |",
        "| propagated: first create → last binding FullyApplied |",
        "| bindings not FullyApplied | 0 |",
        "member-3: 300 Deployments, Ready |",
        "Works of the run left on the hub: 0. Deployments of the run left in the members: \
         member-1 0, member-2 0, member-3 0.",
    ] {
        assert!(report.contains(row), "report lacks {row:?}:\n{report}");
    }
    assert!(
        report.starts_with("# Benchmarks"),
        "a new file gets a header"
    );
}
