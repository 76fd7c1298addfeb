use std::time::Duration;

use super::super::latency::Slow;
use super::*;
use crate::stats::Summary;

fn summary(p99: u64) -> Option<Summary> {
    Some(Summary {
        count: 3,
        p50: Duration::from_millis(100),
        p95: Duration::from_millis(p99 - 50),
        p99: Duration::from_millis(p99),
        max: Duration::from_millis(p99 + 1),
    })
}

fn rss(mib: u64) -> Rss {
    Rss {
        now: mib << 20,
        peak: (mib + 1) << 20,
    }
}

fn section() -> Section {
    let split = Split {
        applied: summary(300),
        in_member: summary(200),
    };
    Section {
        head: Head {
            when: "2026-11-23 22:00 UTC".into(),
            machine: "2 CPUs (nproc), X, 1.0 GiB memory".into(),
            commit: "abc1234".into(),
            run: "quick scale".into(),
            members: "member-1, member-2 pull; member-3 push".into(),
        },
        latency: Ok(Latency {
            works: 3,
            rate: 50,
            sent_rate: 49.96,
            all: split.clone(),
            pull: split,
            push: Split::default(),
            create_errors: (0, None),
            not_applied: (1, vec!["ns/w (Applied=False\nApplyFailed: x)".into()]),
            per_member: vec![1, 1, 1],
            slow: Some(Slow {
                count: 2,
                from: Duration::from_millis(5_210),
                to: Duration::from_millis(6_580),
            }),
        }),
        idle: Some(rss(20)),
        memory: Ok(Memory {
            member: "member-1".into(),
            before_manifests: 1,
            before: rss(30),
            manifests: 2_001,
            works: 20,
            after: rss(50),
            took: Duration::from_millis(12_340),
            not_applied: (0, vec![]),
            hub: rss(100),
        }),
        cleanup: Ok(Cleanup {
            works: 23,
            took: Some(Duration::from_secs(2)),
            remaining: 0,
            agent: Some(rss(40)),
            left: vec![("member-1".into(), 0), ("member-3".into(), 2)],
        }),
    }
}

#[test]
fn the_section_says_it_all() {
    let text = render(&section());
    assert!(
        text.starts_with(
            "## 2026-11-23 22:00 UTC — Work delivery (`flotilla bench work`) — commit abc1234\n"
        ),
        "{text}"
    );
    assert!(text.contains("sent at 50.0/s"), "{text}");
    assert!(
        text.contains(
            "| Applied=True on the hub, all | 3 | 100.00 ms | 250.00 ms | 300.00 ms | 301.00 ms |\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("| ConfigMap in the member, push member | 0 | – | – | – | – |\n"),
        "{text}"
    );
    assert!(text.contains("Karmada publishes p99 ≈ 1.3 s"));
    assert!(
        text.contains("2 Works took longer than 250 ms; they were created between 5.2 s and 6.6 s into the phase."),
        "{text}"
    );
    assert!(
        text.contains("(e.g. ns/w (Applied=False ApplyFailed: x))"),
        "{text}"
    );
    assert!(
        text.contains("| all Applied | 2,001 | 50.0 MiB | 51.0 MiB |\n"),
        "{text}"
    );
    assert!(text.contains("| idle, right after joining | 0 | 20.0 MiB |"));
    assert!(text.contains("| after every Work was deleted and pruned | 0 | 40.0 MiB |"));
    // (50 − 30) MiB over 2,000 manifests.
    assert!(
        text.contains("Growth: 10.00 MiB per 1,000 manifests"),
        "{text}"
    );
    assert!(text.contains("Applied in 12.3 s"), "{text}");
    assert!(
        text.contains(
            "in 2.0 s. ConfigMaps of the run left in the members: member-1 0, member-3 2.\n"
        ),
        "{text}"
    );
}

#[test]
fn failed_phases_say_why() {
    let mut s = section();
    s.latency = Err("the hub\nexited".into());
    s.cleanup = Err("boom".into());
    let text = render(&s);
    assert!(
        text.contains("The phase failed: the hub exited\n"),
        "{text}"
    );
    assert!(text.contains("The phase failed: boom\n"));
    assert!(!text.contains("after every Work was deleted"));
}
