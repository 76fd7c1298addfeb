//! `flotilla sim`: 50 simulated member clusters in one process, each a real Kubernetes API to
//! kubectl and kube-rs under its own path, holding its own objects, refusing the others'
//! tokens; all joined to a real hub, in Push mode and (another run) in Pull mode through an
//! agent per cluster, where a Divided policy over them lands and moves off a member the
//! simulator stops.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use flotilla_testkit::hub::Hub;
use flotilla_testkit::kubectl::kubectl_bin;
use flotilla_testkit::process::Proc;
use kube::config::{KubeConfigOptions, Kubeconfig};

const COUNT: usize = 50;

fn kubectl(dir: &Path, cluster: &str, args: &[&str]) -> Output {
    kubectl_bin(
        "kubectl",
        &dir.join(format!("{cluster}.kubeconfig")),
        args,
        None,
    )
}

fn ok(dir: &Path, cluster: &str, args: &[&str]) -> String {
    let out = kubectl(dir, cluster, args);
    assert!(
        out.status.success(),
        "kubectl {args:?} on {cluster}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(dir: &Path, cluster: &str, args: &[&str]) -> String {
    let out = kubectl(dir, cluster, args);
    assert!(
        !out.status.success(),
        "kubectl {args:?} on {cluster} succeeded"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Poll `check` every half second until it gives `Ok`; after `secs`, fail saying what it last
/// saw (its `Err`).
async fn until<T>(secs: u64, mut check: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        match check() {
            Ok(v) => return v,
            Err(saw) if started.elapsed() > Duration::from_secs(secs) => {
                panic!("still not so after {secs} s: {saw}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// Ask the simulator (its admin kubeconfig) to `stop` or `start` cluster `name`.
fn control(dir: &Path, verb: &str, name: &str) {
    let path = format!("/sim/clusters/{name}/{verb}");
    let out = kubectl(dir, "sim", &["create", "--raw", &path, "-f", "/dev/null"]);
    assert!(
        out.status.success(),
        "{verb} {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The server URL of `cluster`'s kubeconfig.
fn server(dir: &Path, cluster: &str) -> String {
    let kc = Kubeconfig::read_from(dir.join(format!("{cluster}.kubeconfig"))).unwrap();
    kc.clusters[0]
        .cluster
        .as_ref()
        .unwrap()
        .server
        .clone()
        .unwrap()
}

/// A hub with short health and failover timings (so the failover step takes seconds, not
/// minutes) and a simulator of `COUNT` clusters joined to it in `mode`, serving once this
/// returns.
struct Fleet {
    hub: Hub,
    sim: Proc,
    dir: std::path::PathBuf,
    _tmp: tempfile::TempDir,
}

async fn fleet(mode: &str) -> Fleet {
    let binary = Path::new(env!("CARGO_BIN_EXE_flotilla"));
    let hub = Hub::start(
        binary,
        &[
            "--heartbeat-interval",
            "2s",
            "--cluster-grace-period",
            "10s",
            "--failover-toleration",
            "5s",
        ],
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sim");
    let count = COUNT.to_string();
    let hub_kubeconfig = hub.kubeconfig.to_str().unwrap();
    let args = [
        "sim",
        "--count",
        &count,
        "--out",
        dir.to_str().unwrap(),
        "--hub-kubeconfig",
        hub_kubeconfig,
        "--mode",
        mode,
        "--heartbeat-interval",
        "2s",
    ];
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let mut sim = Proc::start("sim", binary, &args, "info", &tmp.path().join("sim.log")).unwrap();

    // Every cluster answers once the simulator serves; the last one started is m-50.
    let last = format!("m-{COUNT}");
    until(120, || {
        sim.check_alive().unwrap();
        let serving = dir.join(format!("{last}.kubeconfig")).exists()
            && kubectl(&dir, &last, &["get", "namespace", "default"])
                .status
                .success();
        serving
            .then_some(())
            .ok_or_else(|| format!("{last} is not served: {}", sim.log_tail(20)))
    })
    .await;
    Fleet {
        hub,
        sim,
        dir,
        _tmp: tmp,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_simulated_clusters_are_separate_kubernetes_apis() {
    let Fleet {
        hub,
        mut sim,
        dir,
        _tmp,
    } = fleet("push").await;

    // A cluster is a Kubernetes API to kubectl, with its own objects.
    ok(
        &dir,
        "m-7",
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx",
            "--replicas=3",
        ],
    );
    let mine = ok(&dir, "m-7", &["get", "deploy", "-A"]);
    assert!(mine.contains("web"), "{mine}");
    let other = kubectl(&dir, "m-8", &["get", "deploy", "-A"]);
    assert!(other.status.success());
    assert!(
        !String::from_utf8_lossy(&other.stdout).contains("web"),
        "m-8 shows m-7's Deployment"
    );
    let kinds = ok(&dir, "m-7", &["api-resources", "-o", "name"]);
    for kind in [
        "deployments.apps",
        "configmaps",
        "secrets",
        "services",
        "customresourcedefinitions.apiextensions.k8s.io",
        "jobs.batch",
    ] {
        assert!(
            kinds.lines().any(|l| l == kind),
            "m-7 does not serve {kind}: {kinds}"
        );
    }
    assert!(
        !kinds.contains("flotilla.io"),
        "a member cluster serves flotilla's hub kinds: {kinds}"
    );

    // And to kube-rs (which the pull agent uses), path prefix and all.
    let kc = Kubeconfig::read_from(dir.join("m-7.kubeconfig")).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(cfg).unwrap();
    let deploys: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(client, "default");
    let web = deploys
        .get("web")
        .await
        .expect("kube-rs reads m-7's Deployment");
    assert_eq!(web.spec.unwrap().replicas, Some(3));

    // One cluster's token is no good on another; an unknown cluster is 404.
    let m8 = server(&dir, "m-8");
    let refused = fails(&dir, "m-7", &["--server", &m8, "get", "namespaces"]);
    assert!(
        refused.contains("Unauthorized") || refused.contains("provide credentials"),
        "{refused}"
    );
    let nowhere = m8.replace("/m-8", "/m-9999");
    let missing = fails(&dir, "m-7", &["--server", &nowhere, "get", "namespaces"]);
    assert!(missing.contains("NotFound"), "{missing}");

    spread_and_failover(&hub, &mut sim, &dir).await;
    sim.stop().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_simulated_clusters_join_in_pull_mode_each_with_its_own_agent() {
    let Fleet {
        hub,
        mut sim,
        dir,
        _tmp,
    } = fleet("pull").await;
    let stopped = spread_and_failover(&hub, &mut sim, &dir).await;

    // The stopped member's agent stopped with it: its Lease lapsed (Ready Unknown, not the
    // False an agent reports for a member it cannot reach). Started again, its agent rejoins
    // the heartbeat and the cluster is Ready.
    let ready_of = |name: &str| {
        hub.ok(&[
            "get",
            "cluster",
            name,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
        ])
    };
    assert_eq!(ready_of(&stopped), "Unknown", "{stopped} stopped");
    control(&dir, "start", &stopped);
    until(60, || match ready_of(&stopped) {
        r if r == "True" => Ok(()),
        r => Err(format!("{stopped} started again, Ready {r:?}")),
    })
    .await;

    // They asked to join (Pull), each agent holds a credential of its own, and the agents
    // renew the members' Leases.
    let modes = hub.ok(&[
        "get",
        "clusters",
        "-o",
        "jsonpath={.items[*].spec.syncMode}",
    ]);
    let pull = modes.split_whitespace().filter(|m| *m == "Pull").count();
    assert_eq!(pull, COUNT, "sync modes: {modes}");
    let token = |k: usize| {
        std::fs::read_to_string(dir.join(format!("agents/m-{k}/token")))
            .unwrap_or_else(|e| panic!("m-{k}'s agent keeps no token: {e}"))
    };
    assert_ne!(token(1), token(2), "two agents share a credential");
    let holder = hub.ok(&[
        "-n",
        "flotilla-system",
        "get",
        "lease",
        "m-3",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    assert_eq!(holder, "flotilla-sim");
    // The gpu-tainted members of the topology carry their taints (set before approval).
    let taints = hub.ok(&[
        "get",
        "clusters",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}={.spec.taints[*].key}{\"\\n\"}{end}",
    ]);
    let tainted: Vec<&str> = taints.lines().filter(|l| !l.ends_with('=')).collect();
    assert!(
        !tainted.is_empty(),
        "no member carries a taint:\n{taints}\nthe hub's taint changes:\n{}\nthe simulator:\n{}",
        hub.log()
            .lines()
            .filter(|l| l.contains("taints"))
            .collect::<Vec<_>>()
            .join("\n"),
        sim.log_tail(40)
    );
    sim.stop().unwrap();
}

/// Every cluster is Ready on the hub; a Deployment Divided over them lands and its status is
/// summed; the simulator stops a member holding replicas and the hub moves its share. Returns
/// the stopped member's name.
async fn spread_and_failover(hub: &Hub, sim: &mut Proc, dir: &Path) -> String {
    // Every cluster joins the hub and is Ready there.
    until(60, || {
        sim.check_alive().unwrap();
        let ready = hub.ok(&[
            "get",
            "clusters",
            "-o",
            "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}",
        ]);
        let n = ready.lines().filter(|l| *l == "True").count();
        (n == COUNT)
            .then_some(())
            .ok_or_else(|| format!("{n} of {COUNT} clusters Ready on the hub"))
    })
    .await;

    // A Deployment Divided over the fleet lands: its members' replicas add up to the template's.
    hub.ok(&["create", "namespace", "spread"]);
    hub.ok(&[
        "-n",
        "spread",
        "create",
        "deployment",
        "api",
        "--image=nginx",
        "--replicas=100",
    ]);
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: spread}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
"#,
    );
    let landed = |skip: Option<usize>| {
        let mut shares = Vec::new();
        for k in (1..=COUNT).filter(|k| Some(*k) != skip) {
            let out = kubectl(
                dir,
                &format!("m-{k}"),
                &[
                    "-n",
                    "spread",
                    "get",
                    "deploy",
                    "api",
                    "-o",
                    "jsonpath={.spec.replicas}",
                ],
            );
            if let Ok(n) = String::from_utf8_lossy(&out.stdout).trim().parse::<u32>() {
                shares.push((k, n));
            }
        }
        shares
    };
    let shares = until(60, || {
        let shares = landed(None);
        let total: u32 = shares.iter().map(|(_, n)| n).sum();
        let holding = shares.len();
        (total == 100 && holding >= COUNT / 2)
            .then_some(shares)
            .ok_or_else(|| {
                format!("the members hold {total} of 100 replicas in {holding} clusters")
            })
    })
    .await;

    // The members' fake kubelets make the pods ready, and the hub sums their status.
    let hub_ready = || {
        let out = hub.kubectl(&[
            "-n",
            "spread",
            "get",
            "deploy",
            "api",
            "-o",
            "jsonpath={.status.readyReplicas}",
        ]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    until(60, || match hub_ready() {
        r if r == "100" => Ok(()),
        r => Err(format!("the hub counts {r:?} of 100 replicas ready")),
    })
    .await;

    // The simulator stops a member holding replicas: it answers 503, and the hub moves its
    // share to the others.
    let (victim, share) = *shares.iter().find(|(_, n)| *n > 0).unwrap();
    let name = format!("m-{victim}");
    let sim_server = server(dir, "sim");
    let stop_path = format!("/sim/clusters/{name}/stop");
    let refused = fails(
        dir,
        "m-1",
        &[
            "--server",
            &sim_server,
            "create",
            "--raw",
            &stop_path,
            "-f",
            "/dev/null",
        ],
    );
    assert!(
        refused.contains("Unauthorized"),
        "a member's token stops a cluster: {refused}"
    );
    control(dir, "stop", &name);
    let down = fails(dir, &name, &["get", "namespaces"]);
    assert!(down.contains("stopped"), "{down}");
    until(90, || {
        let total: u32 = landed(Some(victim)).iter().map(|(_, n)| n).sum();
        let ready = hub_ready();
        (total == 100 && ready == "100")
            .then_some(())
            .ok_or_else(|| {
                format!(
                    "{name} (holding {share}) stopped; the others hold {total} of 100 replicas, \
                 {ready:?} ready on the hub"
                )
            })
    })
    .await;
    name
}
