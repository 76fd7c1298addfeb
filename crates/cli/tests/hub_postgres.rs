//! The hub on a real PostgreSQL (`--store postgres://…`): the same API, data kept across
//! restarts. Needs `FLOTILLA_TEST_POSTGRES_URL` (scripts/test starts PostgreSQL and sets it).

mod common;

use common::Hub;

fn fresh_database() -> String {
    let server = flotilla_testkit::postgres::required_server();
    flotilla_testkit::postgres::create_database(&server, "hub_e2e")
}

#[test]
fn crud_and_restart_on_postgres() {
    let store = fresh_database();
    let mut hub = Hub::start_with(&["--store", &store]);
    let ns = std::env::temp_dir().join(format!("pg-ns-{}.json", std::process::id()));
    std::fs::write(
        &ns,
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"pg"}}"#,
    )
    .unwrap();
    hub.ok(&[
        "create",
        "--raw",
        "/api/v1/namespaces",
        "-f",
        ns.to_str().unwrap(),
    ]);
    let cm = std::env::temp_dir().join(format!("pg-cm-{}.json", std::process::id()));
    std::fs::write(&cm, r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"pg","labels":{"a":"b"}},"data":{"k":"v"}}"#).unwrap();
    hub.ok(&[
        "create",
        "--raw",
        "/api/v1/namespaces/pg/configmaps",
        "-f",
        cm.to_str().unwrap(),
    ]);
    assert_eq!(
        hub.ok(&["get", "cm", "c", "-n", "pg", "-o", "jsonpath={.data.k}"]),
        "v"
    );
    hub.ok(&["label", "cm", "c", "-n", "pg", "x=y"]);
    hub.kill9();
    hub.restart();
    assert_eq!(
        hub.ok(&[
            "get",
            "cm",
            "c",
            "-n",
            "pg",
            "-o",
            "jsonpath={.metadata.labels.x}"
        ]),
        "y"
    );
    assert!(hub.ok(&["get", "ns"]).contains("pg"));
    hub.ok(&["delete", "cm", "c", "-n", "pg"]);
    let e = hub.fails(&["get", "cm", "c", "-n", "pg"]);
    assert!(e.contains("not found"), "{e}");
    let _ = std::fs::remove_file(ns);
    let _ = std::fs::remove_file(cm);
}
