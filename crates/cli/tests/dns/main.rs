//! Global DNS end to end on three real members: a LoadBalancer Service propagated to all three
//! gets fleet names the hub answers (`serve --dns-listen --dns-zone`), judged by the quorum
//! votes of the three pull agents, each probing from its own `--probe-source` address. The
//! members have no load-balancer controller: the test writes each member Service's
//! `status.loadBalancer.ingress` (127.0.0.11, .12, .13) where it runs small HTTP servers it
//! kills or makes answer 503 to one voter only. Asked with `kdig`.

#[path = "../common/mod.rs"]
mod common;

mod backends;
mod fleet_file;
mod kdig;
mod names;
mod standalone;
mod strategies;
mod voting;

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use backends::Backend;
use common::fleet::{condition, eventually, flotilla_ok, kc};
use common::Hub;
use flotilla_testkit::process::Proc;
use flotilla_testkit::Members;

/// The zone the hub answers for.
const ZONE: &str = "fleet.test";
/// The members, their regions, their voters' probe sources and their endpoints' addresses.
const MEMBERS: [(&str, &str, &str, &str); 3] = [
    ("member-1", "eu", "127.0.0.2", "127.0.0.11"),
    ("member-2", "eu", "127.0.0.3", "127.0.0.12"),
    ("member-3", "ap", "127.0.0.4", "127.0.0.13"),
];
/// The geo table of the hub: client networks per region, and distances between regions.
const GEO: &str = "10.1.0.0/16 eu\n10.3.0.0/16 ap\n10.9.0.0/16 us\ndistance eu ap 10\ndistance us eu 3\ndistance us ap 8\n";

/// What every step of the suite shares.
pub(crate) struct Fleet {
    pub(crate) hub: Hub,
    pub(crate) members: &'static Members,
    /// The pull agents (the voters), stopped when dropped.
    pub(crate) _agents: Vec<Proc>,
    /// One endpoint per member, in MEMBERS order.
    pub(crate) backends: Vec<Backend>,
    /// The Service's port (the backends listen on it).
    pub(crate) port: u16,
    /// The hub's DNS port on 127.0.0.1.
    pub(crate) dns: u16,
    /// The hub's `--dns-geo-file`, removed when dropped.
    _geo: tempfile::NamedTempFile,
}

impl Fleet {
    /// A member's kubeconfig.
    pub(crate) fn member(&self, name: &str) -> std::path::PathBuf {
        self.members
            .member(name)
            .expect("member")
            .kubeconfig
            .clone()
    }

    /// The A records of `name` (under the zone), sorted; empty when the reply carries none.
    pub(crate) fn ips(&self, name: &str) -> Vec<String> {
        kdig::ask(self.dns, &format!("{name}.{ZONE}"), "A", &[])
            .map(|r| r.ips())
            .unwrap_or_default()
    }

    /// Waits until `name` answers exactly `want` (sorted A records).
    pub(crate) fn wait_ips(&self, name: &str, want: &[&str], within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let last = self.ips(name);
            if last == want {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "{name}.{ZONE} answered {last:?}, not {want:?}, within {within:?}\n{}\nhub log tail:\n{}",
                    self.status(),
                    flotilla_testkit::process::last_lines(&self.hub.log(), 30)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The GlobalService's status, for failure messages and assertions.
    pub(crate) fn status(&self) -> String {
        let out = self
            .hub
            .kubectl(&["get", "globalservice", "web", "-n", "demo", "-o", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        format!("GlobalService status: {}", v["status"])
    }

    /// Sets the GlobalService's strategy (JSON of `spec.strategy`).
    pub(crate) fn strategy(&self, strategy: &str) {
        self.hub.ok(&[
            "patch",
            "globalservice",
            "web",
            "-n",
            "demo",
            "--type=merge",
            "-p",
            &format!(r#"{{"spec":{{"strategy":{strategy}}}}}"#),
        ]);
    }
}

/// The three endpoints' addresses, sorted.
pub(crate) const ALL: [&str; 3] = ["127.0.0.11", "127.0.0.12", "127.0.0.13"];

fn service(port: u16) -> String {
    format!(
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: demo}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: demo}}
spec:
  type: LoadBalancer
  selector: {{app: web}}
  ports:
  - {{name: http, port: {port}, protocol: TCP, targetPort: 8080}}
---
apiVersion: networking.flotilla.io/v1alpha1
kind: GlobalService
metadata: {{name: web, namespace: demo}}
spec:
  ttlSeconds: 5
  healthCheck:
    protocol: HTTP
    path: /healthz
    intervalSeconds: 1
    timeoutSeconds: 1
    failureThreshold: 2
    successThreshold: 1
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: demo}}
spec:
  resourceSelectors:
  - {{apiVersion: v1, kind: Service, name: web}}
  placement:
    clusterAffinity: {{clusterNames: [member-1, member-2, member-3]}}
    replicaScheduling: {{replicaSchedulingType: Duplicated}}
"#
    )
}

