use std::time::Duration;

use super::load;
use crate::scale::changes::Changes;
use crate::scale::{Loaded, Plan};
use crate::stats;

fn plan(clusters: u32) -> Plan {
    Plan {
        clusters,
        settle: Duration::from_secs(20),
        window: Duration::from_secs(30),
        ready_timeout: Duration::from_secs(300),
        load: Some((10_000, 10)),
        changes: (50, 1_000, 50),
        light: Some((200, 10)),
        timings: (Duration::from_secs(40), Duration::from_secs(60)),
        mode: crate::fleet::Mode::Push,
    }
}

fn changes(rate: u64, p99_ms: u64, not_seen: usize) -> Changes {
    let ms = Duration::from_millis;
    Changes {
        templates: 50,
        clusters: 31,
        changes: 200,
        rate,
        all: stats::summarize(vec![ms(p99_ms / 2), ms(p99_ms)]),
        write_errors: (0, None),
        not_seen,
        hub_cpu: 0.5,
    }
}

fn loaded(light: Option<Result<Changes, String>>, main: Result<Changes, String>) -> Loaded {
    Loaded {
        load: not_run(),
        light,
        changes: main,
        failover: not_run(),
        cleanup: not_run(),
    }
}

/// The report's row containing `needle`.
fn row<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("no row with {needle:?} in:\n{text}"))
}

#[test]
fn both_change_phases_are_reported_and_judged_against_the_clusters_target() {
    let l = loaded(Some(Ok(changes(10, 60, 0))), Ok(changes(50, 1_800, 0)));
    let text = load::render(&plan(1_000), &l);
    let light = row(&text, "at a light load");
    assert!(
        light.contains("at 10/s") && light.ends_with("| yes |"),
        "{light}"
    );
    let main = row(&text, "| template change");
    assert!(
        main.contains("at 50/s") && main.ends_with("| **no** |"),
        "{main}"
    );
    // 0.5 s of the hub's CPU over 200 changes.
    assert!(main.contains("the hub's CPU 2.5 ms per change"), "{main}");
    // At 100 clusters the target is 500 ms.
    let text = load::render(
        &plan(100),
        &loaded(Some(Ok(changes(10, 600, 0))), not_run()),
    );
    let light = row(&text, "at a light load");
    assert!(
        light.contains("p99 ≤ 500") && light.ends_with("| **no** |"),
        "{light}"
    );
}

#[test]
fn a_light_phase_that_missed_changes_or_failed_fails_the_run() {
    let missed = loaded(Some(Ok(changes(10, 60, 3))), Ok(changes(50, 900, 0)));
    let e = load::check(&missed).unwrap_err().to_string();
    assert!(
        e.contains("at 10/s") && e.contains("3 were not seen"),
        "{e}"
    );
    let failed = loaded(Some(Err("no Deployment".into())), Ok(changes(50, 900, 0)));
    let e = load::check(&failed).unwrap_err().to_string();
    assert!(
        e.contains("the light change phase failed: no Deployment"),
        "{e}"
    );
    // Without a light phase, there is no row for it.
    let text = load::render(&plan(1_000), &loaded(None, Ok(changes(50, 900, 0))));
    assert!(!text.contains("light"), "{text}");
}

fn not_run<T>() -> Result<T, String> {
    Err("not run".to_string())
}
