//! Controller processes sharing the work by shard Leases, on a real hub that runs no
//! controllers of its own: two lease keepers in this process split the 16 shards, the
//! survivor takes all of them over when the other stops renewing, and a `flotilla
//! controllers` process holds every shard alone and gives them back on SIGTERM.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use common::{Hub, FLOTILLA};
use flotilla_controllers::shards::{Leases, Owned, Shards, SHARDS};

async fn client(kubeconfig: &Path) -> kube::Client {
    let file = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let config =
        kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
    kube::Client::try_from(config).expect("client")
}

/// Waits up to `limit` for `done`; how long it took.
async fn wait(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    start.elapsed()
}

/// Shard Lease name → holder, as kubectl lists them.
fn holders(hub: &Hub) -> BTreeMap<String, String> {
    let out = hub.ok(&[
        "get",
        "leases",
        "-n",
        "flotilla-system",
        "-o",
        "custom-columns=NAME:.metadata.name,HOLDER:.spec.holderIdentity",
        "--no-headers",
    ]);
    out.lines()
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            let name = cols.next()?.to_owned();
            let holder = cols.next().unwrap_or_default();
            let holder = if holder == "<none>" { "" } else { holder };
            Some((name, holder.to_owned()))
        })
        .collect()
}

fn split_evenly(a: &Shards, b: &Shards) -> bool {
    let (x, y) = (a.owned(), b.owned());
    x.len() == 8 && y.len() == 8 && (0..SHARDS).all(|s| x.contains(s) != y.contains(s))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_split_the_shards_and_the_survivor_takes_them_all() {
    let hub = Hub::start_with(&["--no-controllers"]);
    let hub_client = client(&hub.kubeconfig).await;
    let connect = || Ok::<_, kube::Error>(hub_client.clone());
    let (alpha_leases, alpha) = Leases::start(connect, "alpha").expect("alpha's lease keeper");
    let (beta_leases, beta) = Leases::start(connect, "beta").expect("beta's lease keeper");
    let took = wait(Duration::from_secs(20), "8 shards each, disjoint", || {
        split_evenly(&alpha, &beta)
    })
    .await;
    eprintln!("split 8/8 after {took:?}");

    let listed = holders(&hub);
    for s in 0..SHARDS {
        let want = if alpha.owns(s) { "alpha" } else { "beta" };
        assert_eq!(listed[&format!("flotilla-shard-{s}")], want, "{listed:?}");
    }
    assert_eq!(listed["flotilla-controller-alpha"], "alpha");
    assert_eq!(listed["flotilla-controller-beta"], "beta");
    // Stable: a few renewals later nothing moved.
    let before = (alpha.owned(), beta.owned());
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!((alpha.owned(), beta.owned()), before);

    // alpha stops renewing (as if killed): it works nothing from now on, and beta takes its
    // shards once their Leases lapse, not before.
    drop(alpha_leases);
    assert_eq!(alpha.owned(), Owned::NONE);
    let took = wait(Duration::from_secs(15), "beta owns all 16", || {
        beta.owned() == Owned::ALL
    })
    .await;
    eprintln!("beta took over after {took:?}");
    assert!(
        took > Duration::from_secs(5),
        "beta took shards whose Leases alpha had renewed moments before ({took:?})"
    );
    let listed = holders(&hub);
    assert!(
        (0..SHARDS).all(|s| listed[&format!("flotilla-shard-{s}")] == "beta"),
        "{listed:?}"
    );
    drop(beta_leases);
}

/// A shard Lease written without the keeper's label (by an older flotilla) and left to lapse
/// is still claimed: the keeper lists only labelled Leases, finds it on create, and labels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlabelled_shard_lease_is_adopted() {
    let hub = Hub::start_with(&["--no-controllers"]);
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "flotilla-shard-5", "namespace": "flotilla-system"},
            "spec": {"holderIdentity": "gone", "leaseDurationSeconds": 10,
                     "renewTime": "2020-01-01T00:00:00.000000Z"}}"#,
    );
    let hub_client = client(&hub.kubeconfig).await;
    let connect = || Ok::<_, kube::Error>(hub_client.clone());
    let (leases, shards) = Leases::start(connect, "alpha").expect("the lease keeper");
    wait(Duration::from_secs(20), "alpha owns all 16", || {
        shards.owned() == Owned::ALL
    })
    .await;
    let label = hub.ok(&[
        "get",
        "lease",
        "flotilla-shard-5",
        "-n",
        "flotilla-system",
        "-o",
        "jsonpath={.metadata.labels.controllers\\.flotilla\\.io/lease}",
    ]);
    assert_eq!(label, "shard");
    assert_eq!(holders(&hub)["flotilla-shard-5"], "alpha");
    drop(leases);
}

/// GET /metrics from `addr`.
fn scrape(addr: &str) -> String {
    let mut conn = std::net::TcpStream::connect(addr).expect("connect to --metrics-listen");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n")
        .expect("send");
    let mut text = String::new();
    conn.read_to_string(&mut text).expect("read");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controllers_process_alone_holds_every_shard_and_gives_them_back_on_sigterm() {
    let hub = Hub::start_with(&["--no-controllers"]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let metrics = format!("127.0.0.1:{port}");
    let log = hub.dir.path().join("controllers.log");
    let args: Vec<&OsStr> = vec![
        OsStr::new("controllers"),
        OsStr::new("--kubeconfig"),
        hub.kubeconfig.as_os_str(),
        OsStr::new("--identity"),
        OsStr::new("solo"),
        OsStr::new("--metrics-listen"),
        OsStr::new(&metrics),
    ];
    let mut proc = flotilla_testkit::process::Proc::start(
        "controllers",
        Path::new(FLOTILLA),
        &args,
        "info",
        &log,
    )
    .expect("start flotilla controllers");
    let shard_leases = |h: &BTreeMap<String, String>| {
        (0..SHARDS)
            .map(|s| h.get(&format!("flotilla-shard-{s}")).cloned())
            .collect::<Vec<_>>()
    };
    let start = Instant::now();
    loop {
        let h = holders(&hub);
        if shard_leases(&h)
            .iter()
            .all(|x| x.as_deref() == Some("solo"))
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "solo does not hold every shard: {h:?}\nlog:\n{}",
            proc.log_tail(40)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let text = scrape(&metrics);
    assert!(
        text.contains("flotilla_controller_shards_owned{identity=\"solo\"} 16"),
        "{text}"
    );
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");

    proc.stop().expect("flotilla controllers stops on SIGTERM");
    let h = holders(&hub);
    assert!(
        shard_leases(&h).iter().all(|x| x.as_deref() == Some("")),
        "shards not given back: {h:?}\nlog:\n{}",
        proc.log_tail(40)
    );
    assert!(!h.contains_key("flotilla-controller-solo"), "{h:?}");
}
