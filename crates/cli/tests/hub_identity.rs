//! Replicas of the hub on one PostgreSQL database share one identity when given one identity
//! key: two `flotilla serve` processes, each with its own data directory, accept each other's
//! admin and service-account tokens and serve certificates of one CA; a replica given another
//! key refuses to start. Needs `FLOTILLA_TEST_POSTGRES_URL` (scripts/test starts PostgreSQL and
//! sets it).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{kubectl_bin, Hub, FLOTILLA};

fn fresh_database() -> String {
    fresh_database_named("hub_identity")
}

fn fresh_database_named(prefix: &str) -> String {
    let server = flotilla_testkit::postgres::required_server();
    flotilla_testkit::postgres::create_database(&server, prefix)
}

/// A kubeconfig line's value (`server:`, `token:`).
fn kubeconfig_value(path: &Path, field: &str) -> String {
    let text = std::fs::read_to_string(path).expect("kubeconfig");
    text.lines()
        .find_map(|l| l.trim().strip_prefix(field))
        .unwrap_or_else(|| panic!("no {field} in {}", path.display()))
        .trim()
        .trim_matches(['\'', '"'])
        .to_string()
}

/// `from`'s kubeconfig with its `server:` and (if given) `token:` lines replaced, written to
/// `to`.
fn rewrite_kubeconfig(from: &Path, to: &Path, server: &str, token: Option<&str>) {
    let text = std::fs::read_to_string(from).expect("kubeconfig");
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let indent = &l[..l.len() - l.trim_start().len()];
            match (l.trim_start(), token) {
                (t, _) if t.starts_with("server:") => format!("{indent}server: {server}"),
                (t, Some(token)) if t.starts_with("token:") => format!("{indent}token: {token}"),
                _ => l.to_string(),
            }
        })
        .collect();
    std::fs::write(to, out.join("\n")).expect("write kubeconfig");
}

