use super::*;

fn file(p: &str) -> Option<Roots> {
    Some(Roots::File(p.into()))
}

#[test]
fn tls_settings_follow_libpq() {
    let base = "postgres://u@db.example:5433/flotilla";
    let cases: &[(&str, SslMode, Option<Roots>)] = &[
        ("", SslMode::Prefer, None),
        ("?sslmode=disable", SslMode::Disable, None),
        (
            "?sslmode=disable&sslrootcert=/ca.pem",
            SslMode::Disable,
            None,
        ),
        ("?sslmode=prefer", SslMode::Prefer, None),
        (
            "?sslmode=prefer&sslrootcert=/ca.pem",
            SslMode::Prefer,
            file("/ca.pem"),
        ),
        ("?sslmode=require", SslMode::Require, None),
        (
            "?sslmode=require&sslrootcert=/ca.pem",
            SslMode::Require,
            file("/ca.pem"),
        ),
        ("?sslmode=verify-ca", SslMode::VerifyCa, Some(Roots::System)),
        (
            "?sslmode=verify-ca&sslrootcert=/ca.pem",
            SslMode::VerifyCa,
            file("/ca.pem"),
        ),
        (
            "?sslmode=verify-full",
            SslMode::VerifyFull,
            Some(Roots::System),
        ),
        (
            "?sslrootcert=system",
            SslMode::VerifyFull,
            Some(Roots::System),
        ),
        (
            "?sslmode=verify-full&sslrootcert=%2Fetc%2Fpg%20ca.pem",
            SslMode::VerifyFull,
            file("/etc/pg ca.pem"),
        ),
    ];
    for (query, mode, roots) in cases {
        let p = parse(&format!("{base}{query}")).unwrap_or_else(|e| panic!("{query}: {e}"));
        assert_eq!(p.tls.mode, *mode, "{query}");
        assert_eq!(&p.tls.roots, roots, "{query}");
        assert_eq!(p.host, "db.example:5433", "{query}");
        let driver = match mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            _ => tokio_postgres::config::SslMode::Require,
        };
        assert_eq!(p.config.get_ssl_mode(), driver, "{query}");
    }
}

#[test]
fn other_parameters_reach_the_driver() {
    let p = parse(
        "postgres://u:pw@h/db?application_name=hub&sslmode=verify-full&sslrootcert=/c&\
         connect_timeout=7&sslcert=/a.crt&sslkey=/a.key",
    )
    .unwrap();
    assert_eq!(p.config.get_application_name(), Some("hub"));
    assert_eq!(
        p.config.get_connect_timeout(),
        Some(&std::time::Duration::from_secs(7))
    );
    assert_eq!(p.config.get_password(), Some(&b"pw"[..]));
    assert_eq!(p.tls.client, Some(("/a.crt".into(), "/a.key".into())));
    assert_eq!(p.host, "h:5432");
}

#[test]
fn bad_tls_parameters_are_refused_without_echoing_the_password() {
    let cases = [
        ("sslmode=allow", "allow is not supported"),
        ("sslmode=verify", "is not one of"),
        (
            "sslrootcert=system&sslmode=require",
            "needs sslmode=verify-full",
        ),
        ("sslcert=/a.crt", "go together"),
        ("sslkey=/a.key", "go together"),
        ("sslmode=%ff", "percent-encoded"),
        ("port=x", "invalid value for option `port`"),
        ("colour=red", "unknown option `colour`"),
    ];
    for (query, want) in cases {
        let url = format!("postgres://u:hunter2@h/db?{query}");
        let e = match parse(&url) {
            Ok(_) => panic!("{query} was accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(want), "{query}: {e}");
        assert!(!e.contains("hunter2"), "{query}: {e}");
    }
}

#[test]
fn host_labels_name_every_server() {
    let cases = [
        ("postgres://u@a,b:6000/db", "a:5432,b:6000"),
        ("postgres://u@a:1,b:2/db", "a:1,b:2"),
        ("postgres://u@[::1]:7/db", "[::1]:7"),
        ("postgres://u@/db?host=/run/pg", "/run/pg"),
    ];
    for (url, want) in cases {
        assert_eq!(parse(url).unwrap().host, want, "{url}");
    }
}

#[test]
fn local_servers_are_loopback_or_sockets() {
    let cases = [
        ("postgres://u@127.0.0.1/db", true),
        ("postgres://u@localhost/db", true),
        ("postgres://u@[::1]/db", true),
        ("postgres://u@/db?host=/run/pg", true),
        ("postgres://u@db.example/db", false),
        ("postgres://u@db.example/db?hostaddr=127.0.0.1", true),
        ("postgres://u@127.0.0.1,10.0.0.2/db", false),
    ];
    for (url, want) in cases {
        assert_eq!(is_local(&parse(url).unwrap().config), want, "{url}");
    }
}

#[test]
fn passwords_are_redacted() {
    let cases = [
        (
            "postgres://u:secret@h:5432/db",
            "postgres://u:***@h:5432/db",
        ),
        ("postgres://u:s@c/r@t@h/db", "postgres://u:***@h/db"),
        ("postgres://u@h/db", "postgres://u@h/db"),
        (
            "postgres://u@h/db?sslmode=require&password=secret",
            "postgres://u@h/db?sslmode=require&password=***",
        ),
        (
            "postgresql://h/db?pass%77ord=secret",
            "postgresql://h/db?password=***",
        ),
        ("sqlite:/x/y.db", "sqlite:/x/y.db"),
    ];
    for (url, want) in cases {
        assert_eq!(redact_url(url), want, "{url}");
    }
}
