//! Answer strategies and where the client is: Failover, Geo, Weighted, local-first, the ECS scope.

use super::*;

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
