//! Answers checked through hickory-proto: queries built and responses read by a real DNS library.

use std::net::IpAddr;

use hickory_proto::op::{Edns, Message, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::opt::{ClientSubnet, EdnsCode, EdnsOption};
use hickory_proto::rr::{Name, RData, RecordType};

use super::{respond, Worker};
use crate::fleet::{
    ClusterInfo, Endpoint, Fleet, FleetService, ServicePort, Strategy, Verdict, Weight,
};
use crate::geo::GeoTable;
use crate::snapshot::{Snapshot, SnapshotOptions};

const ZONE: &str = "fleet.example";
const OUTSIDE: &str = "203.0.113.9";

fn ep(cluster: &str, region: &str, address: &str, verdict: Verdict) -> Endpoint {
    Endpoint {
        cluster: cluster.into(),
        region: Some(region.into()),
        address: address.parse().unwrap(),
        verdict,
        cluster_ip: None,
    }
}

fn service(name: &str, strategy: Strategy, endpoints: Vec<Endpoint>) -> FleetService {
    FleetService {
        namespace: "shop".into(),
        name: name.into(),
        ttl: 30,
        strategy,
        ports: vec![
            ServicePort {
                name: "http".into(),
                protocol: "TCP".into(),
                port: 80,
            },
            ServicePort {
                name: String::new(),
                protocol: "TCP".into(),
                port: 443,
            },
        ],
        endpoints,
    }
}

fn clusters() -> Vec<ClusterInfo> {
    vec![
        ClusterInfo {
            name: "a".into(),
            region: Some("eu".into()),
            networks: vec!["10.1.0.0/16".parse().unwrap()],
        },
        ClusterInfo {
            name: "b".into(),
            region: Some("eu".into()),
            networks: vec![],
        },
        ClusterInfo {
            name: "c".into(),
            region: Some("us".into()),
            networks: vec![],
        },
    ]
}

fn three(verdicts: [Verdict; 3]) -> Vec<Endpoint> {
    let mut a = ep("a", "eu", "192.0.2.1", verdicts[0]);
    a.cluster_ip = Some("10.96.0.1".parse().unwrap());
    vec![
        a,
        ep("b", "eu", "192.0.2.2", verdicts[1]),
        ep("c", "us", "198.51.100.3", verdicts[2]),
    ]
}

const HEALTHY: [Verdict; 3] = [Verdict::Healthy, Verdict::Unknown, Verdict::Healthy];

fn snapshot(services: Vec<FleetService>, geo: &str) -> Snapshot {
    let fleet = Fleet {
        clusters: clusters(),
        services,
    };
    let options = SnapshotOptions {
        ns_addresses: vec!["192.0.2.53".parse().unwrap()],
        ..SnapshotOptions::default()
    };
    Snapshot::build(ZONE, &fleet, &GeoTable::parse(geo).unwrap(), &options).unwrap()
}

fn query(name: &str, rtype: RecordType, edns: Option<Edns>) -> Message {
    let mut message = Message::query();
    message.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    message.metadata.recursion_desired = true;
    if let Some(edns) = edns {
        message.set_edns(edns);
    }
    message
}

fn send(snapshot: &Snapshot, message: &Message, source: &str, tcp: bool) -> Message {
    let packet = message.to_vec().unwrap();
    let mut worker = Worker::new();
    respond(snapshot, &packet, source.parse().unwrap(), tcp, &mut worker).expect("an answer");
    let response = Message::from_vec(&worker.out).unwrap();
    assert_eq!(response.metadata.id, message.metadata.id);
    assert!(!response.metadata.recursion_available);
    response
}

fn ask(snapshot: &Snapshot, name: &str, rtype: RecordType, source: &str) -> Message {
    send(snapshot, &query(name, rtype, None), source, false)
}

fn ecs(addr: &str, prefix: u8) -> Edns {
    let mut edns = Edns::new();
    edns.set_max_payload(1232);
    let subnet = ClientSubnet::new(addr.parse().unwrap(), prefix, 0);
    edns.options_mut().insert(EdnsOption::Subnet(subnet));
    edns
}

fn addresses(message: &Message) -> Vec<String> {
    message
        .answers
        .iter()
        .filter_map(|r| r.data.ip_addr())
        .map(|ip: IpAddr| ip.to_string())
        .collect()
}

fn echoed_scope(message: &Message) -> u8 {
    match message
        .edns
        .as_ref()
        .and_then(|e| e.option(EdnsCode::Subnet))
    {
        Some(EdnsOption::Subnet(subnet)) => subnet.scope_prefix(),
        other => panic!("no ECS echoed: {other:?}"),
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn round_robin_answers_every_healthy_endpoint_in_rotating_order() {
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    let mut firsts = std::collections::HashSet::new();
    let packet = query("web.shop.fleet.example.", RecordType::A, None)
        .to_vec()
        .unwrap();
    let mut worker = Worker::new();
    for _ in 0..6 {
        respond(&snap, &packet, OUTSIDE.parse().unwrap(), false, &mut worker).unwrap();
        let response = Message::from_vec(&worker.out).unwrap();
        assert_eq!(response.metadata.response_code, ResponseCode::NoError);
        assert!(response.metadata.authoritative);
        assert!(response.answers.iter().all(|r| r.ttl == 30));
        let got = addresses(&response);
        assert_eq!(
            sorted(got.clone()),
            ["192.0.2.1", "192.0.2.2", "198.51.100.3"]
        );
        firsts.insert(got[0].clone());
    }
    assert_eq!(firsts.len(), 3, "each endpoint comes first in turn");
}

#[test]
fn unhealthy_endpoints_leave_and_all_return_when_all_fail_open() {
    use Verdict::*;
    let snap = snapshot(
        vec![service(
            "web",
            Strategy::RoundRobin,
            three([Healthy, Unhealthy, Healthy]),
        )],
        "",
    );
    let got = ask(&snap, "web.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(sorted(addresses(&got)), ["192.0.2.1", "198.51.100.3"]);
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three([Unhealthy; 3]))],
        "",
    );
    let got = ask(&snap, "web.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(addresses(&got).len(), 3, "fail open answers every endpoint");
}

#[test]
fn names_are_case_insensitive_and_the_question_keeps_its_case() {
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    let response = ask(&snap, "WeB.ShOp.FLEET.example.", RecordType::A, OUTSIDE);
    assert_eq!(addresses(&response).len(), 3);
    assert_eq!(
        response.queries[0].name().to_ascii(),
        "WeB.ShOp.FLEET.example."
    );
    // answers point at the question name, so they carry its case too
    assert_eq!(
        response.answers[0].name.to_ascii(),
        "WeB.ShOp.FLEET.example."
    );
}

#[test]
fn nxdomain_nodata_and_refused() {
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    let negative = |response: &Message, code: ResponseCode| {
        assert_eq!(response.metadata.response_code, code);
        assert!(response.metadata.authoritative);
        assert!(response.answers.is_empty());
        let soa = &response.authorities[0];
        assert_eq!(soa.record_type(), RecordType::SOA);
        assert_eq!(soa.name.to_ascii(), "fleet.example.");
        assert_eq!(soa.ttl, 30);
    };
    negative(
        &ask(&snap, "nope.shop.fleet.example.", RecordType::A, OUTSIDE),
        ResponseCode::NXDomain,
    );
    negative(
        &ask(&snap, "x.web.shop.fleet.example.", RecordType::A, OUTSIDE),
        ResponseCode::NXDomain,
    );
    // empty non-terminals exist
    negative(
        &ask(&snap, "shop.fleet.example.", RecordType::A, OUTSIDE),
        ResponseCode::NoError,
    );
    negative(
        &ask(
            &snap,
            "_tcp.web.shop.fleet.example.",
            RecordType::SRV,
            OUTSIDE,
        ),
        ResponseCode::NoError,
    );
    negative(
        &ask(&snap, "eu.fleet.example.", RecordType::A, OUTSIDE),
        ResponseCode::NoError,
    );
    // the name has no records of the type
    negative(
        &ask(&snap, "web.shop.fleet.example.", RecordType::TXT, OUTSIDE),
        ResponseCode::NoError,
    );
    negative(
        &ask(&snap, "web.shop.fleet.example.", RecordType::AAAA, OUTSIDE),
        ResponseCode::NoError,
    );

    for name in ["web.shop.example.org.", "example.", "xfleet.example."] {
        let refused = ask(&snap, name, RecordType::A, OUTSIDE);
        assert_eq!(
            refused.metadata.response_code,
            ResponseCode::Refused,
            "{name}"
        );
        assert!(!refused.metadata.authoritative);
    }
}

#[test]
fn apex_serves_soa_ns_and_glue() {
    let snap = snapshot(vec![], "");
    let soa = ask(&snap, "fleet.example.", RecordType::SOA, OUTSIDE);
    let RData::SOA(record) = &soa.answers[0].data else {
        panic!("{soa:?}")
    };
    assert_eq!(record.mname.to_ascii(), "ns1.fleet.example.");
    assert_eq!(record.minimum, 30);
    let ns = ask(&snap, "fleet.example.", RecordType::NS, OUTSIDE);
    let RData::NS(target) = &ns.answers[0].data else {
        panic!("{ns:?}")
    };
    assert_eq!(target.0.to_ascii(), "ns1.fleet.example.");
    assert_eq!(ns.additionals.len(), 1, "glue: {ns:?}");
    assert_eq!(ns.additionals[0].name.to_ascii(), "ns1.fleet.example.");
    assert_eq!(
        ns.additionals[0].data.ip_addr(),
        Some("192.0.2.53".parse().unwrap())
    );
    let glue = ask(&snap, "ns1.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(addresses(&glue), ["192.0.2.53"]);
    let empty = Snapshot::empty("other.example").unwrap();
    let soa = ask(&empty, "other.example.", RecordType::SOA, OUTSIDE);
    assert_eq!(soa.answers.len(), 1);
}

#[test]
fn regional_and_cluster_names_cname_outward_when_nothing_is_healthy() {
    use Verdict::*;
    let snap = snapshot(
        vec![service(
            "web",
            Strategy::RoundRobin,
            three([Healthy, Healthy, Unhealthy]),
        )],
        "",
    );
    let eu = ask(&snap, "web.shop.eu.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(sorted(addresses(&eu)), ["192.0.2.1", "192.0.2.2"]);
    let a = ask(&snap, "web.shop.a.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(addresses(&a), ["192.0.2.1"]);

    // cluster c (region us) is down: c → us → global
    let c = ask(&snap, "web.shop.c.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(c.metadata.response_code, ResponseCode::NoError);
    let cnames: Vec<(String, String)> = c
        .answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::CNAME(target) => Some((r.name.to_ascii(), target.0.to_ascii())),
            _ => None,
        })
        .collect();
    assert_eq!(
        cnames,
        [
            (
                "web.shop.c.fleet.example.".into(),
                "web.shop.us.fleet.example.".into()
            ),
            (
                "web.shop.us.fleet.example.".into(),
                "web.shop.fleet.example.".into()
            ),
        ]
    );
    assert_eq!(sorted(addresses(&c)), ["192.0.2.1", "192.0.2.2"]);
    assert!(c
        .answers
        .iter()
        .filter(|r| r.data.ip_addr().is_some())
        .all(|r| r.name.to_ascii() == "web.shop.fleet.example."));
    // a type the target lacks: the chain, then NODATA's SOA
    let aaaa = ask(
        &snap,
        "web.shop.us.fleet.example.",
        RecordType::AAAA,
        OUTSIDE,
    );
    assert_eq!(aaaa.answers.len(), 1);
    assert_eq!(aaaa.authorities[0].record_type(), RecordType::SOA);
}

#[test]
fn srv_for_named_ports_only() {
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    let srv = ask(
        &snap,
        "_http._tcp.web.shop.fleet.example.",
        RecordType::SRV,
        OUTSIDE,
    );
    let RData::SRV(record) = &srv.answers[0].data else {
        panic!("{srv:?}")
    };
    assert_eq!(record.port, 80);
    assert_eq!(record.target.to_ascii(), "web.shop.fleet.example.");
    let unnamed = ask(
        &snap,
        "_443._tcp.web.shop.fleet.example.",
        RecordType::SRV,
        OUTSIDE,
    );
    assert_eq!(unnamed.metadata.response_code, ResponseCode::NXDomain);
}

#[test]
fn failover_prefers_the_primary_region_while_it_is_healthy() {
    use Verdict::*;
    let failover = || Strategy::Failover {
        primary_region: "us".into(),
    };
    let snap = snapshot(vec![service("web", failover(), three(HEALTHY))], "");
    assert_eq!(
        addresses(&ask(
            &snap,
            "web.shop.fleet.example.",
            RecordType::A,
            OUTSIDE
        )),
        ["198.51.100.3"]
    );
    let snap = snapshot(
        vec![service(
            "web",
            failover(),
            three([Healthy, Healthy, Unhealthy]),
        )],
        "",
    );
    let got = ask(&snap, "web.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(sorted(addresses(&got)), ["192.0.2.1", "192.0.2.2"]);
}

const GEO: &str = "
    172.16.0.0/12 us
    172.20.0.0/16 ap
    100.64.0.0/10 eu
    distance ap us 100
    distance ap eu 200
    distance eu us 80
";

#[test]
fn geo_answers_the_nearest_region_with_healthy_endpoints() {
    use Verdict::*;
    let snap = snapshot(vec![service("web", Strategy::Geo, three(HEALTHY))], GEO);
    let from_us = ask(
        &snap,
        "web.shop.fleet.example.",
        RecordType::A,
        "172.17.0.1",
    );
    assert_eq!(addresses(&from_us), ["198.51.100.3"]);
    let from_eu = ask(
        &snap,
        "web.shop.fleet.example.",
        RecordType::A,
        "100.64.1.1",
    );
    assert_eq!(sorted(addresses(&from_eu)), ["192.0.2.1", "192.0.2.2"]);
    // ap has no endpoints: us is nearer than eu
    let via_ecs = send(
        &snap,
        &query(
            "web.shop.fleet.example.",
            RecordType::A,
            Some(ecs("172.20.5.0", 24)),
        ),
        OUTSIDE,
        false,
    );
    assert_eq!(addresses(&via_ecs), ["198.51.100.3"]);
    assert_eq!(echoed_scope(&via_ecs), 16, "the geo line that matched");
    // unknown client: everything
    let unknown = ask(&snap, "web.shop.fleet.example.", RecordType::A, OUTSIDE);
    assert_eq!(addresses(&unknown).len(), 3);
    // us down: falls outward to eu
    let snap = snapshot(
        vec![service(
            "web",
            Strategy::Geo,
            three([Healthy, Healthy, Unhealthy]),
        )],
        GEO,
    );
    let from_us = ask(
        &snap,
        "web.shop.fleet.example.",
        RecordType::A,
        "172.17.0.1",
    );
    assert_eq!(sorted(addresses(&from_us)), ["192.0.2.1", "192.0.2.2"]);
}

#[test]
fn weighted_lands_within_five_percent_over_ten_thousand_queries() {
    let weights = vec![
        Weight {
            region: Some("eu".into()),
            cluster: None,
            weight: 3,
        },
        Weight {
            region: None,
            cluster: Some("c".into()),
            weight: 1,
        },
    ];
    let snap = snapshot(
        vec![service(
            "web",
            Strategy::Weighted { weights },
            three(HEALTHY),
        )],
        "",
    );
    let message = query("web.shop.fleet.example.", RecordType::A, None);
    let packet = message.to_vec().unwrap();
    // fixed seed: 25% ± 5% is about ±3σ at 10,000 draws, a random seed would fail now and then
    let mut worker = Worker::seeded(0x5eed_1234_abcd);
    let mut us = 0;
    for _ in 0..10_000 {
        respond(&snap, &packet, OUTSIDE.parse().unwrap(), false, &mut worker).unwrap();
        let response = Message::from_vec(&worker.out).unwrap();
        let got = addresses(&response);
        if got == ["198.51.100.3"] {
            us += 1;
        } else {
            assert_eq!(sorted(got), ["192.0.2.1", "192.0.2.2"]);
        }
    }
    let share = us as f64 / 10_000.0;
    assert!(
        (0.2375..=0.2625).contains(&share),
        "cluster c answered {share}, want 25% ± 5%"
    );
}

#[test]
fn local_first_answers_the_members_own_cluster_ip_first() {
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    for _ in 0..4 {
        let got = addresses(&ask(
            &snap,
            "web.shop.fleet.example.",
            RecordType::A,
            "10.1.2.3",
        ));
        assert_eq!(got[0], "10.96.0.1");
        assert_eq!(sorted(got[1..].to_vec()), ["192.0.2.2", "198.51.100.3"]);
    }
    // through ECS, with the member network's length as scope
    let response = send(
        &snap,
        &query(
            "web.shop.fleet.example.",
            RecordType::A,
            Some(ecs("10.1.7.0", 24)),
        ),
        OUTSIDE,
        false,
    );
    assert_eq!(addresses(&response)[0], "10.96.0.1");
    assert_eq!(echoed_scope(&response), 16);
    // local-first holds for every strategy
    let failover = Strategy::Failover {
        primary_region: "us".into(),
    };
    let snap = snapshot(vec![service("web", failover, three(HEALTHY))], "");
    let got = addresses(&ask(
        &snap,
        "web.shop.fleet.example.",
        RecordType::A,
        "10.1.2.3",
    ));
    assert_eq!(got, ["10.96.0.1", "198.51.100.3"]);
}

#[test]
fn ecs_scope_is_zero_when_the_answer_does_not_depend_on_the_client() {
    let snap = snapshot(
        vec![service("web", Strategy::RoundRobin, three(HEALTHY))],
        "",
    );
    let srv = send(
        &snap,
        &query(
            "_http._tcp.web.shop.fleet.example.",
            RecordType::SRV,
            Some(ecs("10.9.0.0", 24)),
        ),
        OUTSIDE,
        false,
    );
    assert_eq!(echoed_scope(&srv), 0);
    // a client outside every network: the answer holds for the subnet sent
    let outside = send(
        &snap,
        &query(
            "web.shop.fleet.example.",
            RecordType::A,
            Some(ecs("10.9.0.0", 24)),
        ),
        OUTSIDE,
        false,
    );
    // 10.9 and 10.1 share 12 bits: the answer holds for the /13 that leaves out 10.1.0.0/16
    assert_eq!(echoed_scope(&outside), 13);
    assert_eq!(outside.edns.as_ref().unwrap().max_payload(), 1232);
}

#[test]
fn large_answers_truncate_over_udp_and_come_whole_over_tcp() {
    let endpoints: Vec<Endpoint> = (1..=60)
        .map(|i| ep("c", "us", &format!("198.51.100.{i}"), Verdict::Healthy))
        .collect();
    let snap = snapshot(vec![service("big", Strategy::RoundRobin, endpoints)], "");
    let plain = query("big.shop.fleet.example.", RecordType::A, None);
    let udp = send(&snap, &plain, OUTSIDE, false);
    assert!(udp.metadata.truncation);
    assert!(udp.answers.is_empty());
    let tcp = send(&snap, &plain, OUTSIDE, true);
    assert!(!tcp.metadata.truncation);
    assert_eq!(tcp.answers.len(), 60);
    // 60 × 16 bytes fit in EDNS's 1232
    let mut edns = Edns::new();
    edns.set_max_payload(1232);
    let big = send(
        &snap,
        &query("big.shop.fleet.example.", RecordType::A, Some(edns)),
        OUTSIDE,
        false,
    );
    assert!(!big.metadata.truncation);
    assert_eq!(big.answers.len(), 60);
}

#[test]
fn malformed_and_other_opcodes() {
    let snap = snapshot(vec![], "");
    let mut worker = Worker::new();
    // a header announcing a question that is not there
    let runt = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    let outcome = respond(&snap, &runt, OUTSIDE.parse().unwrap(), false, &mut worker).unwrap();
    assert_eq!(outcome.rcode, super::rcode::FORMERR);
    let response = Message::from_vec(&worker.out).unwrap();
    assert_eq!(response.metadata.id, 0x1234);
    assert_eq!(response.metadata.response_code, ResponseCode::FormErr);

    let mut status = query("fleet.example.", RecordType::SOA, None);
    status.metadata.op_code = OpCode::Status;
    let response = send(&snap, &status, OUTSIDE, false);
    assert_eq!(response.metadata.response_code, ResponseCode::NotImp);
    // too short for an ID, or a response: dropped
    assert!(respond(
        &snap,
        &[1, 2, 3],
        OUTSIDE.parse().unwrap(),
        false,
        &mut worker
    )
    .is_none());
}

#[test]
fn ipv6_any_other_classes_and_edns_versions() {
    let mut endpoints = three(HEALTHY);
    endpoints.push(ep("c", "us", "2001:db8::3", Verdict::Healthy));
    let snap = snapshot(vec![service("web", Strategy::RoundRobin, endpoints)], "");
    let aaaa = ask(&snap, "web.shop.fleet.example.", RecordType::AAAA, OUTSIDE);
    assert_eq!(addresses(&aaaa), ["2001:db8::3"]);
    let any = ask(&snap, "web.shop.fleet.example.", RecordType::ANY, OUTSIDE);
    assert_eq!(addresses(&any).len(), 4);

    let mut chaos = query("web.shop.fleet.example.", RecordType::TXT, None);
    chaos.queries[0].set_query_class(hickory_proto::rr::DNSClass::CH);
    assert_eq!(
        send(&snap, &chaos, OUTSIDE, false).metadata.response_code,
        ResponseCode::Refused
    );
    let axfr = ask(&snap, "fleet.example.", RecordType::AXFR, OUTSIDE);
    assert_eq!(axfr.metadata.response_code, ResponseCode::Refused);

    let mut edns = Edns::new();
    edns.set_version(1);
    let response = send(
        &snap,
        &query("web.shop.fleet.example.", RecordType::A, Some(edns)),
        OUTSIDE,
        false,
    );
    // 16 is BADVERS with an OPT (hickory names the shared code BADSIG)
    assert_eq!(u16::from(response.metadata.response_code), 16);
    assert!(response.answers.is_empty());
}
