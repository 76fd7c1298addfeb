use std::time::Duration;

use super::*;
use crate::fleet::Mode;

fn summary(p99: u64) -> Option<Summary> {
    let ms = Duration::from_millis;
    Some(Summary {
        count: 4,
        p50: ms(100),
        p95: ms(p99 - 10),
        p99: ms(p99),
        max: ms(p99 + 1),
    })
}

fn rss(mib: u64) -> Rss {
    Rss {
        now: mib << 20,
        peak: (mib + 1) << 20,
    }
}

fn section() -> Section {
    Section {
        head: Head {
            when: "2026-11-24 02:00 UTC".into(),
            machine: "2 CPUs (nproc), X, 1.0 GiB memory".into(),
            commit: "abc1234".into(),
            run: "quick scale".into(),
            members: "member-1 pull, member-2 pull, member-3 push".into(),
        },
        flotilla: Measured {
            idle: rss(70),
            latency: Ok(Latency {
                templates: 2,
                create_in_members: summary(500),
                create_running: summary(900),
                changes: 4,
                rate: 20,
                sent_rate: 19.98,
                all: summary(800),
                per_member: vec![("member-3".into(), Mode::Push, None)],
                not_seen: (1, vec!["member-2: ns/d@3 (never seen by the watch)".into()]),
                ..Latency::default()
            }),
            memory: Ok(Memory {
                deployments: 1_000,
                before: rss(100),
                after: rss(300),
                creates_took: Duration::from_secs(4),
                took: Duration::from_secs(20),
                not_applied: (0, vec![]),
                members: vec![
                    ("member-1".into(), 1_000, true),
                    ("member-2".into(), 3, false),
                ],
            }),
            cleanup: Ok(Cleanup {
                copies: 3_006,
                took: Some(Duration::from_millis(12_340)),
                hub: Some(rss(250)),
                left: vec![("member-1".into(), 0)],
                ..Cleanup::default()
            }),
        },
        peer: None,
    }
}

#[test]
fn the_section_says_it_all() {
    let text = render(&section());
    for want in [
        "## 2026-11-24 02:00 UTC — Propagation (`flotilla bench propagation`) — commit abc1234\n",
        "sent at 20.0/s",
        "| change in all 3 members | 4 | 100.00 ms | 790.00 ms | 800.00 ms | 801.00 ms |\n",
        "| change in member-3 (push) | 0 | – | – | – | – |\n",
        "| create: running (1/1 ready) in all 3 members | 4 | 100.00 ms |",
        "p99 ≤ 1 s for a change in all members — met.",
        "Karmada's published figure is p99 1.3 s",
        "within 30 s: 1 (e.g. member-2: ns/d@3 (never seen by the watch)).",
        "| hub VmRSS, idle after the members joined | 70.0 MiB (peak so far 71.0 MiB) |\n",
        "| hub VmRSS, all 1,000 bindings FullyApplied | 300.0 MiB (peak so far 301.0 MiB) |",
        "| hub VmRSS after cleanup | 250.0 MiB (peak so far 251.0 MiB) |",
        "| creates (16 concurrent) | 1,000 in 4.0 s (250/s) |\n",
        "| 20.0 s, 50 Deployments/s (150 member objects/s) |\n",
        "member-1: 1,000 Deployments, Ready; member-2: 3 Deployments, **not Ready** |\n",
        "the 3,006 copies in the members, in 12.3 s. Works of the run left on the hub: 0.",
    ] {
        assert!(text.contains(want), "lacks {want:?}:\n{text}");
    }
}

#[test]
fn failed_phases_and_missed_targets_say_so() {
    let mut s = section();
    if let Ok(l) = &mut s.flotilla.latency {
        l.all = summary(1_300);
    }
    s.flotilla.memory = Err("the hub\nexited".into());
    s.flotilla.cleanup = Err("boom".into());
    let text = render(&s);
    assert!(text.contains("— **not met**."), "{text}");
    assert!(
        text.contains("The phase failed: the hub exited\n"),
        "{text}"
    );
    assert!(text.contains("The phase failed: boom\n"), "{text}");
    assert!(!text.contains("hub VmRSS after cleanup"), "{text}");
}

#[test]
fn a_peer_is_set_beside_flotilla() {
    let mut s = section();
    let mut k = section().flotilla;
    if let Ok(l) = &mut k.latency {
        l.all = summary(1_300);
    }
    k.idle = rss(900);
    k.cleanup = Err("Karmada's etcd (pid 7) has exited".into());
    s.peer = Some(Ok(("Karmada: apiserver 1, etcd 2".into(), k)));
    let text = render(&s);
    for want in [
        "### Side by side with Karmada (same members, same run)",
        "(Karmada: apiserver 1, etcd 2; flotilla: the one `flotilla serve` process)",
        "| template change → in all 3 members | p50 100.00 ms / p99 800.00 ms | p50 100.00 ms / \
         p99 1300.00 ms |\n",
        "| memory, idle with 3 members | 70.0 MiB | 900.0 MiB |\n",
        "| changes not in all 3 members within 30 s | 1 of 4 | 1 of 4 |\n",
        "| cleanup: namespaces deleted → members empty | 12.3 s | – |\n",
        "Karmada's cleanup phase failed: Karmada's etcd (pid 7) has exited\n",
    ] {
        assert!(text.contains(want), "lacks {want:?}:\n{text}");
    }
    s.peer = Some(Err("scripts/karmada up failed:\nno Go".into()));
    assert!(
        render(&s).contains("Karmada could not be measured: scripts/karmada up failed: no Go\n")
    );
}
