//! The same workflow with the oldest and newest kubectl the hub supports (1.27 fetches OpenAPI
//! v2 as protobuf to validate; 1.33 uses v3 and sends protobuf bodies): client-side apply twice
//! (a strategic merge patch the second time), edit, diff, explain, scale, rollout restart,
//! prune, delete.

mod common;

use std::path::Path;

use common::{kubectl_bin, versioned_kubectl, Hub};

const DEPLOY_V1: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web, stack: shop}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1.25", env: [{name: A, value: "1"}], ports: [{containerPort: 80}]}
      - {name: log, image: "busybox:1.36"}
"#;

fn run(bin: &Path, hub: &Hub, args: &[&str], stdin: Option<&str>) -> String {
    let out = kubectl_bin(bin.to_str().unwrap(), &hub.kubeconfig, args, stdin);
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}\nhub log tail:\n{}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr),
        hub.log()
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn workflow(minor: u32) {
    let k = versioned_kubectl(minor);
    let hub = Hub::start();
    let dir = hub.dir.path();
    run(&k, &hub, &["create", "namespace", "shop"], None);
    run(&k, &hub, &["apply", "-f", "-"], Some(DEPLOY_V1));
    // Second apply: a strategic merge patch built from last-applied: change the image, drop
    // the log container, add an env var.
    let v2 = DEPLOY_V1
        .replace("nginx:1.25", "nginx:1.27")
        .replace("      - {name: log, image: \"busybox:1.36\"}\n", "")
        .replace(
            r#"env: [{name: A, value: "1"}]"#,
            r#"env: [{name: A, value: "1"}, {name: B, value: "2"}]"#,
        );
    let diff = kubectl_bin(
        k.to_str().unwrap(),
        &hub.kubeconfig,
        &["diff", "-f", "-"],
        Some(&v2),
    );
    assert_eq!(
        diff.status.code(),
        Some(1),
        "kubectl diff shows a difference (exit 1): {}",
        String::from_utf8_lossy(&diff.stderr)
    );
    assert!(String::from_utf8_lossy(&diff.stdout).contains("nginx:1.27"));
    run(&k, &hub, &["apply", "-f", "-"], Some(&v2));
    let got = run(&k, &hub, &["get", "deploy", "web", "-n", "shop", "-o", "jsonpath={.spec.template.spec.containers[*].name}|{.spec.template.spec.containers[0].image}|{.spec.template.spec.containers[0].env[*].name}"], None);
    assert_eq!(got, "web|nginx:1.27|A B", "kubectl {minor}");

    run(
        &k,
        &hub,
        &["scale", "deploy/web", "-n", "shop", "--replicas=5"],
        None,
    );
    assert_eq!(
        run(
            &k,
            &hub,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                "shop",
                "-o",
                "jsonpath={.spec.replicas}"
            ],
            None
        ),
        "5"
    );
    run(
        &k,
        &hub,
        &["set", "image", "deploy/web", "-n", "shop", "web=nginx:1.28"],
        None,
    );
    run(
        &k,
        &hub,
        &["rollout", "restart", "deploy/web", "-n", "shop"],
        None,
    );
    let ann = run(
        &k,
        &hub,
        &[
            "get",
            "deploy",
            "web",
            "-n",
            "shop",
            "-o",
            "jsonpath={.spec.template.metadata.annotations}",
        ],
        None,
    );
    assert!(ann.contains("kubectl.kubernetes.io/restartedAt"), "{ann}");

    // edit through a scripted editor.
    let editor = dir.join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/replicas: 5/replicas: 3/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(&k)
        .arg("--kubeconfig")
        .arg(&hub.kubeconfig)
        .args(["edit", "deploy/web", "-n", "shop"])
        .env("KUBE_EDITOR", &editor)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "edit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        run(
            &k,
            &hub,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                "shop",
                "-o",
                "jsonpath={.spec.replicas}"
            ],
            None
        ),
        "3"
    );

    let explain = run(&k, &hub, &["explain", "deployment.spec.replicas"], None);
    assert!(
        explain.contains("replicas") && explain.to_lowercase().contains("integer"),
        "{explain}"
    );

    // apply --prune removes what left the set.
    let cms = r#"{"apiVersion":"v1","kind":"List","items":[
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p1","namespace":"shop","labels":{"set":"p"}}},
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p2","namespace":"shop","labels":{"set":"p"}}}]}"#;
    run(
        &k,
        &hub,
        &[
            "apply",
            "-f",
            "-",
            "-l",
            "set=p",
            "--prune",
            "--prune-allowlist=core/v1/ConfigMap",
        ],
        Some(cms),
    );
    let one = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p1","namespace":"shop","labels":{"set":"p"}}}"#;
    run(
        &k,
        &hub,
        &[
            "apply",
            "-f",
            "-",
            "-l",
            "set=p",
            "--prune",
            "--prune-allowlist=core/v1/ConfigMap",
        ],
        Some(one),
    );
    let left = run(
        &k,
        &hub,
        &["get", "cm", "-n", "shop", "-l", "set=p", "-o", "name"],
        None,
    );
    assert_eq!(left.trim(), "configmap/p1", "kubectl {minor}");

    run(&k, &hub, &["delete", "deploy", "web", "-n", "shop"], None);
}

#[test]
fn kubectl_1_27_workflow() {
    workflow(27);
}

#[test]
fn kubectl_1_33_workflow() {
    workflow(33);
}
