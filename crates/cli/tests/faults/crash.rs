//! SIGKILL of the hub while 1,000 Deployments propagate to five simulated members (pull
//! mode, an agent per cluster): after the restart every binding converges, and every member
//! holds exactly the Deployments placed on it: none missing, none orphaned, none twice.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_testkit::kubectl::kubectl_bin;

use crate::common::Hub;

const COUNT: usize = 1000;
const CLUSTERS: usize = 5;

fn deployments() -> String {
    let mut out = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..COUNT {
        out.push_str(&format!(
            "- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: d-{i:04}, namespace: crash}}
  spec:
    replicas: 1
    selector: {{matchLabels: {{app: d-{i:04}}}}}
    template:
      metadata: {{labels: {{app: d-{i:04}}}}}
      spec:
        containers: [{{name: app, image: nginx}}]
"
        ));
    }
    out
}

const POLICY: &str = r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: crash}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
"#;

/// How many Works the hub holds.
fn works(hub: &Hub) -> usize {
    hub.ok(&["get", "works", "-A", "-o", "name"])
        .lines()
        .count()
}

/// Deployment name → clusters its binding places it on (`d-0001-deployment` → `d-0001`).
fn placed(hub: &Hub) -> BTreeMap<String, BTreeSet<String>> {
    let out = hub.ok(&[
        "get",
        "rb",
        "-n",
        "crash",
        "-o",
        r#"jsonpath={range .items[*]}{.metadata.name} {.spec.clusters[*].name}{"\n"}{end}"#,
    ]);
    out.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next()?.strip_suffix("-deployment")?.to_owned();
            Some((name, words.map(str::to_owned).collect()))
        })
        .collect()
}

/// Deployment name → (cluster → replicas) over every member; `Err` when a member did not
/// answer.
fn running(sims: &Path) -> Result<BTreeMap<String, BTreeMap<String, u32>>, String> {
    let mut all: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for k in 1..=CLUSTERS {
        let cluster = format!("crash-{k}");
        let out = kubectl_bin(
            "kubectl",
            &sims.join(format!("{cluster}.kubeconfig")),
            &[
                "get",
                "deploy",
                "-n",
                "crash",
                "-o",
                r#"jsonpath={range .items[*]}{.metadata.name} {.spec.replicas}{"\n"}{end}"#,
            ],
            None,
        );
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            if err.contains("NotFound") {
                continue;
            }
            return Err(format!("{cluster}: {err}"));
        }
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut words = line.split_whitespace();
            let (Some(name), Some(replicas)) = (words.next(), words.next()) else {
                continue;
            };
            all.entry(name.to_owned())
                .or_default()
                .insert(cluster.clone(), replicas.parse().unwrap_or(0));
        }
    }
    Ok(all)
}

/// What differs between the placements and what the members run ("" when they agree and
/// every Deployment runs once with its one replica).
fn differences(
    placed: &BTreeMap<String, BTreeSet<String>>,
    running: &BTreeMap<String, BTreeMap<String, u32>>,
) -> Vec<String> {
    let mut diff = Vec::new();
    for (name, clusters) in placed {
        let at: BTreeSet<String> = running
            .get(name)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if clusters.is_empty() || *clusters != at {
            diff.push(format!("{name}: placed on {clusters:?}, runs in {at:?}"));
        }
    }
    for (name, at) in running {
        if !placed.contains_key(name) {
            diff.push(format!("{name}: orphan in {at:?}"));
        } else if at.values().sum::<u32>() != 1 {
            diff.push(format!("{name}: {at:?} replicas, not 1"));
        }
    }
    diff
}

#[test]
fn a_hub_killed_mid_propagation_converges_without_duplicates_or_orphans() {
    let _serial = super::serial();
    let mut hub = Hub::start_with(&["--heartbeat-interval", "2s"]);
    let (mut sim, sims) = super::sim(&hub, "crash", CLUSTERS, &[]);
    let ready = || {
        let out = hub.ok(&[
            "get",
            "clusters",
            "-o",
            r#"jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}"#,
        ]);
        out.split_whitespace().filter(|s| *s == "True").count()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while ready() < CLUSTERS {
        sim.check_alive().expect("the simulator runs");
        assert!(
            Instant::now() < deadline,
            "{CLUSTERS} simulated clusters not Ready in 60 s"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    hub.ok(&["create", "namespace", "crash"]);
    hub.ok_stdin(&["apply", "-f", "-"], POLICY);
    // Apply the 1,000 in the background, and kill the hub once a fifth of them have Works:
    // some templates have not arrived yet, others have bindings but no Works, others Works
    // not yet applied.
    let manifests = hub.dir.path().join("deployments.yaml");
    std::fs::write(&manifests, deployments()).expect("write the manifests");
    let kubeconfig = hub.kubeconfig.clone();
    let apply = || {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["apply", "-f"])
            .arg(&manifests)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl apply")
    };
    let mut applying = apply();
    let deadline = Instant::now() + Duration::from_secs(120);
    let at_kill = loop {
        let n = works(&hub);
        if n >= COUNT / 5 {
            break n;
        }
        assert!(Instant::now() < deadline, "only {n} Works after 120 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    hub.kill9();
    // kubectl would retry against the dead hub for minutes: it goes with the hub.
    let _ = applying.kill();
    let _ = applying.wait();
    eprintln!("killed the hub with {at_kill} of {COUNT} Works written");
    hub.restart();
    // As a user (or a GitOps tool) would: apply the same manifests again.
    let again = apply().wait_with_output().expect("kubectl apply");
    assert!(
        again.status.success(),
        "applying again after the restart: {}",
        String::from_utf8_lossy(&again.stderr)
    );

    let started = Instant::now();
    let mut last = Vec::new();
    while started.elapsed() < Duration::from_secs(240) {
        sim.check_alive().expect("the simulator runs");
        let placed = placed(&hub);
        if placed.len() == COUNT {
            if let Ok(running) = running(&sims) {
                last = differences(&placed, &running);
                if last.is_empty() {
                    break;
                }
            }
        } else {
            last = vec![format!("{} of {COUNT} bindings", placed.len())];
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(
        last.is_empty(),
        "not converged 240 s after the restart; {} differences, the first: {:?}",
        last.len(),
        &last[..last.len().min(10)]
    );
    eprintln!("converged {:?} after the restart", started.elapsed());
    // One Work per placed cluster, none twice.
    assert_eq!(works(&hub), COUNT, "Works on the hub after converging");
}
