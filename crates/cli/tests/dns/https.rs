//! HTTPS health checks: a second federated Service whose GlobalService probes over TLS, served
//! by HTTPS backends with a self-signed certificate on the same three addresses. Endpoints that
//! answer 200 over TLS stay (a voter speaking plain HTTP to them would see them down); one that
//! answers 503 over TLS to every voter leaves, and returns when it answers 200 again.

use std::time::Duration;

use crate::common::fleet::eventually;
use crate::voting::votes_of;
use crate::{backends, Fleet, ALL, MEMBERS};

/// The Service probed over HTTPS.
const NAME: &str = "secure";

pub(crate) fn probes_speak_tls(f: &Fleet) {
    let (port, tls) = backends::three_tls();
    // Someone else's DNSEndpoint of the same name is never overwritten.
    let theirs = r#"{"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
        "metadata": {"name": "secure", "namespace": "demo"},
        "spec": {"endpoints": [{"dnsName": "secure.example.org", "recordType": "A",
                                "targets": ["198.51.100.1"]}]}}"#;
    f.hub.ok_stdin(&["create", "-f", "-"], theirs);
    f.hub
        .ok_stdin(&["apply", "-f", "-"], &crate::service(NAME, port, "HTTPS"));
    for (c, _, _, ip) in MEMBERS {
        f.set_ingress(NAME, c, ip);
    }
    let name = format!("{NAME}.demo");
    f.wait_ips(&name, &ALL, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(2));
    let kept = f.hub.ok(&[
        "get",
        "dnsendpoint",
        NAME,
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.endpoints[*].dnsName} {.metadata.ownerReferences}",
    ]);
    assert_eq!(
        kept.trim(),
        "secure.example.org",
        "their DNSEndpoint is kept as it was"
    );
    let healthy = |want: usize| {
        let v = votes_of(f, NAME);
        v.len() == 3
            && v.iter()
                .filter(|(_, up, down, verdict)| *up == 3 && *down == 0 && verdict == "Healthy")
                .count()
                == want
    };
    eventually(
        &f.hub,
        Duration::from_secs(30),
        "three HTTPS up votes for each endpoint",
        || healthy(3),
    );

    // 503 over TLS to every voter (both agents and the hub).
    let sources: Vec<&str> = MEMBERS.iter().map(|(_, _, source, _)| *source).collect();
    tls[1].fail_for(&sources);
    f.wait_ips(
        &name,
        &["127.0.0.11", "127.0.0.13"],
        Duration::from_secs(15),
    );
    // The answer changes at two down votes of three; the third follows.
    eventually(
        &f.hub,
        Duration::from_secs(10),
        "three down votes for 127.0.0.12 over HTTPS",
        || {
            votes_of(f, NAME).iter().any(|(a, up, down, verdict)| {
                a == "127.0.0.12" && (*up, *down, verdict.as_str()) == (0, 3, "Unhealthy")
            })
        },
    );
    assert!(healthy(2), "the others stay healthy: {}", f.status_of(NAME));

    tls[1].fail_for(&[]);
    f.wait_ips(&name, &ALL, Duration::from_secs(15));
    // Gone from the hub, the Service leaves the members and the zone.
    for kind in ["globalservice", "propagationpolicy", "service"] {
        f.hub.ok(&["delete", kind, NAME, "-n", "demo"]);
    }
    f.wait_ips(&name, &[], Duration::from_secs(30));
    drop(tls);
}
