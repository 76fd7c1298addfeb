//! Multi-cluster services (KEP-1645) end to end on three real members, each with a pull agent:
//! a Service + Deployment propagated to all three and a ServiceExport on the hub give a
//! ServiceImport on the hub and in every member, the exporters' EndpointSlices beside it, the
//! export's conditions (Valid, and Conflict when an override makes one member's ports differ),
//! and `<svc>.<ns>.svc.clusterset.local` answers from the hub's DNS server; unexporting removes
//! it all. The members run KWOK, so the Deployment's pods become ready with addresses.

#[path = "../common/mod.rs"]
mod common;
#[path = "../dns/kdig.rs"]
#[allow(dead_code)]
mod kdig;

mod exports;

use std::ffi::OsStr;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::fleet::{condition, eventually, flotilla_ok};
use common::Hub;
use flotilla_testkit::process::Proc;
use flotilla_testkit::Members;

/// The members, each with a pull agent.
pub(crate) const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];

/// The hub, its agents and its DNS port.
pub(crate) struct Fleet {
    pub(crate) hub: Hub,
    pub(crate) members: &'static Members,
    _agents: Vec<Proc>,
    /// The hub's DNS port on 127.0.0.1.
    pub(crate) dns: u16,
}

impl Fleet {
    /// A member's kubeconfig.
    pub(crate) fn member(&self, name: &str) -> PathBuf {
        self.members
            .member(name)
            .expect("member")
            .kubeconfig
            .clone()
    }
}

/// A port free for both UDP and TCP on 127.0.0.1.
fn free_dns_port() -> u16 {
    for _ in 0..50 {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = tcp.local_addr().expect("address").port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no port free for both UDP and TCP on 127.0.0.1");
}

/// A pull agent for `cluster`.
fn agent(hub: &Hub, cluster: &str, member: &Path) -> Proc {
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
            boot.to_str().expect("path"),
        ],
    );
    let state = dir.join(format!("agent-{cluster}"));
    let args: Vec<&OsStr> = vec![
        OsStr::new("agent"),
        "--cluster".as_ref(),
        cluster.as_ref(),
        "--heartbeat-interval".as_ref(),
        "2s".as_ref(),
        "--kubeconfig".as_ref(),
        member.as_os_str(),
        "--state-dir".as_ref(),
        state.as_os_str(),
        "--bootstrap-kubeconfig".as_ref(),
        boot.as_os_str(),
    ];
    Proc::start(
        &format!("agent for {cluster}"),
        Path::new(common::FLOTILLA),
        &args,
        "info",
        &dir.join(format!("agent-{cluster}.log")),
    )
    .expect("start flotilla agent")
}

/// The hub serving DNS and three Ready pull members.
fn up() -> Fleet {
    kdig::require_kdig();
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let dns = free_dns_port();
    let hub = Hub::start_with(&[
        "--auto-approve",
        "--heartbeat-interval",
        "2s",
        "--dns-listen",
        &format!("127.0.0.1:{dns}"),
        "--dns-zone",
        "fleet.test",
    ]);
    let mut agents: Vec<Proc> = MEMBERS
        .iter()
        .map(|c| agent(&hub, c, &members.member(c).expect("member").kubeconfig))
        .collect();
    for c in MEMBERS {
        eventually(&hub, Duration::from_secs(60), &format!("{c} Ready"), || {
            for a in agents.iter_mut() {
                if let Err(e) = a.check_alive() {
                    panic!("{e:#}");
                }
            }
            condition(&hub, &format!("cluster/{c}"), None, "Ready") == "True"
        });
    }
    Fleet {
        hub,
        members,
        _agents: agents,
        dns,
    }
}

#[test]
fn service_exports_become_imports_everywhere() {
    let fleet = up();
    exports::export_imports_everywhere(&fleet);
    exports::clusterset_name_answers(&fleet);
    exports::endpoint_changes_follow(&fleet);
    exports::a_port_override_is_a_conflict(&fleet);
    exports::unexport_removes_everything(&fleet);
}