/// A pull agent for `cluster`, voting from `source`.
fn agent(hub: &Hub, cluster: &str, region: &str, source: &str, member: &Path) -> Proc {
    let dir = hub.dir.path();
    let boot = dir.join(format!("boot-{cluster}.kubeconfig"));
    flotilla_ok(
        hub,
        &[
            "token",
            "create",
            "--cluster",
            cluster,
            "-o",
            boot.to_str().unwrap(),
        ],
    );
    let state = dir.join(format!("agent-{cluster}"));
    let networks = match cluster {
        "member-2" => "10.2.0.0/16",
        _ => "192.0.2.0/24",
    };
    let args: Vec<&OsStr> = [
        OsStr::new("agent"),
        "--cluster".as_ref(),
        cluster.as_ref(),
        "--heartbeat-interval".as_ref(),
        "2s".as_ref(),
        "--region".as_ref(),
        region.as_ref(),
        "--probe-source".as_ref(),
        source.as_ref(),
        "--networks".as_ref(),
        networks.as_ref(),
        "--kubeconfig".as_ref(),
        member.as_os_str(),
        "--state-dir".as_ref(),
        state.as_os_str(),
        "--bootstrap-kubeconfig".as_ref(),
        boot.as_os_str(),
    ]
    .to_vec();
    Proc::start(
        &format!("agent for {cluster}"),
        Path::new(common::FLOTILLA),
        &args,
        "info",
        &dir.join(format!("agent-{cluster}.log")),
    )
    .expect("start flotilla agent")
}

/// The hub, three voting agents, the propagated Service with its members' ingress addresses set.
fn up() -> Fleet {
    kdig::require_kdig();
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let dns = backends::free_dns_port();
    let geo = tempfile::NamedTempFile::new().expect("geo file");
    std::fs::write(geo.path(), GEO).expect("write the geo file");
    let hub = Hub::start_with(&[
        "--auto-approve",
        "--heartbeat-interval",
        "2s",
        "--dns-listen",
        &format!("127.0.0.1:{dns}"),
        "--dns-zone",
        ZONE,
        "--dns-geo-file",
        geo.path().to_str().expect("temp path"),
    ]);
    let (port, backends) = backends::three();
    let mut agents: Vec<Proc> = MEMBERS
        .iter()
        .map(|(c, region, source, _)| {
            let m = members.member(c).expect("member").kubeconfig.clone();
            agent(&hub, c, region, source, &m)
        })
        .collect();
    for (c, ..) in MEMBERS {
        eventually(&hub, Duration::from_secs(60), &format!("{c} Ready"), || {
            for a in agents.iter_mut() {
                if let Err(e) = a.check_alive() {
                    panic!("{e:#}");
                }
            }
            condition(&hub, &format!("cluster/{c}"), None, "Ready") == "True"
        });
    }
    let fleet = Fleet {
        hub,
        members,
        _agents: agents,
        backends,
        port,
        dns,
        _geo: geo,
    };
    fleet.hub.ok_stdin(&["apply", "-f", "-"], &service(port));
    for (c, _, _, ip) in MEMBERS {
        let m = fleet.member(c);
        eventually(
            &fleet.hub,
            Duration::from_secs(60),
            &format!("Service web in {c}"),
            || kc(&m, &["get", "svc", "web", "-n", "demo"]).0,
        );
        // No load-balancer controller in the members: the test is it.
        let patch = format!(r#"{{"status":{{"loadBalancer":{{"ingress":[{{"ip":"{ip}"}}]}}}}}}"#);
        let (ok, _, err) = kc(
            &m,
            &[
                "patch",
                "svc",
                "web",
                "-n",
                "demo",
                "--subresource=status",
                "--type=merge",
                "-p",
                &patch,
            ],
        );
        assert!(ok, "setting {c}'s ingress: {err}");
    }
    fleet
}

#[test]
fn a_federated_service_is_answered_by_quorum_health() {
    let mut fleet = up();
    names::fleet_names_resolve(&fleet);
    names::rcodes_and_srv(&fleet);
    names::hub_service_shows_the_name(&fleet);
    voting::status_shows_the_votes(&fleet);
    voting::one_voter_is_not_a_majority(&fleet);
    voting::a_killed_endpoint_leaves_in_time(&mut fleet);
    voting::scoped_names_widen_when_down(&mut fleet);
    voting::all_down_is_fail_open(&mut fleet);
    strategies::failover(&mut fleet);
    strategies::weighted(&fleet);
    strategies::geo(&fleet);
    strategies::local_first(&fleet);
    standalone::a_dns_process_answers_the_same(&mut fleet);
}
