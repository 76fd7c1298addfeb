use std::collections::{BTreeMap, BTreeSet};

use super::*;

type Records = BTreeMap<String, BTreeSet<IpAddr>>;

/// The A records of a zone file as written by `zone_file`: `$ORIGIN`, then `name A address`
/// lines relative to it (the apex's SOA/NS and the name server's address left out).
fn zone_records(text: &str) -> Records {
    let mut origin = String::new();
    let mut out = Records::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["$ORIGIN", o] => origin = o.trim_end_matches('.').to_string(),
            ["ns", "A", _] | ["@", ..] | ["$TTL", _] => {}
            [name, "A", ip] => {
                assert!(!origin.is_empty(), "a record before $ORIGIN: {line}");
                out.entry(format!("{name}.{origin}"))
                    .or_default()
                    .insert(ip.parse().unwrap());
            }
            _ => panic!("unexpected zone file line {line:?}"),
        }
    }
    out
}

/// The A records a fleet calls for when every endpoint is healthy (round robin answers them
/// all): the global name, each region's name and each cluster's name of every service.
fn fleet_records(fleet: &Fleet, zone: &str) -> Records {
    let mut out = Records::new();
    for svc in &fleet.services {
        let base = format!("{}.{}", svc.name, svc.namespace);
        for e in &svc.endpoints {
            assert!(matches!(e.verdict, Verdict::Healthy), "{e:?}");
            let region = e.region.as_deref().expect("every endpoint has a region");
            for name in [
                format!("{base}.{zone}"),
                format!("{base}.{region}.{zone}"),
                format!("{base}.{}.{zone}", e.cluster),
            ] {
                out.entry(name).or_default().insert(e.address);
            }
        }
    }
    out
}

#[test]
fn the_zone_file_and_the_fleet_describe_the_same_records() {
    let g = Generated::new(250, 3);
    let zone = zone_records(&g.zone_file(ZONE));
    // Through JSON and back, as `flotilla dns --fleet-file` reads it.
    let json = serde_json::to_string(&g.fleet(&[])).unwrap();
    let fleet: Fleet = serde_json::from_str(&json).unwrap();
    let expected = fleet_records(&fleet, ZONE);
    assert_eq!(zone, expected);
    // 250 global names of 3 addresses, 750 regional and 750 cluster names of one each.
    assert_eq!(zone.len(), 250 * 7);
    assert_eq!(zone.values().map(BTreeSet::len).sum::<usize>(), 250 * 9);
    let all: BTreeSet<IpAddr> = zone.values().flatten().copied().collect();
    assert_eq!(all.len(), 750, "every endpoint has its own address");
    assert_eq!(
        zone["svc-00012.team-2.fleet.bench.test"],
        ["10.0.0.13", "10.16.0.13", "10.32.0.13"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect()
    );
    assert_eq!(
        zone["svc-00012.team-2.us-east.fleet.bench.test"],
        BTreeSet::from(["10.16.0.13".parse().unwrap()])
    );
    let clusters: Vec<_> = fleet.clusters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(clusters, ["m1", "m2", "m3"]);
}

#[test]
fn an_unhealthy_endpoint_is_marked_in_the_fleet_only() {
    let g = Generated::new(5, 3);
    let fleet = g.fleet(&[(3, 1)]);
    for (s, svc) in fleet.services.iter().enumerate() {
        for (c, e) in svc.endpoints.iter().enumerate() {
            let unhealthy = matches!(e.verdict, Verdict::Unhealthy);
            assert_eq!(unhealthy, (s, c) == (3, 1), "{s} {c}");
        }
    }
}

#[test]
fn the_queries_ask_every_global_name_once_in_a_fixed_shuffled_order() {
    let g = Generated::new(1000, 3);
    let zone = zone_records(&g.zone_file(ZONE));
    let text = g.queries(ZONE);
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix(" A").expect("an A query"))
        .collect();
    assert_eq!(names.len(), 1000);
    assert_eq!(names.iter().collect::<BTreeSet<_>>().len(), 1000);
    for n in &names {
        assert_eq!(zone[*n].len(), 3, "{n} is a global name");
    }
    let in_order: Vec<String> = (0..1000).map(|s| g.global_name(s, ZONE)).collect();
    assert_ne!(names, in_order, "shuffled");
    assert_eq!(text, g.queries(ZONE), "the same every run");
}

#[test]
fn knot_conf_names_the_port_zone_file_and_workers() {
    let conf = knot_conf(
        Path::new("/tmp/x"),
        5300,
        ZONE,
        Path::new("/tmp/x/z.zone"),
        2,
    );
    assert!(conf.contains("listen: 127.0.0.1@5300\n"), "{conf}");
    assert!(conf.contains("background-workers: 2\n"), "{conf}");
    assert!(conf.contains("- domain: fleet.bench.test\n"), "{conf}");
    assert!(conf.contains("file: \"/tmp/x/z.zone\"\n"), "{conf}");
    assert!(!conf.contains("udp-workers"), "knotd's default");
}
