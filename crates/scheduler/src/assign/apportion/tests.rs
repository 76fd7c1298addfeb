//! Table-driven tests for apportionment: reference tables worked by hand, the issue's examples,
//! bounds and errors here; stability and dynamic weights, the Job and HPA splits, and properties
//! checked against a naive implementation in the submodules.
// Each table row is a tuple of case name, inputs and expected output: clearer than a struct.
#![allow(clippy::type_complexity)]

mod churn;
mod kinds;
mod properties;

use super::*;

pub(super) fn targets(weights: &[(&str, u32)]) -> Vec<Target> {
    weights.iter().map(|&(c, w)| Target::new(c, w)).collect()
}

pub(super) fn replicas(assignments: &[Assignment]) -> Vec<u32> {
    assignments.iter().map(|a| a.replicas).collect()
}

pub(super) fn fresh(total: u32, weights: &[(&str, u32)]) -> Vec<u32> {
    replicas(&divide_static(total, &targets(weights)).expect("divisible"))
}

/// Weights a:5 b:3 c:1. Priorities by hand: a 5, 5/3, 1, 5/7, 5/9, 5/11; b 3, 1, 3/5; c 1, 1/3.
/// Seat order: a(5) b(3) a(5/3), then a three-way tie at 1 (a holding 2, b 1, c 0) that goes
/// c, b, a by fewer replicas; then a(5/7) b(3/5) a(5/9) a(5/11).
#[test]
fn reference_table_5_3_1() {
    let table: [[u32; 3]; 11] = [
        [0, 0, 0],
        [1, 0, 0],
        [1, 1, 0],
        [2, 1, 0],
        [2, 1, 1],
        [2, 2, 1],
        [3, 2, 1],
        [4, 2, 1],
        [4, 3, 1],
        [5, 3, 1],
        [6, 3, 1],
    ];
    for (total, want) in table.iter().enumerate() {
        let got = fresh(total as u32, &[("a", 5), ("b", 3), ("c", 1)]);
        assert_eq!(got, want, "total {total}");
    }
}

/// Wikipedia's Sainte-Laguë worked example: votes A 100,000, B 80,000, C 30,000, D 20,000; 8 seats
/// give 3/3/1/1 (D'Hondt would give 4/3/1/0). Quotients by hand: A 100k, 33.3k, 20k, 14.3k;
/// B 80k, 26.7k, 16k; C 30k, 10k; D 20k. Seats 6 and 7 tie at 20k between A (holding 2) and D
/// (holding 0): D first, by fewer replicas.
#[test]
fn reference_table_sainte_lague_wikipedia() {
    let parties = [("A", 100_000), ("B", 80_000), ("C", 30_000), ("D", 20_000)];
    let table: [(u32, [u32; 4]); 8] = [
        (1, [1, 0, 0, 0]),
        (2, [1, 1, 0, 0]),
        (3, [2, 1, 0, 0]),
        (4, [2, 1, 1, 0]),
        (5, [2, 2, 1, 0]),
        (6, [2, 2, 1, 1]),
        (7, [3, 2, 1, 1]),
        (8, [3, 3, 1, 1]),
    ];
    for (total, want) in table {
        assert_eq!(fresh(total, &parties), want, "total {total}");
    }
}

#[test]
fn issue_examples() {
    let cases: &[(u32, &[(&str, u32)], &[u32])] = &[
        (6, &[("a", 1), ("b", 1), ("c", 1)], &[2, 2, 2]),
        (6, &[("a", 2), ("b", 1)], &[4, 2]),
        // After 2/2/2 all three tie on priority and replicas; `a` wins by name.
        (7, &[("a", 1), ("b", 1), ("c", 1)], &[3, 2, 2]),
        // The name decides, not the order of the list.
        (7, &[("c", 1), ("b", 1), ("a", 1)], &[2, 2, 3]),
        (8, &[("a", 1), ("b", 1), ("c", 1)], &[3, 3, 2]),
        (1, &[("b", 1), ("a", 1)], &[0, 1]),
    ];
    for (total, weights, want) in cases {
        assert_eq!(fresh(*total, weights), *want, "{total} over {weights:?}");
    }
}

