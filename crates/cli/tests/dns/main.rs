//! Global DNS end to end on three real members: a LoadBalancer Service propagated to all three
//! gets fleet names the hub answers (`serve --dns-listen --dns-zone`), judged by the quorum
//! votes of three voters, each probing from its own `--probe-source` address: the pull agents
//! of member-1 and member-2, and the hub itself for member-3, joined in push mode. The members
//! have no load-balancer controller: the test writes each member Service's
//! `status.loadBalancer.ingress` (127.0.0.11, .12, .13) where it runs small HTTP(S) servers it
//! kills or makes answer 503 to chosen voters only. Asked with `kdig`.

#[path = "../common/mod.rs"]
mod common;

mod backends;
mod fleet_file;
mod https;
mod kdig;
mod maxmind;
mod mcs;
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
/// member-3 ([`PUSH`]) is joined in push mode: the hub votes for it from its `--probe-source`.
const MEMBERS: [(&str, &str, &str, &str); 3] = [
    ("member-1", "eu", "127.0.0.2", "127.0.0.11"),
    ("member-2", "eu", "127.0.0.3", "127.0.0.12"),
    ("member-3", "ap", "127.0.0.4", "127.0.0.13"),
];
/// The member joined in push mode.
pub(crate) const PUSH: &str = "member-3";
/// The GlobalServices' `ttlSeconds`: short, so the test of what caching clients see is quick.
pub(crate) const TTL: u32 = 3;
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
        self.status_of("web")
    }

    /// The status of the GlobalService `demo/name`.
    pub(crate) fn status_of(&self, name: &str) -> String {
        let out = self
            .hub
            .kubectl(&["get", "globalservice", name, "-n", "demo", "-o", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        format!("GlobalService {name} status: {}", v["status"])
    }

    /// Writes `ip` as the ingress address of the member Service `demo/name` in `cluster`, once
    /// the hub has propagated it there (no load-balancer controller in the members: the test is it).
    pub(crate) fn set_ingress(&self, name: &str, cluster: &str, ip: &str) {
        let m = self.member(cluster);
        eventually(
            &self.hub,
            Duration::from_secs(60),
            &format!("Service {name} in {cluster}"),
            || kc(&m, &["get", "svc", name, "-n", "demo"]).0,
        );
        let patch = format!(r#"{{"status":{{"loadBalancer":{{"ingress":[{{"ip":"{ip}"}}]}}}}}}"#);
        let (ok, _, err) = kc(
            &m,
            &[
                "patch",
                "svc",
                name,
                "-n",
                "demo",
                "--subresource=status",
                "--type=merge",
                "-p",
                &patch,
            ],
        );
        assert!(ok, "setting {cluster}'s ingress of {name}: {err}");
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

/// A LoadBalancer Service `demo/name` on `port`, its GlobalService probing with `protocol` on
/// `/healthz`, propagated to the three members.
pub(crate) fn service(name: &str, port: u16, protocol: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: demo}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: demo}}
spec:
  type: LoadBalancer
  selector: {{app: {name}}}
  ports:
  - {{name: http, port: {port}, protocol: TCP, targetPort: 8080}}
---
apiVersion: networking.flotilla.io/v1alpha1
kind: GlobalService
metadata: {{name: {name}, namespace: demo}}
spec:
  ttlSeconds: {TTL}
  healthCheck:
    protocol: {protocol}
    path: /healthz
    intervalSeconds: 1
    timeoutSeconds: 1
    failureThreshold: 2
    successThreshold: 1
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: {name}, namespace: demo}}
spec:
  resourceSelectors:
  - {{apiVersion: v1, kind: Service, name: {name}}}
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

/// The hub (voting for member-3 from 127.0.0.4), two voting agents and member-3 joined in push
/// mode, the propagated Service with its members' ingress addresses set.
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
        "--probe-source",
        MEMBERS[2].2,
    ]);
    let (port, backends) = backends::three();
    let mut agents: Vec<Proc> = MEMBERS
        .iter()
        .filter(|(c, ..)| *c != PUSH)
        .map(|(c, region, source, _)| {
            let m = members.member(c).expect("member").kubeconfig.clone();
            agent(&hub, c, region, source, &m)
        })
        .collect();
    let push = members.member(PUSH).expect("member").kubeconfig.clone();
    let joined = flotilla_ok(
        &hub,
        &[
            "join",
            PUSH,
            "--member-kubeconfig",
            push.to_str().expect("kubeconfig path"),
            "--region",
            "ap",
        ],
    );
    assert!(joined.contains("Push"), "{joined}");
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
    fleet
        .hub
        .ok_stdin(&["apply", "-f", "-"], &service("web", port, "HTTP"));
    for (c, _, _, ip) in MEMBERS {
        fleet.set_ingress("web", c, ip);
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
    voting::the_hub_votes_for_its_push_member(&fleet);
    voting::one_voter_is_not_a_majority(&fleet);
    voting::a_killed_endpoint_leaves_in_time(&mut fleet);
    voting::scoped_names_widen_when_down(&mut fleet);
    voting::all_down_is_fail_open(&mut fleet);
    https::probes_speak_tls(&fleet);
    strategies::failover(&mut fleet);
    strategies::weighted(&fleet);
    strategies::geo(&fleet);
    strategies::local_first(&fleet);
    mcs::export_imports_everywhere(&fleet);
    mcs::clusterset_name_answers(&fleet);
    mcs::endpoint_changes_follow(&fleet);
    mcs::a_port_override_is_a_conflict(&fleet);
    mcs::unexport_removes_everything(&fleet);
    standalone::a_dns_process_answers_the_same(&mut fleet);
    standalone::restarts_keep_answering(&mut fleet);
}
