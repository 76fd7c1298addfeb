use super::*;

fn params(q: &str) -> Params {
    Params::parse(Some(q))
}

#[test]
fn the_query_says_verbose_and_what_to_exclude() {
    assert_eq!(params(""), Params::default());
    assert!(params("verbose").verbose);
    assert!(params("verbose=1").verbose);
    assert_eq!(
        params("exclude=etcd&exclude=log").exclude,
        vec!["etcd", "log"]
    );
}

#[test]
fn each_endpoint_serves_kubes_checks() {
    let names = |e: &str| -> Vec<&str> { checks_of(e).unwrap().iter().map(|(n, _)| *n).collect() };
    for e in ["healthz", "livez", "readyz"] {
        let n = names(e);
        for want in [
            "ping",
            "log",
            "etcd",
            "poststarthook/start-apiserver-admission-initializer",
            "poststarthook/crd-informer-synced",
            "poststarthook/bootstrap-controller",
            "autoregister-completion",
            "poststarthook/apiservice-openapi-controller",
        ] {
            assert!(n.contains(&want), "{e}: {want}");
        }
    }
    assert!(names("readyz").contains(&"informer-sync"));
    assert!(!names("livez").contains(&"informer-sync"));
    assert!(checks_of("version").is_none());
}

/// Each check with its outcome (`None`: excluded).
type Results<'a> = Vec<(&'a str, Option<Result<(), String>>)>;

#[test]
fn answers_are_worded_as_kube_apiservers() {
    let ok = |n| (n, Some(Ok(())));
    let cases: Vec<(&str, Results, &str, u16, &str)> = vec![
        ("healthz", vec![ok("ping"), ok("etcd")], "", 200, "ok"),
        (
            "healthz",
            vec![ok("ping"), ok("etcd")],
            "verbose",
            200,
            "[+]ping ok\n[+]etcd ok\nhealthz check passed\n",
        ),
        (
            "readyz",
            vec![ok("ping"), ("etcd", None)],
            "verbose&exclude=etcd&exclude=nope",
            200,
            "[+]ping ok\n[+]etcd excluded: ok\n\
             warn: some health checks cannot be excluded: no matches for \"nope\"\n\
             readyz check passed\n",
        ),
        (
            "livez",
            vec![ok("ping"), ("etcd", Some(Err("down".into())))],
            "",
            500,
            "[+]ping ok\n[-]etcd failed: reason withheld\nlivez check failed\n",
        ),
    ];
    for (endpoint, results, q, code, body) in cases {
        assert_eq!(
            render(endpoint, &results, &params(q)),
            (code, body.to_string()),
            "{endpoint}?{q}"
        );
    }
}