fn stdout_of(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Run `flotilla serve ARGS` to its end (it must end within a minute): its output.
fn serve_to_the_end(args: &[&str]) -> Output {
    let mut child = Command::new(FLOTILLA)
        .arg("serve")
        .args(args)
        .env_remove("FLOTILLA_STORE")
        .env_remove("FLOTILLA_NATS")
        .env_remove("FLOTILLA_IDENTITY_KEY")
        .env_remove("FLOTILLA_IDENTITY_KEY_FILE")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start flotilla serve");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "flotilla serve {args:?} kept running; it should have refused to start: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn key_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n")).expect("write key");
    path
}

#[test]
fn replicas_with_one_key_share_one_identity() {
    let store = fresh_database();
    let keys = tempfile::tempdir().unwrap();
    let key = key_file(
        keys.path(),
        "identity.key",
        "2xW9kq1lq6Kq0dZ4m0l5Jb1uWm3Lq9Yc8p7Vf6Gh5Tr4Ew3Qs2",
    );
    let key = key.to_str().unwrap();
    let args = [
        "--store",
        &store,
        "--identity-key-file",
        key,
        "--no-controllers",
    ];
    let one = Hub::start_with(&args);
    one.ok(&["create", "serviceaccount", "robot", "-n", "default"]);
    let sa_token = one.ok(&["create", "token", "robot", "-n", "default"]);
    let sa_token = sa_token.trim();

    // Started after the service account exists, so it is in replica 2's cache without NATS.
    let two = Hub::start_with(&args);
    assert_eq!(
        kubeconfig_value(&two.kubeconfig, "token:"),
        kubeconfig_value(&one.kubeconfig, "token:"),
        "the replicas' admin tokens differ"
    );
    assert_ne!(one.server(), two.server());

    // Replica 1's kubeconfig (its CA, its admin token) on replica 2's address.
    let one_at_two = keys.path().join("one-at-two.kubeconfig");
    rewrite_kubeconfig(&one.kubeconfig, &one_at_two, &two.server(), None);
    let names = stdout_of(
        &kubectl_bin("kubectl", &one_at_two, &["get", "ns", "-o", "name"], None),
        "kubectl get ns on replica 2 with replica 1's kubeconfig",
    );
    assert!(names.contains("namespace/default"), "{names}");

    // The token replica 1 issued, on replica 2.
    let sa_at_two = keys.path().join("sa-at-two.kubeconfig");
    rewrite_kubeconfig(&one.kubeconfig, &sa_at_two, &two.server(), Some(sa_token));
    let who = stdout_of(
        &kubectl_bin(
            "kubectl",
            &sa_at_two,
            &[
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
            None,
        ),
        "kubectl auth whoami on replica 2 with replica 1's service-account token",
    );
    assert_eq!(who, "system:serviceaccount:default:robot");

    // A replica given another key refuses to start and writes nothing.
    let wrong = key_file(
        keys.path(),
        "wrong.key",
        "not-the-key-the-first-replica-was-given-0123456789",
    );
    let data = tempfile::tempdir().unwrap();
    let out = serve_to_the_end(&[
        "--data-dir",
        data.path().to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--store",
        &store,
        "--identity-key-file",
        wrong.to_str().unwrap(),
        "--no-controllers",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started with a wrong key: {stderr}");
    assert!(
        stderr.contains("identity key") && stderr.contains("--identity-key-file"),
        "{stderr}"
    );
    // …and so does one given no key at all.
    let out = serve_to_the_end(&[
        "--data-dir",
        data.path().to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--store",
        &store,
        "--no-controllers",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started without the key: {stderr}");
    assert!(stderr.contains("share an identity"), "{stderr}");
    for secret in [
        "ca.key",
        "admin.token",
        "sa-signing-key.pem",
        "admin.kubeconfig",
    ] {
        assert!(
            !data.path().join(secret).exists(),
            "{secret} written with a wrong key"
        );
    }
}

/// With --nats, replicas started together: a service account created through replica 1 after
/// both started, and its token, work on replica 2 too.
#[test]
fn replicas_on_nats_accept_each_others_new_tokens() {
    let nats = std::env::var("FLOTILLA_TEST_NATS_URL").unwrap_or_else(|_| {
        panic!("FLOTILLA_TEST_NATS_URL is not set: run scripts/test, which starts nats-server (Debian package nats-server) and sets it")
    });
    let store = fresh_database_named("hub_identity_nats");
    let keys = tempfile::tempdir().unwrap();
    let key = key_file(
        keys.path(),
        "identity.key",
        "Zq8Lm2Nv4Bx6Cz1Ak3Sj5Dh7Fg9Hl0Qw2Er4Ty6Ui8Op0As",
    );
    let args = [
        "--store",
        &store,
        "--nats",
        &nats,
        "--identity-key-file",
        key.to_str().unwrap(),
        "--no-controllers",
    ];
    let one = Hub::start_with(&args);
    let two = Hub::start_with(&args);
    one.ok(&["create", "serviceaccount", "later", "-n", "default"]);
    let token = one.ok(&["create", "token", "later", "-n", "default"]);
    let at_two = keys.path().join("later-at-two.kubeconfig");
    rewrite_kubeconfig(&one.kubeconfig, &at_two, &two.server(), Some(token.trim()));
    // Replica 2 learns of the service account through its watch feed: allow it a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    let who = loop {
        let out = kubectl_bin(
            "kubectl",
            &at_two,
            &[
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
            None,
        );
        if out.status.success() || Instant::now() > deadline {
            break stdout_of(
                &out,
                "kubectl auth whoami on replica 2 with a token of replica 1",
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(who, "system:serviceaccount:default:later");

    // The replicas do not fight over default/kubernetes: it names the first and stays put.
    let endpoints = |hub: &Hub| {
        hub.ok(&[
            "get",
            "endpoints",
            "kubernetes",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.resourceVersion} {.subsets[0].ports[0].port}",
        ])
    };
    let before = endpoints(&one);
    let port = one.server().rsplit(':').next().unwrap().to_string();
    assert!(
        before.ends_with(&format!(" {port}")),
        "{before} (replica 1 on {port})"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(endpoints(&two), before, "default/kubernetes keeps changing");

    // Replica 1 gone, replica 2 names itself (within a resync, 10 s).
    let mut one = one;
    one.stop();
    let port = two.server().rsplit(':').next().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(25);
    loop {
        let now = endpoints(&two);
        if now.ends_with(&format!(" {port}")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "default/kubernetes still names the stopped replica: {now}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// --nats is refused without a PostgreSQL store or without an identity key, before anything
/// listens or connects.
#[test]
fn nats_needs_postgres_and_an_identity_key() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_str().unwrap();
    let base = ["--data-dir", dir, "--listen", "127.0.0.1:0"];
    let out = serve_to_the_end(&[&base[..], &["--nats", "nats://127.0.0.1:4222"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--nats needs a PostgreSQL store"),
        "{stderr}"
    );

    let pg = ["--store", "postgres://nobody@127.0.0.1:1/none"];
    let out = serve_to_the_end(&[&base[..], &pg, &["--nats", "nats://127.0.0.1:4222"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--nats needs an identity key") && stderr.contains("every replica"),
        "{stderr}"
    );

    let short = key_file(data.path(), "short.key", "too short");
    let out = serve_to_the_end(
        &[
            &base[..],
            &pg,
            &["--identity-key-file", short.to_str().unwrap()],
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("32 bytes or more"), "{stderr}");
}
