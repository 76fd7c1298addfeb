//! `flotilla dns --kubeconfig`: the same answers from its own process, an ordinary client of
//! the hub; it keeps answering while the hub restarts, and the restarted hub answers again.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use flotilla_testkit::process::Proc;

use crate::kdig::ask;
use crate::{Fleet, ALL, ZONE};

/// Starts `flotilla dns` against the hub on a free port; (process, port).
pub(crate) fn start(f: &Fleet) -> (Proc, u16) {
    let port = crate::backends::free_dns_port();
    let listen = format!("127.0.0.1:{port}");
    let args: Vec<&OsStr> = vec![
        "dns".as_ref(),
        "--kubeconfig".as_ref(),
        f.hub.kubeconfig.as_os_str(),
        "--listen".as_ref(),
        listen.as_ref(),
        "--zone".as_ref(),
        ZONE.as_ref(),
    ];
    let log = f.hub.dir.path().join("dns.log");
    let proc = Proc::start(
        "flotilla dns",
        Path::new(crate::common::FLOTILLA),
        &args,
        "info",
        &log,
    )
    .expect("start flotilla dns");
    (proc, port)
}

fn wait_answer(proc: &mut Proc, port: u16, name: &str, want: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        proc.check_alive().expect("flotilla dns is running");
        let got = ask(port, name, "A", &[])
            .map(|r| r.ips())
            .unwrap_or_default();
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "flotilla dns answered {got:?} for {name}, not {want:?}; its log:\n{}",
            proc.log_tail(20)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn a_dns_process_answers_the_same(f: &mut Fleet) {
    f.strategy(r#"{"type":"RoundRobin"}"#);
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
    let (mut dns, port) = start(f);
    let global = format!("web.demo.{ZONE}");
    wait_answer(&mut dns, port, &global, &ALL);
    wait_answer(
        &mut dns,
        port,
        &format!("web.demo.ap.{ZONE}"),
        &["127.0.0.13"],
    );
    let nx = ask(port, &format!("nope.demo.{ZONE}"), "A", &[]).expect("reply");
    assert_eq!(nx.status, "NXDOMAIN", "{}", nx.text);

    // The hub goes away: the DNS process answers from what it has.
    f.hub.stop();
    for _ in 0..5 {
        wait_answer(&mut dns, port, &global, &ALL);
        std::thread::sleep(Duration::from_millis(200));
    }
    // Back: the hub answers again, and the DNS process follows it again.
    f.hub.restart();
    f.wait_ips("web.demo", &ALL, Duration::from_secs(30));
    f.backends[0].kill();
    f.wait_ips(
        "web.demo",
        &["127.0.0.12", "127.0.0.13"],
        Duration::from_secs(20),
    );
    wait_answer(&mut dns, port, &global, &["127.0.0.12", "127.0.0.13"]);
    f.backends[0].restart();
    wait_answer(&mut dns, port, &global, &ALL);
    dns.stop().expect("flotilla dns stops on SIGTERM");
}
