//! Several zones on one server: each question goes to the snapshot of the longest zone that
//! contains its name (`clusterset.local` beside the fleet zone, for example).

use std::sync::Arc;

use crate::snapshot::{Snapshot, SnapshotHandle};
use crate::wire::zone_offset;
use crate::{Error, Result};

/// The zones a server answers, each with the handle holding its current snapshot. Cheap to clone.
///
/// The zone of each handle is read once, when the list is made: later snapshots stored in a handle
/// must be of the same zone (a snapshot of another zone would answer REFUSED for it).
#[derive(Clone, Debug)]
pub struct Zones {
    /// Longest zone first, so the first that contains a name is the most specific.
    entries: Arc<[(Box<[u8]>, SnapshotHandle)]>,
}

impl Zones {
    /// The zones of `handles`. Fails when there is none or two hold the same zone.
    pub fn new(handles: impl IntoIterator<Item = SnapshotHandle>) -> Result<Zones> {
        let mut entries: Vec<(Box<[u8]>, SnapshotHandle)> = handles
            .into_iter()
            .map(|handle| (handle.load().zone.clone(), handle))
            .collect();
        if entries.is_empty() {
            return Err(Error::InvalidZone {
                zone: String::new(),
                message: "a server needs at least one zone".into(),
            });
        }
        // equal zones end up side by side
        entries.sort_by_key(|entry| (std::cmp::Reverse(entry.0.len()), entry.0.clone()));
        for pair in entries.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(Error::InvalidZone {
                    zone: pair[0].1.load().zone().to_string(),
                    message: "zone given twice".into(),
                });
            }
        }
        Ok(Zones {
            entries: entries.into(),
        })
    }

    /// One zone.
    pub fn single(handle: SnapshotHandle) -> Zones {
        let zone = handle.load().zone.clone();
        Zones {
            entries: Arc::new([(zone, handle)]),
        }
    }

    /// The zones as given when built, longest first.
    pub fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|(_, handle)| handle.load().zone().to_string())
            .collect()
    }

    /// The handle of `zone` (as given when built, case-insensitive), if served.
    pub fn handle(&self, zone: &str) -> Option<&SnapshotHandle> {
        let wire = crate::wire::name_to_wire(zone).ok()?;
        self.entries
            .iter()
            .find(|(z, _)| **z == *wire)
            .map(|(_, handle)| handle)
    }

    /// The handle that answers the lowercased wire `name`: the longest zone containing it, else
    /// the first zone (whose snapshot then answers REFUSED, after the checks that come before).
    #[inline]
    pub(crate) fn pick(&self, name: &[u8]) -> &SnapshotHandle {
        if self.entries.len() > 1 {
            for (zone, handle) in self.entries.iter() {
                // the byte compare turns most other zones away before the label walk
                if name.ends_with(zone) && zone_offset(name, zone).is_some() {
                    return handle;
                }
            }
        }
        &self.entries[0].1
    }

    /// The current snapshot for `name` without touching reference counts (query path).
    #[inline]
    pub(crate) fn guard(&self, name: &[u8]) -> arc_swap::Guard<Arc<Snapshot>> {
        self.pick(name).guard()
    }
}

impl From<SnapshotHandle> for Zones {
    fn from(handle: SnapshotHandle) -> Zones {
        Zones::single(handle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(zone: &str) -> SnapshotHandle {
        SnapshotHandle::new(Snapshot::empty(zone).unwrap())
    }

    #[test]
    fn picks_the_longest_zone_containing_the_name() {
        let zones = Zones::new([
            handle("example"),
            handle("clusterset.local"),
            handle("eu.example"),
        ])
        .unwrap();
        assert_eq!(zones.names(), ["clusterset.local", "eu.example", "example"]);
        let zone_of = |name: &str| {
            let wire = crate::wire::name_to_wire(name).unwrap();
            zones.pick(&wire).load().zone().to_string()
        };
        assert_eq!(zone_of("web.shop.eu.example"), "eu.example");
        assert_eq!(zone_of("eu.example"), "eu.example");
        assert_eq!(zone_of("web.shop.us.example"), "example");
        assert_eq!(zone_of("web.shop.svc.clusterset.local"), "clusterset.local");
        // outside every zone: the first, which refuses it
        assert_eq!(zone_of("xeu.example.org"), "clusterset.local");
        assert!(zones.handle("EU.example.").is_some());
        assert!(zones.handle("other").is_none());
    }

    #[test]
    fn refuses_no_zone_and_a_zone_twice() {
        assert!(Zones::new(Vec::new()).is_err());
        assert!(Zones::new([handle("example"), handle("ex.ample"), handle("Example.")]).is_err());
    }
}
