//! One in-memory database: the current records, the event log since the last compaction, and
//! the counters, read and written under one lock so that every read is a snapshot.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::ops::Bound;

use crate::batch::{LogEntry, Plan};
use crate::keys::Range;
use crate::sql;
use crate::{Event, ListResult, Record, Result, Revision};

#[derive(Default)]
pub(super) struct Data {
    /// Current records by key.
    pub objects: BTreeMap<String, Record>,
    /// Events after `compacted`, in revision order.
    log: VecDeque<LogEntry>,
    /// The last revision committed.
    pub revision: Revision,
    /// History up to here is gone.
    pub compacted: Revision,
}

impl Data {
    /// Make a committed group's rows and log entries current; the events to broadcast.
    pub fn apply(&mut self, plan: Plan) -> Vec<Event> {
        if plan.log.is_empty() {
            return Vec::new();
        }
        for (key, row) in plan.rows {
            match row {
                Some(rec) => self.objects.insert(key, rec),
                None => self.objects.remove(&key),
            };
        }
        let events = plan.log.iter().map(|e| e.event.clone()).collect();
        self.log.extend(plan.log);
        self.revision = plan.last;
        events
    }

    /// Drop history up to `revision`; whether anything was due.
    pub fn compact(&mut self, revision: Revision) -> Result<bool> {
        if !sql::compaction_due(revision, self.revision, self.compacted)? {
            return Ok(false);
        }
        while self
            .log
            .front()
            .is_some_and(|e| e.event.revision <= revision)
        {
            self.log.pop_front();
        }
        self.compacted = revision;
        Ok(true)
    }

    /// The records of `range` at `revision` (the latest when `None`), a page of `limit`.
    pub fn list(
        &self,
        range: &Range,
        revision: Option<Revision>,
        limit: Option<usize>,
    ) -> Result<ListResult> {
        let at = sql::snapshot_revision(revision, self.revision, self.compacted)?;
        let mut matching: Box<dyn Iterator<Item = Record> + '_> = if at == self.revision {
            Box::new(
                self.objects
                    .range::<str, _>(bounds(range))
                    .map(|(_, r)| r.clone()),
            )
        } else {
            Box::new(self.at(range, at).into_values())
        };
        let mut records: Vec<Record> = match limit {
            Some(l) => matching.by_ref().take(l.saturating_add(1)).collect(),
            None => matching.by_ref().collect(),
        };
        let more = sql::trim_page(&mut records, limit);
        // The probe record taken past the page is one of those remaining.
        let remaining = if more { 1 + matching.count() as u64 } else { 0 };
        Ok(ListResult {
            records,
            revision: at,
            more,
            remaining,
        })
    }

    /// The records of `range` as they were at revision `at` (< the current one): the current
    /// records not changed since, and for each key changed since, the value its first later
    /// event replaced (none if that event created it).
    fn at(&self, range: &Range, at: Revision) -> BTreeMap<String, Record> {
        let mut snapshot: BTreeMap<String, Record> = self
            .objects
            .range::<str, _>(bounds(range))
            .filter(|(_, r)| r.mod_revision <= at)
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        let mut seen = HashSet::new();
        let start = self.log.partition_point(|e| e.event.revision <= at);
        for entry in self.log.range(start..) {
            let e = &entry.event;
            if !in_range(range, &e.key) || !seen.insert(e.key.as_str()) {
                continue;
            }
            if let (Some(value), Some(mod_revision)) = (&e.prev_value, entry.prev_mod_revision) {
                snapshot.insert(
                    e.key.clone(),
                    Record {
                        key: e.key.clone(),
                        create_revision: e.create_revision,
                        mod_revision,
                        value: value.clone(),
                    },
                );
            }
        }
        snapshot
    }

    /// Up to `limit` events after revision `after`.
    pub fn events_after(&self, after: Revision, limit: usize) -> Result<Vec<Event>> {
        sql::log_readable(after, self.compacted)?;
        let start = self.log.partition_point(|e| e.event.revision <= after);
        Ok(self
            .log
            .range(start..)
            .take(limit)
            .map(|e| e.event.clone())
            .collect())
    }
}

/// The map bounds of a key range: from its lower key (or after its pagination key), below its
/// upper key.
fn bounds(range: &Range) -> (Bound<&str>, Bound<&str>) {
    let lower = match &range.after {
        Some(after) => Bound::Excluded(after.as_str()),
        None => Bound::Included(range.lower.as_str()),
    };
    let upper = match &range.upper {
        Some(upper) => Bound::Excluded(upper.as_str()),
        None => Bound::Unbounded,
    };
    (lower, upper)
}

fn in_range(range: &Range, key: &str) -> bool {
    key >= range.lower.as_str()
        && range.upper.as_deref().is_none_or(|u| key < u)
        && range.after.as_deref().is_none_or(|a| key > a)
}
