//! Quorum health voting: each agent votes from its own probe source; an endpoint leaves only
//! when a strict majority of fresh voters sees it down, and comes back when they see it up.

use std::time::{Duration, Instant};

use crate::common::fleet::eventually;
use crate::kdig::must;
use crate::{Fleet, ALL, PUSH, TTL, ZONE};

/// The GlobalService's endpoints as (address, votesUp, votesDown, verdict), sorted.
fn votes(f: &Fleet) -> Vec<(String, u64, u64, String)> {
    votes_of(f, "web")
}

/// The endpoints of the GlobalService `demo/name` as (address, votesUp, votesDown, verdict), sorted.
pub(crate) fn votes_of(f: &Fleet, name: &str) -> Vec<(String, u64, u64, String)> {
    let out = f
        .hub
        .kubectl(&["get", "globalservice", name, "-n", "demo", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let mut list: Vec<_> = v["status"]["endpoints"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|e| {
            (
                e["address"].as_str().unwrap_or_default().to_owned(),
                e["votesUp"].as_u64().unwrap_or(0),
                e["votesDown"].as_u64().unwrap_or(0),
                e["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    list.sort();
    list
}

fn vote_of(f: &Fleet, address: &str) -> Option<(u64, u64, String)> {
    votes(f)
        .into_iter()
        .find(|(a, ..)| a == address)
        .map(|(_, up, down, verdict)| (up, down, verdict))
}

/// Every voter's report reaches the GlobalService's status: three up votes per endpoint.
pub(crate) fn status_shows_the_votes(f: &Fleet) {
    eventually(
        &f.hub,
        Duration::from_secs(30),
        "three up votes for each endpoint",
        || {
            let v = votes(f);
            v.len() == 3
                && v.iter()
                    .all(|(_, up, down, verdict)| *up == 3 && *down == 0 && verdict == "Healthy")
        },
    );
    let out = f.hub.ok(&["get", "globalservice", "web", "-n", "demo"]);
    assert!(out.contains(&format!("web.demo.{ZONE}")), "{out}");
    for (cluster, ..) in crate::MEMBERS {
        let report = f.hub.ok(&[
            "get",
            "healthreport",
            "endpoints",
            "-n",
            &format!("flotilla-es-{cluster}"),
            "-o",
            "jsonpath={.status.targets}/{.status.down}",
        ]);
        assert_eq!(report.trim(), "3/0", "{cluster}'s HealthReport");
    }
}

/// The push member's votes are the hub's: no agent runs for it, yet its HealthReport is
/// written, from the hub's `--probe-source` (an endpoint answering 503 to that address only is
/// down in that report alone), and its vote counts in the GlobalService's status.
pub(crate) fn the_hub_votes_for_its_push_member(f: &Fleet) {
    let mode = f
        .hub
        .ok(&["get", "cluster", PUSH, "-o", "jsonpath={.spec.syncMode}"]);
    assert_eq!(mode.trim(), "Push", "{PUSH} is joined in push mode");
    let (_, _, hub_source, _) = crate::MEMBERS[2];
    let report = |cluster: &str| {
        f.hub.ok(&[
            "get",
            "healthreport",
            "endpoints",
            "-n",
            &format!("flotilla-es-{cluster}"),
            "-o",
            "jsonpath={.status.down}/{.status.results[?(@.address==\"127.0.0.11\")].up}",
        ])
    };
    f.backends[0].fail_for(&[hub_source]);
    eventually(
        &f.hub,
        Duration::from_secs(15),
        "the hub's report for the push member sees 127.0.0.11 down",
        || report(PUSH).trim() == "1/false",
    );
    // Only the hub's probes get 503: the agents' reports still see it up.
    for (cluster, ..) in &crate::MEMBERS[..2] {
        assert_eq!(report(cluster).trim(), "0/true", "{cluster}'s HealthReport");
    }
    eventually(
        &f.hub,
        Duration::from_secs(15),
        "the hub's down vote in the GlobalService",
        || vote_of(f, "127.0.0.11").is_some_and(|(up, down, _)| up == 2 && down == 1),
    );
    assert_eq!(f.ips("web.demo"), ALL, "one vote of three: {}", f.status());
    f.backends[0].fail_for(&[]);
    eventually(
        &f.hub,
        Duration::from_secs(15),
        "the hub sees 127.0.0.11 up again",
        || {
            report(PUSH).trim() == "0/true"
                && vote_of(f, "127.0.0.11").is_some_and(|(up, down, _)| up == 3 && down == 0)
        },
    );
}

/// One voter that gets 503 (its probe source only) does not remove the endpoint; two do; it
/// returns when they see it up again.
pub(crate) fn one_voter_is_not_a_majority(f: &Fleet) {
    let target = &f.backends[0];
    let (_, _, source1, _) = crate::MEMBERS[0];
    let (_, _, source2, _) = crate::MEMBERS[1];
    target.fail_for(&[source1]);
    eventually(
        &f.hub,
        Duration::from_secs(15),
        "one down vote for 127.0.0.11",
        || vote_of(f, "127.0.0.11").is_some_and(|(up, down, _)| up == 2 && down == 1),
    );
    // Seen down by one of three: still answered, still Healthy.
    assert_eq!(
        vote_of(f, "127.0.0.11").unwrap().2,
        "Healthy",
        "{}",
        f.status()
    );
    assert_eq!(f.ips("web.demo"), ALL, "{}", f.status());

    target.fail_for(&[source1, source2]);
    f.wait_ips(
        "web.demo",
        &["127.0.0.12", "127.0.0.13"],
        Duration::from_secs(15),
    );
    // The answers follow the DNS server's own tally; the GlobalService status that shows it is
    // written by the controller a moment later.
    eventually(
        &f.hub,
        Duration::from_secs(15),
        "two down votes and Unhealthy for 127.0.0.11 in the GlobalService",
        || {
            vote_of(f, "127.0.0.11").is_some_and(|(up, down, verdict)| {
                (up, down, verdict.as_str()) == (1, 2, "Unhealthy")
            })
        },
    );

    target.fail_for(&[]);
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
}

/// A killed endpoint leaves the answers within intervalSeconds × failureThreshold + 1 s
/// (1 × 2 + 1 here), and comes back when it answers again. Every answer carries the
/// GlobalService's TTL, so a client honouring it stops using the dead address at most that
/// bound + TTL after the death: the test asks without pause until well past that instant,
/// and the last answer holding the address, plus its TTL, must end before it.
pub(crate) fn a_killed_endpoint_leaves_in_time(f: &mut Fleet) {
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
    let dead = "127.0.0.12";
    let bound = Duration::from_secs(3);
    let ttl = Duration::from_secs(TTL.into());
    let name = format!("web.demo.{ZONE}");
    f.backends[1].kill();
    let killed = Instant::now();
    let watch_until = killed + bound + ttl + Duration::from_secs(2);
    // When the first answer without the dead address came, and until when a client caching
    // the answers could still use it.
    let mut left: Option<Duration> = None;
    let mut cached_until = killed;
    let mut answers = 0;
    while Instant::now() < watch_until {
        let reply = must(f.dns, &name, "A", &[]);
        let at = Instant::now();
        answers += 1;
        assert!(
            !reply.answer.is_empty() && reply.answer.iter().all(|r| r.ttl == TTL),
            "every answer carries ttlSeconds {TTL}: {}",
            reply.text
        );
        if reply.ips().iter().any(|ip| ip == dead) {
            cached_until = cached_until.max(at + Duration::from_secs(reply.answer[0].ttl.into()));
        } else {
            assert_eq!(reply.ips(), ["127.0.0.11", "127.0.0.13"], "{}", reply.text);
            left.get_or_insert(at - killed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = left.unwrap_or_else(|| {
        panic!(
            "{dead} still answered {:?} after it stopped ({answers} answers)\n{}",
            watch_until - killed,
            f.status()
        )
    });
    assert!(
        took <= bound,
        "{dead} left the answers {took:?} after it stopped, more than {bound:?}"
    );
    let stale = cached_until - killed;
    println!("{dead} left the answers {took:?} after it stopped; cached at most {stale:?} ({answers} answers)");
    assert!(
        stale <= bound + ttl,
        "a client honouring the TTL could use {dead} {stale:?} after it stopped, more than \
         {bound:?} + the TTL {ttl:?}: an answer held it late (or it came back) ({answers} answers)"
    );
    f.backends[1].restart();
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
}

/// A cluster's name CNAMEs to its region's when its endpoint is down, a region's to the global
/// name when none of the region's is up.
pub(crate) fn scoped_names_widen_when_down(f: &mut Fleet) {
    f.backends[0].kill(); // member-1, eu
    f.backends[2].kill(); // member-3, ap (alone in its region)
    f.wait_ips("web.demo", &["127.0.0.12"], Duration::from_secs(15));

    let cluster = must(f.dns, &format!("web.demo.member-1.{ZONE}"), "A", &[]);
    assert_eq!(
        cluster
            .answer
            .first()
            .map(|r| (r.rtype.as_str(), r.data.as_str())),
        Some(("CNAME", format!("web.demo.eu.{ZONE}").as_str())),
        "{}",
        cluster.text
    );
    assert_eq!(
        cluster.ips(),
        ["127.0.0.12"],
        "the CNAME is followed in the zone: {}",
        cluster.text
    );

    let region = must(f.dns, &format!("web.demo.ap.{ZONE}"), "A", &[]);
    assert_eq!(
        region
            .answer
            .first()
            .map(|r| (r.rtype.as_str(), r.data.as_str())),
        Some(("CNAME", format!("web.demo.{ZONE}").as_str())),
        "{}",
        region.text
    );
    assert_eq!(region.ips(), ["127.0.0.12"], "{}", region.text);
    // member-3's own name widens to its region's, which widens to the global name.
    let m3 = must(f.dns, &format!("web.demo.member-3.{ZONE}"), "A", &[]);
    assert_eq!(
        m3.data("CNAME").first().map(String::as_str),
        Some(format!("web.demo.ap.{ZONE}").as_str()),
        "{}",
        m3.text
    );
    assert_eq!(m3.ips(), ["127.0.0.12"], "{}", m3.text);
    // A healthy cluster's name still answers its own address.
    assert_eq!(f.ips("web.demo.member-2"), ["127.0.0.12"]);

    f.backends[0].restart();
    f.backends[2].restart();
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
    assert_eq!(f.ips("web.demo.member-1"), ["127.0.0.11"]);
}

/// Every endpoint down: all are answered (fail open), and the status says so.
pub(crate) fn all_down_is_fail_open(f: &mut Fleet) {
    for b in &mut f.backends {
        b.kill();
    }
    eventually(
        &f.hub,
        Duration::from_secs(15),
        "failOpen in status",
        || f.status().contains("\"failOpen\":true"),
    );
    assert_eq!(f.ips("web.demo"), ALL, "fail open answers every endpoint");
    let conditions = f.hub.ok(&[
        "get",
        "globalservice",
        "web",
        "-n",
        "demo",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"FailOpen\")].status}",
    ]);
    assert_eq!(conditions.trim(), "True");
    for b in &mut f.backends {
        b.restart();
    }
    eventually(&f.hub, Duration::from_secs(15), "healthy again", || {
        votes(f)
            .iter()
            .all(|(_, _, down, verdict)| *down == 0 && verdict == "Healthy")
    });
}
