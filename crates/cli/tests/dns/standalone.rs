//! `flotilla dns --kubeconfig`: the same answers from its own process, an ordinary client of
//! the hub; it keeps answering while the hub restarts, and the restarted hub answers again.
//! A killed DNS process or hub started again on the same port answers the same addresses, and
//! never NXDOMAIN (nor an empty answer) for a known name while its watches list the hub again.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use flotilla_testkit::process::Proc;

use crate::kdig::{ask, Reply};
use crate::{Fleet, ALL, ZONE};

/// Starts `flotilla dns` against the hub on a free port; (process, port).
pub(crate) fn start(f: &Fleet) -> (Proc, u16) {
    let port = crate::backends::free_dns_port();
    (start_on(f, port), port)
}

/// Starts `flotilla dns` against the hub on 127.0.0.1:`port`.
fn start_on(f: &Fleet, port: u16) -> Proc {
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
    proc
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

/// How long [`replies_during`] asks at most once its closure has returned.
const WAIT_AFTER: Duration = Duration::from_secs(10);

/// Asks `name` at `port` without pause, from a few threads, while `during` runs and until ten
/// more replies came after it; every reply that came.
fn replies_during(port: u16, name: &str, during: impl FnOnce()) -> Vec<Reply> {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let askers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut replies = Vec::new();
                    // Once `during` is over: ten more replies, for at most ten seconds.
                    let mut after: Option<(usize, Instant)> = None;
                    loop {
                        if after.is_none() && done.load(Ordering::SeqCst) {
                            after = Some((replies.len() + 10, Instant::now() + WAIT_AFTER));
                        }
                        if let Some((count, until)) = after {
                            if replies.len() >= count || Instant::now() > until {
                                break;
                            }
                        }
                        match ask(port, name, "A", &[]) {
                            Some(reply) => replies.push(reply),
                            None => std::thread::sleep(Duration::from_millis(10)),
                        }
                    }
                    replies
                })
            })
            .collect();
        during();
        done.store(true, Ordering::SeqCst);
        askers
            .into_iter()
            .flat_map(|a| a.join().expect("an asking thread"))
            .collect()
    })
}

/// No reply said the known name is absent or empty (a server not ready may stay silent, or
/// answer SERVFAIL so resolvers ask another one), and the last one answered `want`; else what
/// went wrong.
fn forgot(what: &str, replies: &[Reply], want: &[&str]) -> Option<String> {
    let wrong = replies
        .iter()
        .find(|r| r.status == "NXDOMAIN" || (r.status == "NOERROR" && r.ips() != want));
    if let Some(r) = wrong {
        return Some(format!(
            "{what}: a reply of {} said {} with {:?} for a known name (want {want:?}):\n{}",
            replies.len(),
            r.status,
            r.ips(),
            r.text
        ));
    }
    let last = replies.last().map(Reply::ips).unwrap_or_default();
    (last != want).then(|| {
        format!(
            "{what}: the last of {} replies answered {last:?}, not {want:?}",
            replies.len()
        )
    })
}

/// A killed `flotilla dns`, started again on the same port, and a killed hub, started again on
/// the same data directory and port, answer the same addresses from their first reply on.
pub(crate) fn restarts_keep_answering(f: &mut Fleet) {
    f.wait_ips("web.demo", &ALL, Duration::from_secs(15));
    let global = format!("web.demo.{ZONE}");
    let (mut dns, port) = start(f);
    wait_answer(&mut dns, port, &global, &ALL);
    dns.kill().expect("kill flotilla dns");
    let mut dns = None;
    let replies = replies_during(port, &global, || {
        let mut again = start_on(f, port);
        wait_answer(&mut again, port, &global, &ALL);
        dns = Some(again);
    });
    let process = forgot("the restarted flotilla dns", &replies, &ALL);
    let mut dns = dns.expect("flotilla dns started again");
    wait_answer(
        &mut dns,
        port,
        &format!("web.demo.ap.{ZONE}"),
        &["127.0.0.13"],
    );

    f.hub.kill9();
    let replies = replies_during(f.dns, &global, || {
        f.hub.restart();
        f.wait_ips("web.demo", &ALL, Duration::from_secs(30));
    });
    let hub = forgot("the restarted hub", &replies, &ALL);
    assert_eq!(f.ips("web.demo.eu"), ["127.0.0.11", "127.0.0.12"]);
    // The restarted hub still judges: a killed endpoint leaves its answers and the process's.
    f.backends[2].kill();
    f.wait_ips(
        "web.demo",
        &["127.0.0.11", "127.0.0.12"],
        Duration::from_secs(20),
    );
    wait_answer(&mut dns, port, &global, &["127.0.0.11", "127.0.0.12"]);
    f.backends[2].restart();
    f.wait_ips("web.demo", &ALL, Duration::from_secs(20));
    dns.stop().expect("flotilla dns stops on SIGTERM");
    let failures: Vec<String> = process.into_iter().chain(hub).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
