//! The in-memory writer task: group commit (see [`crate::batch`]) against [`Data`].

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use tokio::sync::oneshot;

use super::data::Data;
use crate::backend::{Reporter, WriterEnd};
use crate::batch::{self, Op, Step};
use crate::{Record, Result};

/// Run until every request sender is gone and the queue is drained; then mark the named
/// database `name` free to open again.
pub(super) async fn run(data: Arc<RwLock<Data>>, end: WriterEnd, name: Option<String>) {
    let WriterEnd {
        mut requests,
        done,
        report,
    } = end;
    while let Some(first) = requests.recv().await {
        for step in batch::steps(batch::drain(first, &mut requests)) {
            match step {
                Step::Writes(writes) => write_group(&data, &report, writes),
                Step::Compact(revision, reply) => {
                    let result = data.write().compact(revision);
                    if let Ok(true) = result {
                        report.compacted_to(revision);
                    }
                    let _ = reply.send(result.map(drop));
                }
            }
        }
    }
    if let Some(name) = name {
        super::release(&name);
    }
    // Dropping `done` tells `close` the writer has finished.
    drop(done);
}

fn write_group(
    data: &RwLock<Data>,
    report: &Reporter,
    writes: Vec<(Op, oneshot::Sender<Result<Record>>)>,
) {
    let keys = batch::keys(&writes);
    let (ops, replies): (Vec<_>, Vec<_>) = writes.into_iter().unzip();
    // Only this task writes, so the state read here is still the state when the plan is
    // applied; readers are not held up while the values are rendered.
    let (base, current) = {
        let d = data.read();
        let current: HashMap<String, Record> = keys
            .iter()
            .filter_map(|k| d.objects.get(k).map(|r| (k.clone(), r.clone())))
            .collect();
        (d.revision, current)
    };
    let mut plan = batch::plan(base, ops, current);
    let results = std::mem::take(&mut plan.results);
    let last = plan.last;
    let events = data.write().apply(plan);
    report.committed(last, events);
    batch::answer(replies, results);
}