#[test]
fn ties_go_to_fewer_replicas_then_name() {
    let cases: &[(u32, &[(&str, u32)], &[u32])] = &[
        // a:3 b:1 — second seat: a at 3/3 ties b at 1/1; b holds fewer.
        (2, &[("a", 3), ("b", 1)], &[1, 1]),
        // a:1 b:3 — same tie, mirrored: a holds fewer.
        (2, &[("a", 1), ("b", 3)], &[1, 1]),
        // Equal weights, equal holdings: names decide, in byte order ("B" < "a").
        (1, &[("a", 1), ("B", 1)], &[0, 1]),
        (3, &[("x", 2), ("y", 2), ("z", 2), ("w", 2)], &[1, 1, 0, 1]),
    ];
    for (total, weights, want) in cases {
        assert_eq!(fresh(*total, weights), *want, "{total} over {weights:?}");
    }
}

#[test]
fn min_and_max() {
    let t = |c: &str, weight, min, max| Target {
        cluster: c.into(),
        weight,
        min,
        max,
        current: 0,
    };
    let cases: Vec<(&str, u32, Vec<Target>, Vec<u32>)> = vec![
        (
            "weight 0 gets nothing",
            4,
            vec![t("a", 1, None, None), t("b", 0, None, None)],
            vec![4, 0],
        ),
        (
            "weight 0 gets its min",
            4,
            vec![t("a", 1, None, None), t("b", 0, Some(1), None)],
            vec![3, 1],
        ),
        // Mins first: a holds 3, b 0; then b(1/1) beats a(1/7) for the rest.
        (
            "mins are seated first",
            5,
            vec![t("a", 1, Some(3), None), t("b", 1, None, None)],
            vec![3, 2],
        ),
        (
            "max caps",
            6,
            vec![t("a", 5, None, Some(2)), t("b", 1, None, None)],
            vec![2, 4],
        ),
        (
            "min equals max",
            6,
            vec![t("a", 1, Some(1), Some(1)), t("b", 1, None, None)],
            vec![1, 5],
        ),
        (
            "mins take all",
            3,
            vec![t("a", 9, None, None), t("b", 1, Some(3), None)],
            vec![0, 3],
        ),
        (
            "max exactly holds",
            4,
            vec![t("a", 1, None, Some(1)), t("b", 1, None, Some(3))],
            vec![1, 3],
        ),
    ];
    for (name, total, targets, want) in cases {
        let got = replicas(&divide_static(total, &targets).expect(name));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn errors() {
    let bounded = |c: &str, weight, min, max| Target {
        cluster: c.into(),
        weight,
        min,
        max,
        current: 0,
    };
    let cases: Vec<(&str, u32, Vec<Target>, Error)> = vec![
        (
            "duplicate",
            2,
            targets(&[("a", 1), ("b", 1), ("a", 2)]),
            Error::DuplicateCluster {
                cluster: "a".into(),
            },
        ),
        (
            "min above max",
            2,
            vec![bounded("a", 1, Some(3), Some(2))],
            Error::MinAboveMax {
                cluster: "a".into(),
                min: 3,
                max: 2,
            },
        ),
        (
            "mins exceed total",
            4,
            vec![
                bounded("a", 1, Some(3), None),
                bounded("b", 1, Some(2), None),
            ],
            Error::MinsExceedTotal { total: 4, mins: 5 },
        ),
        (
            "maxes too small",
            5,
            vec![
                bounded("a", 1, None, Some(2)),
                bounded("b", 1, None, Some(2)),
            ],
            Error::MaxesTooSmall {
                total: 5,
                capacity: 4,
            },
        ),
        (
            "only weight 0 has room",
            5,
            vec![
                bounded("a", 1, None, Some(2)),
                bounded("b", 0, Some(1), None),
            ],
            Error::MaxesTooSmall {
                total: 5,
                capacity: 3,
            },
        ),
        (
            "no clusters",
            1,
            vec![],
            Error::MaxesTooSmall {
                total: 1,
                capacity: 0,
            },
        ),
    ];
    for (name, total, targets, want) in cases {
        assert_eq!(divide_static(total, &targets), Err(want), "{name}");
    }
    assert_eq!(divide_static(0, &[]), Ok(vec![]));
}

#[test]
fn error_messages_say_what_to_change() {
    let msg = Error::MinsExceedTotal { total: 4, mins: 5 }.to_string();
    assert!(
        msg.contains("add up to 5") && msg.contains("the 4 to divide") && msg.contains("lower")
    );
    let msg = Error::MaxesTooSmall {
        total: 5,
        capacity: 4,
    }
    .to_string();
    assert!(msg.contains("at most 4 of the 5") && msg.contains("raise a maximum"));
}
