//! `/healthz`, `/livez` and `/readyz` as kube-apiserver serves them: `ok`, or with `?verbose`
//! one line per named check (`[+]ping ok` … `healthz check passed`), `?exclude=<check>`
//! (repeatable) to leave a check out, and `/healthz/<check>` for one check alone. A failed check
//! answers 500 with the list, its reason withheld as the endpoint is public (the log has it).
//!
//! The checks carry kube-apiserver's names, because clients and the upstream suite look for
//! them; each is backed by the hub's part that does the same job: `etcd` reads the store, the
//! informer and post-start checks pass once the watch cache and the startup steps (CRDs,
//! bootstrap objects) are done.

use std::time::Duration;

use axum::body::Body;
use http::Response;

use super::response;
use crate::Api;

/// How long the storage check waits for a read.
const STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// What a check looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    /// Always passes while the server answers (`ping`, `log`).
    Alive,
    /// A read from the store succeeds.
    Store,
    /// Startup is complete: the watch cache is loaded and the startup steps ran.
    Started,
}

/// The checks every endpoint serves, in kube-apiserver's order.
const CHECKS: &[(&str, Probe)] = &[
    ("ping", Probe::Alive),
    ("log", Probe::Alive),
    ("etcd", Probe::Store),
    (
        "poststarthook/start-apiserver-admission-initializer",
        Probe::Started,
    ),
    (
        "poststarthook/generic-apiserver-start-informers",
        Probe::Started,
    ),
    (
        "poststarthook/priority-and-fairness-config-consumer",
        Probe::Started,
    ),
    ("poststarthook/priority-and-fairness-filter", Probe::Started),
    (
        "poststarthook/storage-object-count-tracker-hook",
        Probe::Started,
    ),
    (
        "poststarthook/start-apiextensions-informers",
        Probe::Started,
    ),
    (
        "poststarthook/start-apiextensions-controllers",
        Probe::Started,
    ),
    ("poststarthook/crd-informer-synced", Probe::Started),
    (
        "poststarthook/start-system-namespaces-controller",
        Probe::Started,
    ),
    (
        "poststarthook/start-cluster-authentication-info-controller",
        Probe::Started,
    ),
    (
        "poststarthook/start-service-ip-repair-controllers",
        Probe::Started,
    ),
    ("poststarthook/rbac/bootstrap-roles", Probe::Started),
    (
        "poststarthook/scheduling/bootstrap-system-priority-classes",
        Probe::Started,
    ),
    (
        "poststarthook/priority-and-fairness-config-producer",
        Probe::Started,
    ),
    ("poststarthook/bootstrap-controller", Probe::Started),
    (
        "poststarthook/start-kube-aggregator-informers",
        Probe::Started,
    ),
    (
        "poststarthook/apiservice-status-local-available-controller",
        Probe::Started,
    ),
    (
        "poststarthook/apiservice-status-remote-available-controller",
        Probe::Started,
    ),
    (
        "poststarthook/apiservice-registration-controller",
        Probe::Started,
    ),
    (
        "poststarthook/apiservice-discovery-controller",
        Probe::Started,
    ),
    (
        "poststarthook/kube-apiserver-autoregistration",
        Probe::Started,
    ),
    ("autoregister-completion", Probe::Started),
    (
        "poststarthook/apiservice-openapi-controller",
        Probe::Started,
    ),
    (
        "poststarthook/apiservice-openapiv3-controller",
        Probe::Started,
    ),
    ("poststarthook/storage-readiness", Probe::Started),
];

/// The checks only `/readyz` serves, after `etcd`.
const READY_ONLY: &[(&str, Probe)] = &[
    ("etcd-readiness", Probe::Store),
    ("informer-sync", Probe::Started),
];

/// Serve `path` if it is a health endpoint (`/healthz`, `/livez`, `/readyz`, or one of their
/// checks); `None` for any other path.
pub(super) async fn serve(api: &Api, path: &str, query: Option<&str>) -> Option<Response<Body>> {
    let (endpoint, check) = match path.trim_start_matches('/').split_once('/') {
        Some((e, c)) => (e, Some(c)),
        None => (path.trim_start_matches('/'), None),
    };
    let checks = checks_of(endpoint)?;
    Some(match check {
        Some(name) => one(api, &checks, name).await,
        None => root(api, endpoint, &checks, query).await,
    })
}

