//! Stability under churn, for static and dynamic weights.

use super::*;

fn with_current(weights: &[(&str, u32, u32)]) -> Vec<Target> {
    weights
        .iter()
        .map(|&(c, weight, current)| Target {
            current,
            ..Target::new(c, weight)
        })
        .collect()
}

#[test]
fn stability_under_churn() {
    let keep = Options::default();
    let rebalance = Options { rebalance: true };
    let cases: Vec<(&str, u32, Vec<Target>, Options, Vec<u32>)> = vec![
        (
            "a cluster joins: the others keep theirs",
            6,
            with_current(&[("a", 1, 2), ("b", 1, 2), ("c", 1, 2), ("d", 1, 0)]),
            keep,
            vec![2, 2, 2, 0],
        ),
        (
            "a cluster joins with rebalancing: divided afresh",
            6,
            with_current(&[("a", 1, 2), ("b", 1, 2), ("c", 1, 2), ("d", 1, 0)]),
            rebalance,
            vec![2, 2, 1, 1],
        ),
        (
            "a cluster joins during scale-up: it gets the new replicas",
            8,
            with_current(&[("a", 1, 2), ("b", 1, 2), ("c", 1, 2), ("d", 1, 0)]),
            keep,
            vec![2, 2, 2, 2],
        ),
        (
            // 2:1 from 4/2: a(2/9) b(1/5) → 5/2; b(1/5) a(2/11) → 5/3; a(2/11) b(1/7) → 6/3.
            "scale 6 to 9 adds by weight from the current counts",
            9,
            with_current(&[("a", 2, 4), ("b", 1, 2)]),
            keep,
            vec![6, 3],
        ),
        (
            // Removal priorities a 2/(2·6−1)=2/11, b 1/5: a loses first, then b (1/5 vs 2/9), a.
            "scale 9 to 6 removes from the most loaded relative to weight",
            6,
            with_current(&[("a", 2, 6), ("b", 1, 3)]),
            keep,
            vec![4, 2],
        ),
        (
            "an uneven placement is kept on scale-up, new replicas go where they weigh most",
            7,
            with_current(&[("a", 1, 5), ("b", 1, 1)]),
            keep,
            vec![5, 2],
        ),
        (
            // c left: 3 replicas to re-divide over a (2) and b (2), ties by name.
            "a cluster leaves: its replicas are re-divided",
            7,
            with_current(&[("a", 1, 2), ("b", 1, 2)]),
            keep,
            vec![4, 3],
        ),
        (
            "scale-down with a tie removes from the later name",
            5,
            with_current(&[("a", 1, 2), ("b", 1, 2), ("c", 1, 2)]),
            keep,
            vec![2, 2, 1],
        ),
    ];
    for (name, total, targets, opts, want) in cases {
        let got = replicas(&divide_static_with(total, &targets, opts).expect(name));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn stability_respects_new_bounds() {
    let mut targets = with_current(&[("a", 1, 5), ("b", 1, 0), ("c", 1, 1)]);
    targets[0].max = Some(3); // clipped to 3
    targets[1].min = Some(2); // raised to 2
                              // Kept 3/2/1 = 6; one more by priority: b 1/5, c 1/3 → c.
    assert_eq!(
        replicas(&divide_static(7, &targets).expect("fits")),
        [3, 2, 2]
    );
}

fn avail(weights: &[(&str, u32, i64)]) -> Vec<(Target, i64)> {
    weights
        .iter()
        .map(|&(c, current, available)| {
            let t = Target {
                current,
                ..Target::new(c, 0)
            };
            (t, available)
        })
        .collect()
}

#[test]
fn dynamic_weights() {
    let cases: Vec<(&str, u32, Vec<(Target, i64)>, Vec<u32>)> = vec![
        (
            "by free capacity",
            6,
            avail(&[("a", 0, 20), ("b", 0, 10)]),
            vec![4, 2],
        ),
        (
            "no capacity, nothing",
            6,
            avail(&[("a", 0, 20), ("b", 0, 0), ("c", 0, -3)]),
            vec![6, 0, 0],
        ),
        (
            "nothing fits anywhere: equal weights",
            7,
            avail(&[("a", 0, 0), ("b", 0, -1), ("c", 0, 0)]),
            vec![3, 2, 2],
        ),
        // a holds 4 and has 10 free, b holds 0 and has 10 free: the 4 new replicas split evenly,
        // because the free capacity already accounts for what runs in a.
        (
            "scale-up counts only added seats",
            8,
            avail(&[("a", 4, 10), ("b", 0, 10)]),
            vec![6, 2],
        ),
        (
            "scale-down removes from the fullest",
            3,
            avail(&[("a", 2, 0), ("b", 2, 5)]),
            vec![1, 2],
        ),
    ];
    for (name, total, targets, want) in cases {
        let got = replicas(&divide_dynamic(total, &targets).expect(name));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn dynamic_falls_back_when_the_free_clusters_are_full() {
    let mut targets = avail(&[("a", 0, 50), ("b", 0, 0), ("c", 0, 0)]);
    targets[0].0.max = Some(2);
    // a is capped at 2: equal weights place 2 on a and the other 4 on b and c.
    assert_eq!(
        replicas(&divide_dynamic(6, &targets).expect("fits")),
        [2, 2, 2]
    );
}
