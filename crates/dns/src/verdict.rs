//! The quorum rule: health votes of the voters become one [`Verdict`] per endpoint.
//!
//! Only fresh votes count (a voter whose report is older than three probe intervals is ignored), so a
//! voter that stopped reporting can neither keep a dead endpoint nor remove a live one. An endpoint is
//! Unhealthy only when a strict majority of the fresh votes see it down: one partitioned checker
//! cannot black-hole a healthy cluster.

use crate::fleet::{Endpoint, Verdict};

/// One voter's opinion of one endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vote {
    /// The voter sees the endpoint up.
    pub up: bool,
    /// The voter's report is fresh (newer than three intervals).
    pub fresh: bool,
}

/// The counted fresh votes and the verdict they give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Fresh votes seeing the endpoint up.
    pub up: u32,
    /// Fresh votes seeing the endpoint down.
    pub down: u32,
    /// Unhealthy iff `down` is a strict majority of the fresh votes; Unknown without fresh votes.
    pub verdict: Verdict,
}

/// Counts the fresh votes and decides.
pub fn decide(votes: &[Vote]) -> Tally {
    let (mut up, mut down) = (0u32, 0u32);
    for vote in votes.iter().filter(|v| v.fresh) {
        if vote.up {
            up += 1;
        } else {
            down += 1;
        }
    }
    let verdict = if up + down == 0 {
        Verdict::Unknown
    } else if down > up {
        Verdict::Unhealthy
    } else {
        Verdict::Healthy
    };
    Tally { up, down, verdict }
}

/// Whether a service fails open: it has endpoints and every one is Unhealthy, so all are answered.
pub fn fail_open(endpoints: &[Endpoint]) -> bool {
    !endpoints.is_empty() && endpoints.iter().all(|e| e.verdict == Verdict::Unhealthy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn votes(spec: &[(bool, bool)]) -> Vec<Vote> {
        spec.iter().map(|&(up, fresh)| Vote { up, fresh }).collect()
    }

    #[test]
    fn decide_table() {
        use Verdict::*;
        // (votes as (up, fresh), up, down, verdict)
        type Case<'a> = (&'a [(bool, bool)], u32, u32, Verdict);
        let cases: &[Case] = &[
            (&[], 0, 0, Unknown),
            (&[(false, false), (true, false)], 0, 0, Unknown),
            (&[(true, true)], 1, 0, Healthy),
            (&[(false, true)], 0, 1, Unhealthy),
            (&[(true, true), (false, true)], 1, 1, Healthy),
            (&[(true, true), (false, true), (true, true)], 2, 1, Healthy),
            (
                &[(true, true), (false, true), (false, true)],
                1,
                2,
                Unhealthy,
            ),
            // a stale "down" vote does not tip a tie
            (
                &[(true, true), (false, true), (false, false)],
                1,
                1,
                Healthy,
            ),
            // stale "up" votes cannot keep an endpoint that every fresh voter sees down
            (
                &[(true, false), (true, false), (false, true)],
                0,
                1,
                Unhealthy,
            ),
        ];
        for (spec, up, down, verdict) in cases {
            let tally = decide(&votes(spec));
            assert_eq!(
                tally,
                Tally {
                    up: *up,
                    down: *down,
                    verdict: *verdict
                },
                "votes {spec:?}"
            );
        }
    }

    #[test]
    fn fail_open_only_when_every_endpoint_is_unhealthy() {
        let ep = |verdict| Endpoint {
            cluster: "a".into(),
            region: None,
            address: "192.0.2.1".parse().unwrap(),
            verdict,
            cluster_ip: None,
        };
        assert!(!fail_open(&[]));
        assert!(fail_open(&[ep(Verdict::Unhealthy), ep(Verdict::Unhealthy)]));
        assert!(!fail_open(&[ep(Verdict::Unhealthy), ep(Verdict::Unknown)]));
        assert!(!fail_open(&[ep(Verdict::Healthy)]));
    }
}
