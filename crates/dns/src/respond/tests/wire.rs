//! The wire: truncation and TCP, malformed queries and other opcodes, IPv6, ANY, classes, EDNS versions.

use super::*;

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
    assert_eq!(outcome.rcode, rcode::FORMERR);
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
