//! Properties on reproducible pseudo-random cases, against a naive implementation.

use std::collections::HashSet;

use super::*;

/// Deterministic pseudo-random numbers (64-bit LCG), so the property tests are reproducible.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Webster by linear scan with the same tie rules, written straight from the definition.
fn naive(total: u32, weights: &[(String, u32)]) -> Vec<u32> {
    let mut seats = vec![0u32; weights.len()];
    for _ in 0..total {
        let mut best: Option<usize> = None;
        for (i, (name, w)) in weights.iter().enumerate() {
            if *w == 0 {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => {
                    let (bname, bw) = &weights[b];
                    let lhs = u128::from(*w) * u128::from(2 * seats[b] + 1);
                    let rhs = u128::from(*bw) * u128::from(2 * seats[i] + 1);
                    let better = lhs > rhs
                        || (lhs == rhs
                            && (seats[i] < seats[b] || (seats[i] == seats[b] && name < bname)));
                    Some(if better { i } else { b })
                }
            };
        }
        seats[best.expect("some positive weight")] += 1;
    }
    seats
}

#[test]
fn properties_hold_on_random_cases() {
    let mut rng = Lcg(6);
    for case in 0..300 {
        let n = 1 + rng.below(8) as usize;
        let weights: Vec<(String, u32)> = (0..n)
            .map(|i| {
                (
                    format!("c{}", (i * 7 + case) % 11),
                    rng.below(6) as u32 + u32::from(i == 0),
                )
            })
            .collect();
        // Unique names: keep the first of each.
        let mut seen = HashSet::new();
        let weights: Vec<(String, u32)> = weights
            .into_iter()
            .filter(|(c, _)| seen.insert(c.clone()))
            .collect();
        let ts: Vec<Target> = weights
            .iter()
            .map(|(c, w)| Target::new(c.clone(), *w))
            .collect();
        let total = rng.below(40) as u32;
        let got = replicas(&divide_static(total, &ts).expect("divisible"));
        assert_eq!(
            got,
            naive(total, &weights),
            "case {case}: {total} over {weights:?}"
        );

        // No Alabama paradox, and stable scale-up from the smaller total equals the fresh division.
        let more = total + rng.below(10) as u32;
        let bigger = replicas(&divide_static(more, &ts).expect("divisible"));
        assert!(got.iter().zip(&bigger).all(|(a, b)| a <= b), "case {case}");
        let current: Vec<Target> = ts
            .iter()
            .zip(&got)
            .map(|(t, &current)| Target {
                current,
                ..t.clone()
            })
            .collect();
        assert_eq!(
            replicas(&divide_static(more, &current).expect("divisible")),
            bigger,
            "case {case}"
        );

        // Stable scale-down from the bigger total is the exact inverse.
        let current: Vec<Target> = ts
            .iter()
            .zip(&bigger)
            .map(|(t, &current)| Target {
                current,
                ..t.clone()
            })
            .collect();
        assert_eq!(
            replicas(&divide_static(total, &current).expect("divisible")),
            got,
            "case {case}"
        );
    }
}

#[test]
fn many_clusters() {
    let ts: Vec<Target> = (0..1000)
        .map(|i| Target::new(format!("member-{i:04}"), 1 + i % 7))
        .collect();
    let got = divide_static(10_000, &ts).expect("divisible");
    assert_eq!(
        got.iter().map(|a| u64::from(a.replicas)).sum::<u64>(),
        10_000
    );
    // Weight 7 clusters get more than weight 1 clusters.
    assert!(got[6].replicas > got[0].replicas);
}
