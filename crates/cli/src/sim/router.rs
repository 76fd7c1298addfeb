//! Requests to `/clusters/<name>/…` go to that cluster's API, which sees the path after it.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use flotilla_api::server::Router;
use flotilla_api::Api;

/// The simulated clusters by name.
pub struct Clusters {
    apis: HashMap<String, Arc<Api>>,
}

impl Clusters {
    pub fn new(apis: HashMap<String, Arc<Api>>) -> Clusters {
        Clusters { apis }
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
    fn route(&self, req: &mut http::Request<Body>) -> Option<Arc<Api>> {
        let (name, rest) = split(req.uri().path())?;
        let api = self.apis.get(name)?.clone();
        let path_and_query = match req.uri().query() {
            Some(q) => format!("{rest}?{q}"),
            None => rest.to_owned(),
        };
        let mut parts = req.uri().clone().into_parts();
        parts.path_and_query = Some(path_and_query.parse().ok()?);
        *req.uri_mut() = http::Uri::from_parts(parts).ok()?;
        Some(api)
    }

    fn apis(&self) -> Vec<Arc<Api>> {
        self.apis.values().cloned().collect()
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
