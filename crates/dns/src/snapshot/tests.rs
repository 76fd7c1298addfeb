//! The incremental path of [`SnapshotBuilder`]: each update equals a full build of the same fleet,
//! and touches only the names of the services that changed.

use super::{Node, Snapshot, SnapshotBuilder, SnapshotOptions};
use crate::fleet::{
    ClusterInfo, Endpoint, Fleet, FleetService, ServicePort, Strategy, Verdict, Weight,
};
use crate::geo::GeoTable;

const ZONE: &str = "fleet.example";

fn options() -> SnapshotOptions {
    SnapshotOptions {
        serial: Some(7),
        ..SnapshotOptions::default()
    }
}

fn geo() -> GeoTable {
    GeoTable::parse("100.64.0.0/16 eu\n100.65.0.0/16 us\ndistance eu us 80\n").unwrap()
}

fn service(s: usize) -> FleetService {
    let strategy = match s % 4 {
        0 => Strategy::RoundRobin,
        1 => Strategy::Geo,
        2 => Strategy::Failover {
            primary_region: "eu".into(),
        },
        _ => Strategy::Weighted {
            weights: vec![Weight {
                region: Some("us".into()),
                cluster: None,
                weight: 3,
            }],
        },
    };
    FleetService {
        namespace: format!("team-{}", s % 3),
        name: format!("svc-{s}"),
        ttl: 30,
        strategy,
        ports: if s.is_multiple_of(2) {
            vec![ServicePort {
                name: "http".into(),
                protocol: "TCP".into(),
                port: 80,
            }]
        } else {
            Vec::new()
        },
        endpoints: (0..3)
            .map(|c| Endpoint {
                cluster: format!("m{c}"),
                region: None,
                address: format!("100.{}.0.{}", 64 + c % 2, s + 1).parse().unwrap(),
                verdict: Verdict::Healthy,
                cluster_ip: Some(format!("10.96.0.{}", s + 1).parse().unwrap()),
            })
            .collect(),
    }
}

fn fleet(services: usize) -> Fleet {
    Fleet {
        clusters: (0..3)
            .map(|c| ClusterInfo {
                name: format!("m{c}"),
                region: Some(["eu", "us", "eu"][c].into()),
                networks: vec![format!("10.{c}.0.0/16").parse().unwrap()],
            })
            .collect(),
        services: (0..services).map(service).collect(),
    }
}

fn full(fleet: &Fleet) -> Snapshot {
    Snapshot::build(ZONE, fleet, &geo(), &options()).unwrap()
}

fn same(a: &Snapshot, b: &Snapshot) -> bool {
    a.names == b.names
        && a.soa_negative == b.soa_negative
        && a.glue == b.glue
        && a.local_nets == b.local_nets
        && a.serial == b.serial
        && a.zone == b.zone
}

fn builder() -> SnapshotBuilder {
    SnapshotBuilder::new(ZONE, geo(), options()).unwrap()
}

/// Names (as text) whose contents differ between two snapshots, or that only one has.
fn differing(a: &Snapshot, b: &Snapshot, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|name| {
            let wire = crate::wire::name_to_wire(name).unwrap();
            a.names.get(&wire) != b.names.get(&wire)
        })
        .cloned()
        .collect()
}

