use super::*;

#[test]
fn quantities_in_thousandths() {
    for (q, want) in [
        ("100m", Some(100)),
        ("2", Some(2000)),
        ("1.5", Some(1500)),
        ("0.0001", Some(1)),
        ("1Ki", Some(1_024_000)),
        ("16Gi", Some(16 * 1024 * 1024 * 1024 * 1000)),
        ("1k", Some(1_000_000)),
        ("110", Some(110_000)),
        ("1e3", Some(1_000_000)),
        ("5x", None),
    ] {
        assert_eq!(milli(q), want, "{q}");
    }
    assert_eq!(format_milli(2000), "2");
    assert_eq!(format_milli(1500), "1500m");
}

#[test]
fn replicas_are_estimated_node_by_node() {
    let amounts = |pairs: &[(&str, &str)]| -> Amounts {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), milli(v).unwrap()))
            .collect()
    };
    // Two nodes with 1.5 CPUs free each: three 1-CPU replicas do not fit, two do.
    let offered = BTreeMap::from([
        (
            "a".to_owned(),
            amounts(&[("cpu", "2"), ("memory", "8Gi"), ("pods", "110")]),
        ),
        (
            "b".to_owned(),
            amounts(&[("cpu", "2"), ("memory", "8Gi"), ("pods", "110")]),
        ),
    ]);
    let used = BTreeMap::from([
        ("a".to_owned(), amounts(&[("cpu", "500m"), ("pods", "1")])),
        ("b".to_owned(), amounts(&[("cpu", "500m"), ("pods", "1")])),
        // Unscheduled pods are counted in the totals, not against a node.
        (String::new(), amounts(&[("cpu", "4"), ("pods", "1")])),
    ]);
    let summary = resources(&offered, &used);
    assert_eq!(summary.allocatable["cpu"].0, "4");
    assert_eq!(summary.allocated["cpu"].0, "5");
    assert_eq!(summary.allocated["pods"].0, "3");
    let estimate = |cpu: &str| {
        summary
            .replica_estimates
            .iter()
            .find(|e| e.request["cpu"].0 == cpu)
            .map(|e| e.replicas)
    };
    assert_eq!(estimate("1"), Some(2));
    assert_eq!(estimate("500m"), Some(6));
    assert_eq!(estimate("100m"), Some(30));
    // Memory binds first for the largest shape: 8Gi / 4Gi = 2 per node, but 1.5 CPUs / 2 = 0.
    assert_eq!(estimate("2"), Some(0));
}
