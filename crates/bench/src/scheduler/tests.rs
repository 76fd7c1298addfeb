use super::*;

#[test]
fn simulation_is_deterministic() {
    assert_eq!(sim::fleet(100, SEED), sim::fleet(100, SEED));
    assert_eq!(
        sim::bindings(1_000, 100, SEED),
        sim::bindings(1_000, 100, SEED)
    );
    let fleet = sim::fleet(100, SEED);
    assert_eq!(
        fleet[0].metadata.name.as_deref(),
        Some("member-0001"),
        "names start at member-0001"
    );
    let kinds: std::collections::BTreeSet<Kind> = sim::bindings(1_000, 100, SEED)
        .iter()
        .map(|b| b.kind)
        .collect();
    assert_eq!(kinds.len(), 4, "every kind of placement is in the mix");
}

#[test]
fn a_quick_run_places_most_bindings() {
    let fleet = sim::fleet(100, SEED);
    let work = sim::bindings(1_000, 100, SEED);
    let m = measure(&fleet, &work, &Progress::new("test"));
    assert_eq!(m.bindings, 1_000);
    assert_eq!(
        m.by_kind.values().map(|(l, _)| l.count).sum::<usize>(),
        1_000
    );
    assert!(
        m.failed() * 20 < m.bindings,
        "more than 5% failed: {:?}",
        m.errors
    );
    assert!(m.chosen >= m.bindings - m.failed());
}

#[test]
fn error_messages_group_by_cause() {
    assert_eq!(
        blur("cluster \"member-0001\" has a minimum of 3 replicas above 12"),
        "cluster \"…\" has a minimum of N replicas above N"
    );
}