/// Every name a service of [`service`] can have, and the empty non-terminals.
fn candidate_names(services: usize) -> Vec<String> {
    let mut out = Vec::new();
    for s in 0..services {
        let (svc, ns) = (format!("svc-{s}"), format!("team-{}", s % 3));
        out.push(format!("{svc}.{ns}.{ZONE}"));
        for scope in ["eu", "us", "m0", "m1", "m2"] {
            out.push(format!("{svc}.{ns}.{scope}.{ZONE}"));
            out.push(format!("{ns}.{scope}.{ZONE}"));
            out.push(format!("{scope}.{ZONE}"));
        }
        out.push(format!("_http._tcp.{svc}.{ns}.{ZONE}"));
        out.push(format!("_tcp.{svc}.{ns}.{ZONE}"));
        out.push(format!("{ns}.{ZONE}"));
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn first_update_is_a_full_build_and_an_unchanged_fleet_builds_nothing() {
    let mut b = builder();
    let f = fleet(20);
    let first = b.update(&f).unwrap().expect("the first update builds");
    assert!(same(&first, &full(&f)));
    assert!(b.update(&f).unwrap().is_none());
}

#[test]
fn a_verdict_change_changes_exactly_that_services_names() {
    let mut b = builder();
    let mut f = fleet(40);
    let before = b.update(&f).unwrap().unwrap();
    f.services[17].endpoints[1].verdict = Verdict::Unhealthy;
    let after = b.update(&f).unwrap().expect("a change builds");
    assert!(
        same(&after, &full(&f)),
        "the update differs from a full build"
    );
    let changed = differing(&before, &after, &candidate_names(40));
    // svc-17 (Geo): the global name and its us region and m1 cluster names lose the endpoint
    assert_eq!(
        changed,
        [
            "svc-17.team-2.fleet.example",
            "svc-17.team-2.m1.fleet.example",
            "svc-17.team-2.us.fleet.example",
        ]
    );
    // its six names (global, 2 regional, 3 cluster) are redone, their shards copied
    assert!(
        after.names.shared_with(&before.names) >= 256 - 6,
        "only the shards of the service's names are copied"
    );
    assert_eq!(after.name_count(), before.name_count());
}

#[test]
fn removed_services_take_their_names_and_empty_parents_along() {
    let mut b = builder();
    let mut f = fleet(30);
    f.services.push(FleetService {
        namespace: "solo".into(),
        ..service(1)
    });
    let before = b.update(&f).unwrap().unwrap();
    assert!(before.contains("svc-1.solo.fleet.example"));
    assert!(before.contains("solo.eu.fleet.example"));
    let solo = f.services.pop().unwrap();
    let gone = f.services.remove(4); // svc-4 has a named port: SRV and _tcp names
    let after = b.update(&f).unwrap().unwrap();
    assert!(same(&after, &full(&f)));
    for name in [
        "svc-1.solo.fleet.example",
        "solo.fleet.example",
        "solo.eu.fleet.example",
        "svc-4.team-1.fleet.example",
        "svc-4.team-1.m2.fleet.example",
        "_http._tcp.svc-4.team-1.fleet.example",
        "_tcp.svc-4.team-1.fleet.example",
    ] {
        assert!(!after.contains(name), "{name} is still there");
    }
    assert!(after.contains("team-1.eu.fleet.example"), "others keep it");
    // and back again
    f.services.push(gone);
    f.services.push(solo);
    let back = b.update(&f).unwrap().unwrap();
    assert!(same(&back, &full(&f)));
    assert!(back.contains("_http._tcp.svc-4.team-1.fleet.example"));
    assert_eq!(back.name_count(), before.name_count());
}

#[test]
fn a_sequence_of_changes_always_equals_a_full_build() {
    let mut b = builder();
    let mut f = fleet(25);
    b.update(&f).unwrap();
    type Step = Box<dyn Fn(&mut Fleet)>;
    let steps: Vec<Step> = vec![
        Box::new(|f| f.services[3].endpoints.truncate(1)),
        Box::new(|f| f.services[3].endpoints[0].region = Some("us".into())),
        Box::new(|f| f.services[4].ports.clear()),
        Box::new(|f| f.services.push(service(40))),
        Box::new(|f| {
            for e in &mut f.services[8].endpoints {
                e.verdict = Verdict::Unhealthy; // fail open
            }
        }),
        Box::new(|f| f.services[14].strategy = Strategy::Geo),
        Box::new(|f| f.services[10].name = "renamed".into()),
        Box::new(|f| f.services.swap(0, 20)),
        Box::new(|f| f.services[11].endpoints[2].address = "2001:db8::1".parse().unwrap()),
        Box::new(|f| f.services[12].name = "Not_A_Label".into()),
        Box::new(|f| f.clusters[1].region = Some("ap".into())),
        Box::new(|f| f.services[13].ttl = 5),
        Box::new(|f| f.services.clear()),
    ];
    for (i, step) in steps.iter().enumerate() {
        step(&mut f);
        let updated = b.update(&f).unwrap();
        match updated {
            Some(snapshot) => assert!(same(&snapshot, &full(&f)), "step {i} differs"),
            None => panic!("step {i} built nothing"),
        }
    }
    assert_eq!(b.update(&f).unwrap().map(|s| s.name_count()), None);
    assert_eq!(
        full(&f).name_count(),
        2,
        "the apex and its name server's name"
    );
}

#[test]
fn services_that_collide_are_resolved_as_a_full_build_would() {
    let mut b = builder();
    let mut f = fleet(6);
    // same names, a different service: the first in the fleet keeps them
    f.services.push(FleetService {
        name: "SVC-2".into(),
        namespace: "team-2".into(),
        ..service(7)
    });
    f.services.push(service(2));
    let first = b.update(&f).unwrap().unwrap();
    assert!(same(&first, &full(&f)));
    f.services[2].endpoints[0].verdict = Verdict::Unhealthy;
    assert!(same(&b.update(&f).unwrap().unwrap(), &full(&f)));
    f.services.remove(2);
    assert!(same(&b.update(&f).unwrap().unwrap(), &full(&f)));
    f.services.truncate(6);
    assert!(same(&b.update(&f).unwrap().unwrap(), &full(&f)));
    f.services[1].endpoints[0].verdict = Verdict::Unhealthy;
    assert!(same(&b.update(&f).unwrap().unwrap(), &full(&f)));
}

#[test]
fn a_new_serial_is_carried_by_an_update() {
    let mut b = SnapshotBuilder::new(ZONE, geo(), SnapshotOptions::default()).unwrap();
    let mut f = fleet(3);
    let first = b.update(&f).unwrap().unwrap();
    f.services[0].ttl = 9;
    let next = b.update(&f).unwrap().unwrap();
    assert!(next.serial() >= first.serial());
    let apex = crate::wire::name_to_wire(ZONE).unwrap();
    assert!(matches!(next.names.get(&apex), Some(Node::Static(_))));
}

#[test]
fn a_fleet_given_by_value_builds_the_same() {
    let mut b = builder();
    let mut f = fleet(12);
    let first = b.update_owned(f.clone()).unwrap().unwrap();
    assert!(same(&first, &full(&f)));
    f.services[4].endpoints[0].verdict = Verdict::Unhealthy;
    assert!(same(
        &b.update_owned(f.clone()).unwrap().unwrap(),
        &full(&f)
    ));
    f.clusters.pop(); // a full build again
    assert!(same(
        &b.update_owned(f.clone()).unwrap().unwrap(),
        &full(&f)
    ));
    assert!(b.update(&f).unwrap().is_none());
}