/// The checks of an endpoint, in order; `None` if it is not a health endpoint.
fn checks_of(endpoint: &str) -> Option<Vec<(&'static str, Probe)>> {
    match endpoint {
        "healthz" | "livez" => Some(CHECKS.to_vec()),
        "readyz" => {
            let mut all = CHECKS[..3].to_vec();
            all.extend_from_slice(READY_ONLY);
            all.extend_from_slice(&CHECKS[3..]);
            all.push(("shutdown", Probe::Alive));
            Some(all)
        }
        _ => None,
    }
}

/// `/healthz/<check>`: `ok`, or 500 with the reason; 404 for a check there is not.
async fn one(api: &Api, checks: &[(&'static str, Probe)], name: &str) -> Response<Body> {
    match checks.iter().find(|(n, _)| *n == name) {
        Some((_, probe)) => match run(api, *probe).await {
            Ok(()) => text(200, "ok".into()),
            Err(e) => text(500, format!("internal server error: {e}\n")),
        },
        None => text(404, "404 page not found\n".into()),
    }
}

/// The endpoint itself: every check not excluded.
async fn root(
    api: &Api,
    endpoint: &str,
    checks: &[(&'static str, Probe)],
    query: Option<&str>,
) -> Response<Body> {
    let params = Params::parse(query);
    let mut results = Vec::new();
    for (name, probe) in checks {
        let outcome = if params.exclude.iter().any(|e| e == name) {
            None
        } else {
            Some(run(api, *probe).await)
        };
        results.push((*name, outcome));
    }
    let (code, body) = render(endpoint, &results, &params);
    if code != 200 {
        let failed: Vec<String> = results
            .iter()
            .filter_map(|(n, r)| match r {
                Some(Err(e)) => Some(format!("[-]{n} failed: {e}")),
                _ => None,
            })
            .collect();
        tracing::info!(endpoint, checks = %failed.join("; "), "health check failed");
    }
    text(code, body)
}

/// The answer for the checks' `results` (`None`: excluded), as kube-apiserver words it.
fn render(
    endpoint: &str,
    results: &[(&str, Option<Result<(), String>>)],
    params: &Params,
) -> (u16, String) {
    let mut out = String::new();
    let mut failed = false;
    for (name, result) in results {
        match result {
            None => out.push_str(&format!("[+]{name} excluded: ok\n")),
            Some(Ok(())) => out.push_str(&format!("[+]{name} ok\n")),
            Some(Err(_)) => {
                // The endpoint is public: the reason goes to the log only.
                out.push_str(&format!("[-]{name} failed: reason withheld\n"));
                failed = true;
            }
        }
    }
    let mut unmatched: Vec<&String> = params
        .exclude
        .iter()
        .filter(|e| !results.iter().any(|(n, _)| n == e))
        .collect();
    if !unmatched.is_empty() {
        unmatched.sort();
        unmatched.dedup();
        let names: Vec<String> = unmatched.iter().map(|n| format!("{n:?}")).collect();
        out.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            names.join(",")
        ));
    }
    if failed {
        // Always verbose on failure, as kube-apiserver.
        return (500, format!("{out}{endpoint} check failed\n"));
    }
    if !params.verbose {
        return (200, "ok".into());
    }
    (200, format!("{out}{endpoint} check passed\n"))
}

/// Run one probe.
async fn run(api: &Api, probe: Probe) -> Result<(), String> {
    match probe {
        Probe::Alive => Ok(()),
        Probe::Started if api.is_ready() => Ok(()),
        Probe::Started => Err("not finished: loading the watch cache".into()),
        Probe::Store => {
            match tokio::time::timeout(STORE_TIMEOUT, api.store.get("/healthz")).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(format!("the store could not be read: {e}")),
                Err(_) => Err(format!(
                    "the store did not answer within {}s",
                    STORE_TIMEOUT.as_secs()
                )),
            }
        }
    }
}

/// The query of a health request: `verbose` (present, any value) and `exclude` (repeatable).
#[derive(Debug, Default, PartialEq, Eq)]
struct Params {
    verbose: bool,
    exclude: Vec<String>,
}

impl Params {
    fn parse(query: Option<&str>) -> Params {
        let mut p = Params::default();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match k.as_ref() {
                "verbose" => p.verbose = true,
                "exclude" => p.exclude.push(v.into_owned()),
                _ => {}
            }
        }
        p
    }
}

fn text(code: u16, body: String) -> Response<Body> {
    response::raw_typed(code, body.into(), "text/plain; charset=utf-8")
}

#[cfg(test)]
mod tests;
