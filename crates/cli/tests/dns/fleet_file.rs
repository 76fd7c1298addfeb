//! Without members: the DNS flags are checked in one line, and `flotilla dns --fleet-file`
//! serves a fleet described in a file, following its changes.

use std::ffi::{OsStr, OsString};
use std::net::IpAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use flotilla_dns::fleet::{
    ClusterInfo, Endpoint, Fleet, FleetService, ServicePort, Strategy, Verdict,
};
use flotilla_testkit::process::Proc;

use crate::kdig::ask;

fn fleet(addresses: &[(&str, &str, Verdict)]) -> Fleet {
    Fleet {
        clusters: addresses
            .iter()
            .map(|(cluster, _, _)| ClusterInfo {
                name: cluster.to_string(),
                region: Some("eu".into()),
                networks: Vec::new(),
            })
            .collect(),
        services: vec![FleetService {
            namespace: "shop".into(),
            name: "cart".into(),
            ttl: 7,
            strategy: Strategy::RoundRobin,
            ports: vec![ServicePort {
                name: "http".into(),
                protocol: "TCP".into(),
                port: 80,
            }],
            endpoints: addresses
                .iter()
                .map(|(cluster, ip, verdict)| Endpoint {
                    cluster: cluster.to_string(),
                    region: Some("eu".into()),
                    address: ip.parse::<IpAddr>().expect("ip"),
                    verdict: *verdict,
                    cluster_ip: None,
                })
                .collect(),
        }],
    }
}

fn write(path: &Path, fleet: &Fleet) {
    // Written aside and renamed, as a program updating the file should.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec(fleet).expect("fleet JSON")).expect("write fleet");
    std::fs::rename(&tmp, path).expect("rename fleet file");
}

fn answers(port: u16) -> Vec<String> {
    ask(port, "cart.shop.bench.test", "A", &[])
        .map(|r| r.ips())
        .unwrap_or_default()
}

#[test]
fn a_fleet_file_is_served_and_followed() {
    crate::kdig::require_kdig();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("fleet.json");
    write(
        &file,
        &fleet(&[
            ("c1", "192.0.2.1", Verdict::Healthy),
            ("c2", "192.0.2.2", Verdict::Healthy),
        ]),
    );
    let port = crate::backends::free_dns_port();
    let args = dns_args(&file, port, "Bench.Test.", &[]);
    let mut dns = start_dns(dir.path(), &args);
    let until = |want: &[&str], within: Duration| {
        let deadline = Instant::now() + within;
        loop {
            let got = answers(port);
            if got == want {
                return Instant::now();
            }
            assert!(Instant::now() < deadline, "answered {got:?}, not {want:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    until(&["192.0.2.1", "192.0.2.2"], Duration::from_secs(10));
    dns.check_alive().expect("running");
    let reply = ask(port, "cart.shop.bench.test", "A", &[]).expect("reply");
    assert!(reply.answer.iter().all(|r| r.ttl == 7), "{}", reply.text);

    // A verdict change in the file shows in the answers within a fraction of a second.
    let changed = Instant::now();
    write(
        &file,
        &fleet(&[
            ("c1", "192.0.2.1", Verdict::Unhealthy),
            ("c2", "192.0.2.2", Verdict::Healthy),
        ]),
    );
    let seen = until(&["192.0.2.2"], Duration::from_secs(5));
    assert!(
        seen - changed < Duration::from_millis(500),
        "the change took {:?} to be answered",
        seen - changed
    );

    // A broken file leaves the last good fleet answered.
    std::fs::write(&file, b"{ not json").expect("write");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(answers(port), ["192.0.2.2"]);
    dns.check_alive()
        .expect("a bad file does not stop the server");
    write(&file, &fleet(&[("c3", "192.0.2.3", Verdict::Healthy)]));
    until(&["192.0.2.3"], Duration::from_secs(5));
    dns.stop().expect("stops on SIGTERM");
}

/// The arguments of `flotilla dns --fleet-file FILE --listen 127.0.0.1:PORT --zone ZONE`, then `more`.
pub(crate) fn dns_args(file: &Path, port: u16, zone: &str, more: &[&OsStr]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "dns".into(),
        "--fleet-file".into(),
        file.into(),
        "--listen".into(),
        format!("127.0.0.1:{port}").into(),
        "--zone".into(),
        zone.into(),
    ];
    args.extend(more.iter().map(|a| a.to_os_string()));
    args
}

/// Starts `flotilla` with `args`, its log `dns.log` in `dir`.
pub(crate) fn start_dns(dir: &Path, args: &[OsString]) -> Proc {
    let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
    Proc::start(
        "flotilla dns",
        Path::new(crate::common::FLOTILLA),
        &args,
        "info",
        &dir.join("dns.log"),
    )
    .expect("start flotilla dns")
}

fn flotilla(args: &[&str]) -> std::process::Output {
    Command::new(crate::common::FLOTILLA)
        .args(args)
        .env_remove("KUBECONFIG")
        // anyhow would add a backtrace to the one-line error.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("run flotilla")
}

#[test]
fn dns_flags_are_checked_before_anything_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let out = flotilla(&[
        "serve",
        "--data-dir",
        data.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--dns-listen",
        "127.0.0.1:0",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("--dns-listen needs --dns-zone"), "{err}");
    assert!(!data.exists(), "nothing was started");

    let bad_zone = flotilla(&["serve", "--dns-zone", "no_underscores.test"]);
    assert!(!bad_zone.status.success());
    assert!(String::from_utf8_lossy(&bad_zone.stderr).contains("not a DNS zone"));

    // flotilla dns needs exactly one source of names.
    let none = flotilla(&["dns", "--listen", "127.0.0.1:0", "--zone", "z.test"]);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("--kubeconfig"));
    let both = flotilla(&[
        "dns",
        "--listen",
        "127.0.0.1:0",
        "--zone",
        "z.test",
        "--kubeconfig",
        "k",
        "--fleet-file",
        "f",
    ]);
    assert!(!both.status.success());
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
    // The hidden flag stays out of --help.
    let help = flotilla(&["dns", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--kubeconfig") && !help.contains("--fleet-file"),
        "{help}"
    );
}
