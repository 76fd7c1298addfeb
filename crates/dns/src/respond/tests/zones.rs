//! Several zones on one responder: the fleet zone beside MCS `clusterset.local`.

use super::*;
use crate::snapshot::SnapshotHandle;
use crate::zones::Zones;

const CLUSTERSET: &str = "clusterset.local";

/// The fleet zone with `web`, and `clusterset.local` with `db.shop` (two clusters' endpoints,
/// TTL 5, an `sql` port) and `idle.shop` (imported, no ready endpoint).
fn zones() -> Zones {
    let fleet = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    let mut db = service(
        "db",
        Strategy::RoundRobin,
        vec![
            ep("a", "eu", "10.1.0.7", Verdict::Unknown),
            ep("c", "us", "10.3.0.9", Verdict::Unknown),
        ],
    );
    db.ttl = 5;
    db.ports[0].name = "sql".into();
    let mut idle = service("idle", Strategy::RoundRobin, vec![]);
    idle.ttl = 5;
    let options = SnapshotOptions {
        service_suffix: Some("svc".into()),
        scoped_names: false,
        negative_ttl: 5,
        ..SnapshotOptions::default()
    };
    let fleet_set = Fleet {
        clusters: vec![],
        services: vec![db, idle],
    };
    let clusterset =
        Snapshot::build(CLUSTERSET, &fleet_set, &GeoTable::default(), &options).unwrap();
    Zones::new([SnapshotHandle::new(fleet), SnapshotHandle::new(clusterset)]).unwrap()
}

fn soa_owner(message: &Message) -> String {
    let soa = message
        .answers
        .iter()
        .chain(message.authorities.iter())
        .find(|r| r.record_type() == RecordType::SOA)
        .expect("an SOA");
    soa.name.to_ascii()
}

#[test]
fn each_zone_answers_its_own_soa_and_ns() {
    let zones = zones();
    for zone in [ZONE, CLUSTERSET] {
        let got = ask(&zones, &format!("{zone}."), RecordType::SOA, OUTSIDE);
        assert_eq!(got.metadata.response_code, ResponseCode::NoError);
        assert!(got.metadata.authoritative);
        assert_eq!(soa_owner(&got), format!("{zone}."));
        let got = ask(&zones, &format!("{zone}."), RecordType::NS, OUTSIDE);
        assert_eq!(got.answers.len(), 1);
        assert_eq!(got.answers[0].name.to_ascii(), format!("{zone}."));
    }
}

#[test]
fn names_of_both_zones_answer_on_one_responder() {
    let zones = zones();
    let got = ask(&zones, "web.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(
        sorted(addresses(&got)),
        ["192.0.2.1", "192.0.2.2", "198.51.100.3"]
    );
    let got = ask(
        &zones,
        "DB.shop.svc.ClusterSet.local.",
        RecordType::A,
        OUTSIDE,
    );
    assert_eq!(got.metadata.response_code, ResponseCode::NoError);
    assert!(got.metadata.authoritative);
    assert_eq!(sorted(addresses(&got)), ["10.1.0.7", "10.3.0.9"]);
    assert!(got.answers.iter().all(|r| r.ttl == 5));
    let got = ask(
        &zones,
        "_sql._tcp.db.shop.svc.clusterset.local.",
        RecordType::SRV,
        OUTSIDE,
    );
    match &got.answers[..] {
        [record] => match &record.data {
            RData::SRV(srv) => {
                assert_eq!(srv.port, 80);
                assert_eq!(srv.target.to_ascii(), "db.shop.svc.clusterset.local.");
            }
            other => panic!("not an SRV: {other:?}"),
        },
        other => panic!("one SRV expected: {other:?}"),
    }
}

#[test]
fn clusterset_negative_answers_carry_its_soa() {
    let zones = zones();
    // an import without ready endpoints: NODATA
    let got = ask(
        &zones,
        "idle.shop.svc.clusterset.local.",
        RecordType::A,
        OUTSIDE,
    );
    assert_eq!(got.metadata.response_code, ResponseCode::NoError);
    assert!(got.answers.is_empty());
    assert_eq!(soa_owner(&got), "clusterset.local.");
    // the names between the apex and a service exist (empty non-terminals)
    let got = ask(&zones, "svc.clusterset.local.", RecordType::A, OUTSIDE);
    assert_eq!(got.metadata.response_code, ResponseCode::NoError);
    // no import: NXDOMAIN; no per-cluster names in the clusterset zone
    for name in [
        "web.shop.svc.clusterset.local.",
        "db.shop.clusterset.local.",
        "db.shop.a.svc.clusterset.local.",
    ] {
        let got = ask(&zones, name, RecordType::A, OUTSIDE);
        assert_eq!(got.metadata.response_code, ResponseCode::NXDomain, "{name}");
        assert_eq!(soa_owner(&got), "clusterset.local.", "{name}");
    }
    // the fleet zone's names stay out of the clusterset zone and the other way round
    let got = ask(&zones, "db.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(got.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(soa_owner(&got), "fleet.example.");
}

#[test]
fn names_outside_every_zone_are_refused() {
    let zones = zones();
    for name in [
        "example.org.",
        "local.",
        "xclusterset.local.",
        "fleet.example.org.",
    ] {
        let got = ask(&zones, name, RecordType::A, OUTSIDE);
        assert_eq!(got.metadata.response_code, ResponseCode::Refused, "{name}");
        assert!(!got.metadata.authoritative);
    }
}

#[test]
fn a_swapped_snapshot_is_seen_in_its_zone_only() {
    let zones = zones();
    let handle = zones.handle(CLUSTERSET).unwrap().clone();
    let options = SnapshotOptions {
        service_suffix: Some("svc".into()),
        scoped_names: false,
        ..SnapshotOptions::default()
    };
    handle.store(
        Snapshot::build(
            CLUSTERSET,
            &Fleet::default(),
            &GeoTable::default(),
            &options,
        )
        .unwrap(),
    );
    let got = ask(
        &zones,
        "db.shop.svc.clusterset.local.",
        RecordType::A,
        OUTSIDE,
    );
    assert_eq!(got.metadata.response_code, ResponseCode::NXDomain);
    let got = ask(&zones, "web.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(addresses(&got).len(), 3);
}
