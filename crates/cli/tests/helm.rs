//! Helm 3 against the hub: install, upgrade, rollback and uninstall of the small chart in
//! `tests/charts/shop`, with the real `helm` binary that `scripts/members build` builds from its Go
//! module into the machine's cache.
//!
//! Helm exercises what kubectl alone does not: release records as labelled Secrets listed by
//! selector, three-way strategic merge patches on upgrade, deletion of objects that leave the
//! chart, and rollback to an older manifest.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Hub;

/// The helm binary, built by `scripts/members build` (the suite fails, never skips, without it).
fn helm_bin() -> PathBuf {
    let helm = flotilla_testkit::Members::helm().unwrap_or_else(|e| {
        panic!("helm is not available: {e:#}\nbuild it with `scripts/members build` and re-run")
    });
    assert!(
        helm.exists(),
        "{} is missing: run `scripts/members build` and re-run",
        helm.display()
    );
    helm
}

struct Helm {
    bin: PathBuf,
    kubeconfig: PathBuf,
    home: tempfile::TempDir,
}

impl Helm {
    fn new(hub: &Hub) -> Helm {
        Helm {
            bin: helm_bin(),
            kubeconfig: hub.kubeconfig.clone(),
            home: tempfile::tempdir().expect("helm home"),
        }
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        let home = self.home.path();
        Command::new(&self.bin)
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .env_remove("KUBECONFIG")
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"))
            .output()
            .expect("run helm")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "helm {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

fn chart() -> String {
    let p: &Path = Path::new(env!("CARGO_MANIFEST_DIR"));
    p.join("tests/charts/shop").display().to_string()
}

fn jsonpath(hub: &Hub, what: &[&str], path: &str) -> String {
    let expr = format!("jsonpath={path}");
    let mut args: Vec<&str> = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-n", "shop", "-o", &expr]);
    hub.ok(&args)
}

fn exists(hub: &Hub, kind: &str, name: &str) -> bool {
    hub.kubectl(&["get", kind, name, "-n", "shop"])
        .status
        .success()
}

#[test]
fn install_upgrade_rollback_uninstall() {
    let hub = Hub::start();
    let helm = Helm::new(&hub);
    let chart = chart();

    // install: the namespace, the chart's objects, and release v1 as a labelled Secret.
    let out = helm.ok(&[
        "install",
        "shop",
        &chart,
        "-n",
        "shop",
        "--create-namespace",
    ]);
    assert!(out.contains("STATUS: deployed"), "{out}");
    assert_eq!(
        jsonpath(&hub, &["deploy", "shop-web"], "{.spec.replicas}"),
        "2"
    );
    assert_eq!(
        jsonpath(&hub, &["cm", "shop-config"], "{.data.greeting}"),
        "hello"
    );
    assert_eq!(
        jsonpath(&hub, &["svc", "shop-web"], "{.spec.ports[0].port}"),
        "80"
    );
    assert!(!exists(&hub, "secret", "shop-extra"));
    let releases = hub.ok(&[
        "get",
        "secrets",
        "-n",
        "shop",
        "-l",
        "owner=helm,name=shop",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert_eq!(releases, "sh.helm.release.v1.shop.v1");
    let annotations = jsonpath(&hub, &["deploy", "shop-web"], "{.metadata.annotations}");
    assert!(
        annotations.contains("meta.helm.sh/release-name"),
        "{annotations}"
    );

    // A change made by hand to a field the chart does not set survives the upgrade (three-way
    // merge), while the chart's own changes land.
    hub.ok(&[
        "annotate",
        "deploy",
        "shop-web",
        "-n",
        "shop",
        "team=payments",
    ]);
    let out = helm.ok(&[
        "upgrade",
        "shop",
        &chart,
        "-n",
        "shop",
        "--set",
        "replicas=3",
        "--set",
        "greeting=hi",
        "--set",
        "extra=s3cret",
    ]);
    assert!(out.contains("REVISION: 2"), "{out}");
    assert_eq!(
        jsonpath(&hub, &["deploy", "shop-web"], "{.spec.replicas}"),
        "3"
    );
    assert_eq!(
        jsonpath(
            &hub,
            &["deploy", "shop-web"],
            "{.metadata.annotations.team}"
        ),
        "payments"
    );
    assert_eq!(
        jsonpath(&hub, &["cm", "shop-config"], "{.data.greeting}"),
        "hi"
    );
    // The chart writes the Secret's stringData; the hub stores it as base64 data.
    assert_eq!(
        jsonpath(&hub, &["secret", "shop-extra"], "{.data.token}"),
        "czNjcmV0"
    );
    let values = helm.ok(&["get", "values", "shop", "-n", "shop", "-o", "json"]);
    assert!(values.contains("\"replicas\":3"), "{values}");

    // rollback to v1: values back, the Secret that only v2 had is deleted.
    helm.ok(&["rollback", "shop", "1", "-n", "shop"]);
    assert_eq!(
        jsonpath(&hub, &["deploy", "shop-web"], "{.spec.replicas}"),
        "2"
    );
    assert_eq!(
        jsonpath(&hub, &["cm", "shop-config"], "{.data.greeting}"),
        "hello"
    );
    assert!(!exists(&hub, "secret", "shop-extra"));
    let history = helm.ok(&["history", "shop", "-n", "shop"]);
    let revisions: Vec<&str> = history.lines().skip(1).collect();
    assert_eq!(revisions.len(), 3, "{history}");
    assert!(
        revisions[2].contains("deployed") && revisions[2].contains("Rollback to 1"),
        "{history}"
    );
    let list = helm.ok(&["list", "-n", "shop", "-o", "json"]);
    assert!(
        list.contains("\"revision\":\"3\"") && list.contains("\"status\":\"deployed\""),
        "{list}"
    );

    // uninstall removes the chart's objects and the release records.
    helm.ok(&["uninstall", "shop", "-n", "shop"]);
    for (kind, name) in [
        ("deploy", "shop-web"),
        ("cm", "shop-config"),
        ("svc", "shop-web"),
    ] {
        assert!(
            !exists(&hub, kind, name),
            "{kind}/{name} survived uninstall"
        );
    }
    let left = hub.ok(&[
        "get",
        "secrets",
        "-n",
        "shop",
        "-l",
        "owner=helm",
        "-o",
        "name",
    ]);
    assert_eq!(left.trim(), "", "release records survived uninstall");
    let out = helm.run(&["status", "shop", "-n", "shop"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("release: not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_failed_install_reports_the_servers_reason() {
    let hub = Hub::start();
    let helm = Helm::new(&hub);
    // Without --create-namespace the namespace does not exist: the hub's 404 reaches the user.
    let out = helm.run(&["install", "shop", &chart(), "-n", "absent"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("namespaces \"absent\" not found"), "{err}");
}
