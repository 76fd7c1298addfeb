//! Names, rcodes and record types: round robin, fail open, case, NXDOMAIN/NODATA/REFUSED, the apex, CNAME outward, SRV.

use super::*;

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
