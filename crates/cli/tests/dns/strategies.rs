//! The GlobalService's strategies: Failover, Weighted, Geo (by EDNS Client Subnet), and
//! local-first answers for queries from a member's own networks.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::kdig::must;
use crate::{Fleet, ALL, ZONE};

/// Failover: only the primary region while one of its endpoints is up, the others when not.
pub(crate) fn failover(f: &mut Fleet) {
    f.strategy(r#"{"type":"Failover","primaryRegion":"ap"}"#);
    f.wait_ips("web.demo", &["127.0.0.13"], Duration::from_secs(15));
    f.backends[2].kill();
    f.wait_ips(
        "web.demo",
        &["127.0.0.11", "127.0.0.12"],
        Duration::from_secs(15),
    );
    f.backends[2].restart();
    f.wait_ips("web.demo", &["127.0.0.13"], Duration::from_secs(15));
}

/// Weighted: one address per answer, as often as its weight says.
pub(crate) fn weighted(f: &Fleet) {
    f.strategy(
        r#"{"type":"Weighted","weights":[{"cluster":"member-1","weight":6},{"cluster":"member-2","weight":3},{"cluster":"member-3","weight":1}]}"#,
    );
    // Wait for the new strategy: one address per answer.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while f.ips("web.demo").len() != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "no Weighted answers: {}",
            f.status()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // 1,000 answers: a share off by 0.06 is about four standard deviations, so a fair
    // server fails this about once in ten thousand runs and a biased one does not pass.
    let n = 1000;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..n {
        let ips = f.ips("web.demo");
        assert_eq!(ips.len(), 1, "Weighted answers one address: {ips:?}");
        *counts.entry(ips[0].clone()).or_default() += 1;
    }
    for (ip, want) in [
        ("127.0.0.11", 0.6),
        ("127.0.0.12", 0.3),
        ("127.0.0.13", 0.1),
    ] {
        let share = counts.get(ip).copied().unwrap_or(0) as f64 / n as f64;
        assert!(
            (share - want).abs() < 0.06,
            "{ip} got {share:.2} of the answers, its weight is {want}: {counts:?}"
        );
    }
}

/// Geo: the client's region (its EDNS Client Subnet, mapped by the geo file) or the nearest one
/// with a healthy endpoint.
pub(crate) fn geo(f: &Fleet) {
    f.strategy(r#"{"type":"Geo"}"#);
    let name = format!("web.demo.{ZONE}");
    let ask = |subnet: &str| must(f.dns, &name, "A", &[&format!("+subnet={subnet}")]);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while ask("10.3.0.0/24").ips() != ["127.0.0.13"] {
        assert!(
            std::time::Instant::now() < deadline,
            "no Geo answers: {}",
            f.status()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let eu = ask("10.1.2.0/24");
    assert_eq!(eu.ips(), ["127.0.0.11", "127.0.0.12"], "{}", eu.text);
    assert!(
        eu.text.contains("CLIENT-SUBNET: 10.1.2.0/24/"),
        "the client subnet is echoed with a scope: {}",
        eu.text
    );
    // us has no endpoint: eu is nearer to it than ap.
    let us = ask("10.9.0.0/24");
    assert_eq!(us.ips(), ["127.0.0.11", "127.0.0.12"], "{}", us.text);
}

/// Local-first: a query from member-2's networks (`agent --networks 10.2.0.0/16`) gets
/// member-2's own ClusterIP first (the real one its kube-apiserver allocated, fed back by its
/// agent), then the other members' endpoints.
pub(crate) fn local_first(f: &Fleet) {
    f.strategy(r#"{"type":"RoundRobin"}"#);
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
    let (ok, cluster_ip, err) = crate::common::fleet::kc(
        &f.member("member-2"),
        &[
            "get",
            "svc",
            "web",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ],
    );
    assert!(ok, "{err}");
    let cluster_ip = cluster_ip.trim().to_owned();
    assert!(
        cluster_ip.parse::<std::net::Ipv4Addr>().is_ok(),
        "member-2 allocated a ClusterIP: {cluster_ip:?}"
    );
    let ask = || {
        must(
            f.dns,
            &format!("web.demo.{ZONE}"),
            "A",
            &["+subnet=10.2.0.0/24"],
        )
    };
    // The ClusterIP comes with the agent's status feedback, possibly after the ingress did.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let reply = ask();
        if reply.data("A").first() == Some(&cluster_ip) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "member-2's ClusterIP {cluster_ip} first: {}",
            reply.text
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for _ in 0..5 {
        let reply = ask();
        let got = reply.data("A");
        assert_eq!(
            got.first(),
            Some(&cluster_ip),
            "member-2's ClusterIP first: {}",
            reply.text
        );
        let mut others = got[1..].to_vec();
        others.sort();
        assert_eq!(
            others,
            ["127.0.0.11", "127.0.0.13"],
            "then the others' endpoints: {}",
            reply.text
        );
    }
    // Elsewhere, the rotation moves the first address.
    let firsts: std::collections::BTreeSet<String> = (0..6)
        .filter_map(|_| {
            must(f.dns, &format!("web.demo.{ZONE}"), "A", &[])
                .data("A")
                .first()
                .cloned()
        })
        .collect();
    assert!(firsts.len() > 1, "RoundRobin rotates: {firsts:?}");
}
