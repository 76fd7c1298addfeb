//! `flotilla bench api --quick` runs end to end against a hub it starts, and writes a report
//! with every figure.

use std::process::Command;

#[test]
fn quick_benchmark_reports_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("BENCH.md");
    let run = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["bench", "api", "--quick", "--output"])
        .arg(&out)
        .current_dir(dir.path())
        .output()
        .expect("run flotilla bench");
    assert!(
        run.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = std::fs::read_to_string(&out).expect("report written");
    for row in [
        "creates/s, 16 clients",
        "creates/s, 64 clients",
        "updates/s",
        "GET p50 / p99",
        "LIST (100 objects)",
        "watch delivery",
        "resident memory",
    ] {
        assert!(report.contains(row), "report lacks {row}:\n{report}");
    }
    assert!(
        report.starts_with("# Benchmarks"),
        "a new file gets a header"
    );
    assert!(report.contains("Machine: "), "the machine is named");
}
