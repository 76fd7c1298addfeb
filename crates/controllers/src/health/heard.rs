//! When the hub last heard each cluster's heartbeat, on the hub's own clock.
//!
//! A Lease's `renewTime` is written with the agent's clock, which may be minutes off the
//! hub's: compared with the hub's now, an agent behind would look silent while it beats and
//! one ahead would look alive long after it stopped. So, as the kubelet's node lifecycle
//! controller does, the hub only uses `renewTime` to notice that a renewal happened and
//! counts silence from when it saw that change.

use std::collections::HashMap;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;

/// The last heartbeat seen per cluster, and when (hub clock) it was seen.
#[derive(Default)]
pub(super) struct Heard {
    seen: HashMap<String, (Option<Timestamp>, Timestamp)>,
}

impl Heard {
    /// When the hub last saw `cluster`'s Lease renewed, given its Lease now (`None`: no
    /// Lease). A cluster seen for the first time counts as heard `now`: after a restart or a
    /// shard takeover every cluster gets a full grace period before it is judged silent.
    pub(super) fn observe(
        &mut self,
        cluster: &str,
        lease: Option<&Lease>,
        now: Timestamp,
    ) -> Timestamp {
        let renewed = lease
            .and_then(|l| l.spec.as_ref())
            .and_then(|s| s.renew_time.as_ref())
            .map(|t| t.0);
        match self.seen.get_mut(cluster) {
            Some((last, at)) => {
                if *last != renewed {
                    *last = renewed;
                    *at = now;
                }
                *at
            }
            None => {
                self.seen.insert(cluster.to_owned(), (renewed, now));
                now
            }
        }
    }

    /// Forgets the clusters `keep` does not name (removed, or in another process's shard).
    pub(super) fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.seen.retain(|name, _| keep(name));
    }
}
