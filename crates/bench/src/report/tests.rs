use super::super::figures::{Goal, Measured as Value};
use super::*;

fn figure(key: &'static str, v: f64, goal: Option<Goal>) -> Figure {
    Figure::new(
        key,
        format!("{key}/s"),
        goal,
        Ok((Value::PerSecond(v), None)),
    )
}

fn section(peer: bool) -> Section {
    Section {
        also: Vec::new(),
        when: "2026-11-23 01:00 UTC".into(),
        machine: "2 CPUs (nproc), X, 1.0 GiB memory".into(),
        commit: "abc1234".into(),
        run: "full".into(),
        target: Measured {
            label: "hub".into(),
            about: "started by the benchmark".into(),
            figures: vec![
                figure("creates", 9000.0, Some(Goal::AtLeastPerSecond(8000.0))),
                Figure::new(
                    "broken",
                    "broken".into(),
                    None,
                    Err(anyhow::anyhow!("a\nb|c")),
                ),
            ],
        },
        peer: peer.then(|| Measured {
            label: "kube".into(),
            about: "https://k".into(),
            figures: vec![figure("creates", 4500.0, None)],
        }),
    }
}

#[test]
fn a_table_with_targets() {
    let text = render(&section(false));
    assert!(text.starts_with("## 2026-11-23 01:00 UTC — `flotilla bench api` — commit abc1234\n"));
    assert!(text.contains("- Machine: 2 CPUs (nproc), X, 1.0 GiB memory\n"));
    assert!(
        text.contains("| creates/s | 9,000/s | ≥ 8,000/s | yes |\n"),
        "{text}"
    );
    assert!(
        text.contains("| broken | failed: a b\\|c |  |  |\n"),
        "{text}"
    );
}

#[test]
fn a_peer_adds_its_figures_and_the_ratio() {
    let text = render(&section(true));
    assert!(
        text.contains("| figure | hub | target | met | kube | hub / kube |"),
        "{text}"
    );
    assert!(
        text.contains("| creates/s | 9,000/s | ≥ 8,000/s | yes | 4,500/s | 2.00× |"),
        "{text}"
    );
    assert!(text.contains("- Peer: kube — https://k\n"));
}

#[test]
fn another_run_of_the_target_gets_a_column_before_the_peer() {
    let mut s = section(true);
    s.also.push(Measured {
        label: "hub, relaxed".into(),
        about: "--durability relaxed".into(),
        figures: vec![figure("creates", 12000.0, None)],
    });
    let text = render(&s);
    assert!(
        text.contains("| figure | hub | target | met | hub, relaxed | kube | hub / kube |\n|---|---|---|---|---|---|---|\n"),
        "{text}"
    );
    assert!(
        text.contains("| creates/s | 9,000/s | ≥ 8,000/s | yes | 12,000/s | 4,500/s | 2.00× |"),
        "{text}"
    );
    assert!(text.contains("- Also: hub, relaxed — --durability relaxed\n"));
}

#[test]
fn machine_facts_are_parsed() {
    assert_eq!(
        cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n").as_deref(),
        Some("AMD EPYC 7B13 64-Core Processor")
    );
    assert_eq!(
        mem_total("MemTotal:       24576000 kB\n").as_deref(),
        Some("23.4 GiB")
    );
    assert!(machine().contains("CPUs (nproc)"));
}

#[test]
fn appending_starts_a_new_file_with_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("BENCHMARKS.md");
    append(&path, "## one\n").unwrap();
    append(&path, "## two\n").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# Benchmarks\n"));
    assert_eq!(text.matches("# Benchmarks").count(), 1);
    assert!(text.ends_with("\n## one\n\n## two\n"), "{text:?}");
}
