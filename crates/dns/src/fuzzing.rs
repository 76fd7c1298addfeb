//! The responder as the fuzz targets (fuzz/fuzz_targets/dns_message.rs) call it: one packet in,
//! the bytes that would be sent back out. Built only with the `fuzzing` feature.

use std::net::IpAddr;

use crate::respond::{respond, Worker};
use crate::snapshot::Snapshot;

/// Answers `packet` (as received over UDP, or over TCP without its length prefix) from
/// `snapshot`; `None` when nothing would be sent.
pub fn answer(snapshot: &Snapshot, packet: &[u8], source: IpAddr, tcp: bool) -> Option<Vec<u8>> {
    let mut worker = Worker::new();
    respond(snapshot, packet, source, tcp, &mut worker)?;
    Some(worker.out)
}
