//! The Job and HPA splits.

use super::*;

#[test]
fn job_split() {
    let split = |total, weights: &[(&str, u32)], completions| {
        let par = divide_static(total, &targets(weights)).expect("divisible");
        divide_job(&par, completions)
            .into_iter()
            .map(|j| (j.parallelism, j.completions))
            .collect::<Vec<_>>()
    };
    let three = [("a", 1), ("b", 1), ("c", 1)];
    let cases: Vec<(
        &str,
        u32,
        &[(&str, u32)],
        Option<u32>,
        Vec<(u32, Option<u32>)>,
    )> = vec![
        (
            "even",
            6,
            &three,
            Some(12),
            vec![(2, Some(4)), (2, Some(4)), (2, Some(4))],
        ),
        // Parallelism 3/2/2 (a by name); completions by 3:2:2 with the same tie order.
        (
            "same order",
            7,
            &three,
            Some(10),
            vec![(3, Some(4)), (2, Some(3)), (2, Some(3))],
        ),
        (
            "unset completions",
            4,
            &[("a", 1), ("b", 1)],
            None,
            vec![(2, None), (2, None)],
        ),
        // Two completions for three slices: a (parallelism 3) wins, then b by name; c is dropped.
        (
            "fewer completions than slices",
            7,
            &three,
            Some(2),
            vec![(3, Some(1)), (2, Some(1)), (0, Some(0))],
        ),
        (
            "a cluster without parallelism gets no completions",
            2,
            &[("a", 1), ("b", 1), ("c", 1)],
            Some(5),
            vec![(1, Some(3)), (1, Some(2)), (0, Some(0))],
        ),
        (
            "paused job",
            0,
            &[("a", 1), ("b", 1)],
            Some(3),
            vec![(0, Some(2)), (0, Some(1))],
        ),
    ];
    for (name, total, weights, completions, want) in cases {
        assert_eq!(split(total, weights, completions), want, "{name}");
    }
}

#[test]
fn hpa_split() {
    let split = |min, max, weights: &[(&str, u32)]| {
        divide_hpa(min, max, &targets(weights))
            .expect("divisible")
            .into_iter()
            .map(|h| (h.min_replicas, h.max_replicas))
            .collect::<Vec<_>>()
    };
    let cases: Vec<(&str, u32, u32, &[(&str, u32)], Vec<(u32, u32)>)> = vec![
        (
            "even",
            3,
            9,
            &[("a", 1), ("b", 1), ("c", 1)],
            vec![(1, 3), (1, 3), (1, 3)],
        ),
        (
            "min below cluster count: 1 each",
            1,
            6,
            &[("a", 1), ("b", 1), ("c", 1)],
            vec![(1, 2), (1, 2), (1, 2)],
        ),
        // Min: 1 each, then a(2/3) b(1/3) → a; max from 2/1: a(2/5) b(1/3) a(2/7) b(1/5) ...
        (
            "weighted 2:1",
            3,
            9,
            &[("a", 2), ("b", 1)],
            vec![(2, 6), (1, 3)],
        ),
        (
            "max below the mins: max equals min",
            4,
            2,
            &[("a", 1), ("b", 1)],
            vec![(2, 2), (2, 2)],
        ),
        (
            "weight 0 still gets 1 each",
            2,
            10,
            &[("a", 1), ("b", 0)],
            vec![(1, 9), (1, 1)],
        ),
        (
            "all weights 0 weigh the same",
            4,
            8,
            &[("a", 0), ("b", 0)],
            vec![(2, 4), (2, 4)],
        ),
    ];
    for (name, min, max, weights, want) in cases {
        let got = split(min, max, weights);
        assert_eq!(got, want, "{name}");
        assert!(got.iter().all(|&(lo, hi)| lo >= 1 && hi >= lo), "{name}");
    }
}
