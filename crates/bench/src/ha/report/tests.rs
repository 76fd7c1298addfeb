use super::super::failover::Shape;
use super::*;
use crate::stats::summarize;

fn run(done: usize, p50_ms: u64, cpu: f64) -> Run {
    let t = Throughput {
        done,
        errors: 0,
        first_error: None,
        elapsed: Duration::from_secs(10),
        latency: summarize(vec![Duration::from_millis(p50_ms)]),
    };
    let u = Usage {
        replicas: vec![cpu],
        postgres: cpu / 2.0,
        nats: 0.0,
        load: 0.0,
    };
    (t, u, Commits::default())
}

#[test]
fn the_section_holds_the_ratio_the_failures_and_why_the_rate_is_what_it_is() {
    let plan = Plan {
        clients: 16,
        rounds: 1,
        throughput: Duration::from_secs(15),
        warmup: Duration::from_secs(3),
        rate: 200,
        delivery: Duration::from_secs(10),
        watchers: 20,
        failover: Shape {
            watchers: 20,
            rate: 200,
            duration: Duration::from_secs(15),
            kill_after: Duration::from_secs(5),
        },
    };
    let section = Section {
        when: "2026-11-28 12:00 UTC".into(),
        machine: "2 CPUs".into(),
        commit: "abc1234".into(),
        run: "full".into(),
        plan,
        measured: Measured {
            rounds: vec![Round {
                one: Ok(run(40_000, 4, 6.0)),
                three: Ok(run(20_000, 10, 6.0)),
            }],
            delivery: Err("no namespace".into()),
            failover: Err("replica-2 did not start".into()),
            takeover: Err("not measured: no `flotilla controllers`".into()),
        },
    };
    let text = render(&section);
    assert!(
        text.contains("| 3 replicas / 1 replica | 0.50× | ≥ 0.8× | **no** |"),
        "{text}"
    );
    assert!(
        text.contains("4,000/s (40,000 creates; each create p50 4.00 ms"),
        "{text}"
    );
    assert!(text.contains("failed: no namespace"), "{text}");
    assert!(
        text.contains("| not measured: no `flotilla controllers` |"),
        "{text}"
    );
    // Twice the CPU per create on 3 replicas, and neither run filled the cores.
    assert!(
        text.contains("replicas 2.00× and PostgreSQL 2.00×"),
        "{text}"
    );
    assert!(
        text.contains("p50 4.00 ms on 1 replica, 10.00 ms on 3"),
        "{text}"
    );
}

#[test]
fn the_ratio_is_the_median_rounds_and_a_failed_round_is_left_out() {
    let round = |one: usize, three: usize| Round {
        one: Ok(run(one, 4, 6.0)),
        three: Ok(run(three, 10, 6.0)),
    };
    let mut m = Measured {
        rounds: vec![
            round(40_000, 36_000),
            round(40_000, 20_000),
            round(40_000, 28_000),
        ],
        delivery: Err("x".into()),
        failover: Err("x".into()),
        takeover: Err("x".into()),
    };
    let (_, ratio) = m.median().expect("three rounds ran");
    assert!((ratio - 0.7).abs() < 1e-9, "{ratio}");
    m.rounds[2].three = Err("replica-3 did not start".into());
    // Of 0.9 and 0.5, the lower.
    let (_, ratio) = m.median().expect("two rounds ran");
    assert!((ratio - 0.5).abs() < 1e-9, "{ratio}");
    m.rounds.truncate(0);
    assert!(m.median().is_none());
}
