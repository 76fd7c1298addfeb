//! DNS messages, as a UDP or TCP packet to the hub's authoritative server, answered from a
//! snapshot with weighted, failover and geo services: never a panic, and every answer is a
//! well-formed DNS response with the query's ID that is no longer than the transport allows.
#![no_main]
use std::net::IpAddr;
use std::sync::LazyLock;

use flotilla_dns::fleet::Fleet;
use flotilla_dns::geo::GeoTable;
use flotilla_dns::snapshot::{Snapshot, SnapshotOptions};
use hickory_proto::op::Message;
use libfuzzer_sys::fuzz_target;

static SNAPSHOT: LazyLock<Snapshot> = LazyLock::new(|| {
    let fleet: Fleet = serde_json::from_str(include_str!("dns_fleet.json")).expect("fleet");
    let geo = GeoTable::parse("10.1.0.0/16 eu\n198.51.100.0/24 us\n").expect("geo");
    let options = SnapshotOptions {
        ns_addresses: vec!["192.0.2.53".parse().unwrap()],
        serial: Some(1),
        ..SnapshotOptions::default()
    };
    Snapshot::build("fleet.example", &fleet, &geo, &options).expect("snapshot")
});

fuzz_target!(|data: &[u8]| {
    // The first byte picks the transport and the client's address.
    let Some((&how, packet)) = data.split_first() else {
        return;
    };
    let tcp = how & 1 == 1;
    let source: IpAddr = if how & 2 == 2 { "10.1.2.3" } else { "203.0.113.9" }
        .parse()
        .unwrap();
    let Some(out) = flotilla_dns::fuzzing::answer(&SNAPSHOT, packet, source, tcp) else {
        return;
    };
    assert!(out.len() >= 12, "an answer of {} bytes", out.len());
    assert_eq!(out[..2], packet[..2], "the answer's ID is not the query's");
    assert!(out[2] & 0x80 != 0, "the answer is not flagged as a response");
    if !tcp {
        assert!(out.len() <= 65_535);
    }
    if let Err(e) = Message::from_vec(&out) {
        panic!("an answer hickory cannot read ({e}): {out:02x?}");
    }
});
