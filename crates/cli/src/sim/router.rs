//! Requests to `/clusters/<name>/…` go to that cluster's API, which sees the path after it.
//!
//! The simulator's own control, with its admin token (`DIR/admin.token`, in
//! `DIR/sim.kubeconfig`): `POST /sim/clusters/<name>/stop` makes that cluster answer every
//! request 503, as an API server that is down behind its load balancer would, until
//! `POST /sim/clusters/<name>/start`. `kubectl --kubeconfig DIR/sim.kubeconfig create --raw
//! /sim/clusters/m-7/stop -f /dev/null` does it.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use flotilla_api::auth::AdminToken;
use flotilla_api::error::ApiError;
use flotilla_api::handlers::response;
use flotilla_api::server::Router;
use flotilla_api::Api;
use http::{Method, Request, Response};
use serde_json::json;
use tokio::sync::watch;

/// The simulated clusters by name, whether each is stopped, and who may stop them.
pub struct Clusters {
    apis: HashMap<String, (Arc<Api>, watch::Sender<bool>)>,
    admin: AdminToken,
}

impl Clusters {
    pub fn new(apis: HashMap<String, Arc<Api>>, admin: AdminToken) -> Clusters {
        let apis = apis
            .into_iter()
            .map(|(name, api)| (name, (api, watch::Sender::new(false))))
            .collect();
        Clusters { apis, admin }
    }

    /// Whether `name` is stopped, as it changes (what a simulated cluster's agent follows).
    pub fn stopped(&self, name: &str) -> Option<watch::Receiver<bool>> {
        self.apis.get(name).map(|(_, stopped)| stopped.subscribe())
    }

    /// Answer a control request: `path` is what follows `/sim/clusters/`.
    fn control(&self, req: &Request<Body>, path: &str) -> Response<Body> {
        let bearer = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !bearer.is_some_and(|t| self.admin.matches(t)) {
            return response::error(&ApiError::unauthorized());
        }
        let Some((name, verb)) = path.split_once('/') else {
            return response::error(&ApiError::unknown_path(req.uri().path()));
        };
        let Some((_, state)) = self.apis.get(name) else {
            return response::error(&ApiError::new(
                404,
                "NotFound",
                format!("the simulator has no cluster {name:?}"),
            ));
        };
        if req.method() != Method::POST {
            return response::error(&ApiError::method_not_allowed("POST to stop or start"));
        }
        let stop = match verb {
            "stop" => true,
            "start" => false,
            _ => return response::error(&ApiError::unknown_path(req.uri().path())),
        };
        let changed = state.send_if_modified(|s| std::mem::replace(s, stop) != stop);
        tracing::info!(cluster = name, verb, changed, "simulated cluster {verb}");
        response::json(200, &json!({"cluster": name, "stopped": *state.borrow()}))
    }
}

/// The cluster name and the rest of `path` (`/` at least), for a path under `/clusters/`.
fn split(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix("/clusters/")?;
    match rest.find('/') {
        Some(i) => Some((&rest[..i], &rest[i..])),
        None => Some((rest, "/")),
    }
}

impl Router for Clusters {
    fn route(&self, req: &mut Request<Body>) -> Result<Arc<Api>, Box<Response<Body>>> {
        let path = req.uri().path().to_owned();
        if let Some(rest) = path.strip_prefix("/sim/clusters/") {
            return Err(Box::new(self.control(req, rest)));
        }
        let not_found = || Box::new(response::error(&ApiError::unknown_path(&path)));
        let (name, rest) = split(&path).ok_or_else(not_found)?;
        let (api, stopped) = self.apis.get(name).ok_or_else(not_found)?;
        if *stopped.borrow() {
            return Err(Box::new(response::error(&ApiError::new(
                503,
                "ServiceUnavailable",
                format!("cluster {name} is stopped (flotilla sim)"),
            ))));
        }
        let path_and_query = match req.uri().query() {
            Some(q) => format!("{rest}?{q}"),
            None => rest.to_owned(),
        };
        let mut parts = req.uri().clone().into_parts();
        parts.path_and_query = Some(path_and_query.parse().map_err(|_| not_found())?);
        *req.uri_mut() = http::Uri::from_parts(parts).map_err(|_| not_found())?;
        Ok(api.clone())
    }

    fn apis(&self) -> Vec<Arc<Api>> {
        self.apis.values().map(|(api, _)| api.clone()).collect()
    }

    fn front(&self) -> Option<Arc<Api>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn paths_split_into_cluster_and_rest() {
        assert_eq!(split("/clusters/m-7/api/v1"), Some(("m-7", "/api/v1")));
        assert_eq!(split("/clusters/m-7"), Some(("m-7", "/")));
        assert_eq!(split("/clusters/m-7/"), Some(("m-7", "/")));
        assert_eq!(split("/api/v1"), None);
    }
}
