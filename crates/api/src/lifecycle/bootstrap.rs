//! What kube-apiserver itself keeps in the `default` namespace: the Service `kubernetes`, and
//! the Endpoints and EndpointSlice `kubernetes` naming the hub's own address and port. Clients
//! inside a cluster find the API through them, and the upstream e2e suite refuses to start
//! without the Service.
//!
//! Level-triggered like kube-apiserver's endpoint reconciler: each object is created when
//! missing and its owned fields put back when changed (a deleted one comes back at once, a
//! changed one within the watch's delay), with a resync every [`RESYNC`] for good measure.
//! Replicas of one hub on one store (`Config::replica`) would overwrite each other's address
//! endlessly: they leave the objects to the replica they name while it accepts connections, and
//! the first to find it gone names itself.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::objects::{commit_create, guaranteed_update, Writer};
use crate::registry::ResourceInfo;
use crate::Api;

/// How often the objects are checked even when nothing changed (kube-apiserver's
/// `--endpoint-reconciler` interval).
const RESYNC: Duration = Duration::from_secs(10);
/// The field manager kube-apiserver writes them with.
const MANAGER: &str = "kube-apiserver";
/// The name of the three objects.
const NAME: &str = "kubernetes";
/// Their namespace.
const NAMESPACE: &str = "default";
/// The first address of kube-apiserver's default `--service-cluster-ip-range` (10.0.0.0/24),
/// which it gives the `kubernetes` Service.
pub const SERVICE_IP: &str = "10.0.0.1";

/// One object the server keeps: its resource and the fields it owns.
pub(crate) struct Kept {
    /// `(group, version, plural)` of its resource.
    pub resource: (&'static str, &'static str, &'static str),
    /// The object to create when it is missing.
    pub object: Value,
    /// Top-level paths (JSON pointers) put back when they differ from `object`'s.
    pub owned: &'static [&'static str],
}

/// The hub's address as the Endpoints name it: the IP and port of `host:port` or `[v6]:port`.
pub(crate) fn endpoint_address(advertise: &str) -> Option<(IpAddr, u16)> {
    let (host, port) = advertise.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.parse().ok()?, port.parse().ok()?))
}

/// The three objects for a hub at `ip:port`, as kube-apiserver writes them.
pub(crate) fn kept_objects(ip: IpAddr, port: u16) -> Vec<Kept> {
    let https = json!([{"name": "https", "port": port, "protocol": "TCP"}]);
    let address_type = if ip.is_ipv6() { "IPv6" } else { "IPv4" };
    let meta = |labels: Value| json!({"name": NAME, "namespace": NAMESPACE, "labels": labels});
    vec![
        Kept {
            resource: ("", "v1", "services"),
            object: json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": meta(json!({"component": "apiserver", "provider": "kubernetes"})),
                "spec": {
                    "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
                    "clusterIP": SERVICE_IP,
                    "clusterIPs": [SERVICE_IP],
                    "type": "ClusterIP",
                    "sessionAffinity": "None",
                    "ipFamilies": ["IPv4"],
                    "ipFamilyPolicy": "SingleStack",
                    "internalTrafficPolicy": "Cluster",
                },
            }),
            // kube-apiserver corrects the ports and the type; the cluster IP is immutable.
            owned: &["/spec/ports", "/spec/type"],
        },
        Kept {
            resource: ("", "v1", "endpoints"),
            object: json!({
                "apiVersion": "v1", "kind": "Endpoints",
                // The slice below is kube-apiserver's own: the mirroring controller skips this.
                "metadata": meta(json!({"endpointslice.kubernetes.io/skip-mirror": "true"})),
                "subsets": [{"addresses": [{"ip": ip.to_string()}], "ports": https}],
            }),
            owned: &[
                "/subsets",
                "/metadata/labels/endpointslice.kubernetes.io~1skip-mirror",
            ],
        },
        Kept {
            resource: ("discovery.k8s.io", "v1", "endpointslices"),
            object: json!({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": meta(json!({"kubernetes.io/service-name": NAME})),
                "addressType": address_type,
                "endpoints": [{"addresses": [ip.to_string()], "conditions": {"ready": true}}],
                "ports": https,
            }),
            owned: &[
                "/addressType",
                "/endpoints",
                "/ports",
                "/metadata/labels/kubernetes.io~1service-name",
            ],
        },
    ]
}

/// `current` with every owned field of `kept` as `kept` has it, or `None` when it already is.
pub(crate) fn corrected(kept: &Kept, current: &Value) -> Option<Value> {
    let mut new = current.clone();
    let mut changed = false;
    for path in kept.owned {
        let want = kept.object.pointer(path);
        if current.pointer(path) != want {
            changed = true;
            set_pointer(&mut new, path, want.cloned().unwrap_or(Value::Null));
        }
    }
    changed.then_some(new)
}

/// Sets the value at a JSON pointer, creating the objects on the way.
fn set_pointer(obj: &mut Value, path: &str, v: Value) {
    let mut at = obj;
    let mut parts = path.split('/').skip(1).peekable();
    while let Some(raw) = parts.next() {
        let part = raw.replace("~1", "/").replace("~0", "~");
        if !at.is_object() {
            *at = json!({});
        }
        let Some(map) = at.as_object_mut() else {
            return;
        };
        if parts.peek().is_none() {
            map.insert(part, v);
            return;
        }
        at = map.entry(part).or_insert_with(|| json!({}));
    }
}

pub(super) async fn run(api: Arc<Api>) {
    let Some((ip, port)) = endpoint_address(&api.config.advertise_address) else {
        tracing::warn!(
            address = %api.config.advertise_address,
            "the advertised address is no IP and port: no Service default/kubernetes"
        );
        return;
    };
    let worker_api = api.clone();
    let tx = super::kick::start(
        RESYNC,
        Duration::from_millis(200),
        move || {
            let api = worker_api.clone();
            async move { reconcile(&api, ip, port).await }
        },
        // The namespace may not exist yet at startup.
        |e| tracing::debug!(error = %e, "default/kubernetes not yet in place; retrying"),
    );
    let mut watched = watched_keys(&api);
    watched.push("/registry/core/namespaces/default".to_string());
    super::follow(api, "/registry/", move |c| {
        let tx = tx.clone();
        let hit = watched.contains(&c.object.key);
        async move {
            if hit {
                let _ = tx.send(());
            }
        }
    })
    .await;
}

/// The storage keys of the kept objects, and of the namespace they live in.
fn watched_keys(api: &Api) -> Vec<String> {
    let snap = api.registry.snapshot();
    kept_objects(std::net::Ipv4Addr::LOCALHOST.into(), 0)
        .iter()
        .filter_map(|k| snap.get(k.resource.0, k.resource.1, k.resource.2))
        .map(|res| res.key(Some(NAMESPACE), NAME))
        .collect()
}

/// Create what is missing, correct what differs; as a replica, only when the objects name no
/// other replica that answers.
async fn reconcile(api: &Arc<Api>, ip: IpAddr, port: u16) -> crate::error::Result<()> {
    if api.config.replica && another_replica_answers(api, (ip, port)).await {
        return Ok(());
    }
    let snap = api.registry.snapshot();
    for kept in kept_objects(ip, port) {
        let (g, v, p) = kept.resource;
        // EndpointSlices may not be served by this build.
        let Some(res) = snap.get(g, v, p).cloned() else {
            continue;
        };
        ensure(api, &res, &kept).await?;
    }
    Ok(())
}

async fn ensure(api: &Arc<Api>, res: &ResourceInfo, kept: &Kept) -> crate::error::Result<()> {
    let key = res.key(Some(NAMESPACE), NAME);
    if api.cache.get(&key).is_none() {
        return match commit_create(api, res, kept.object.clone(), Some(MANAGER), false).await {
            Ok(_) => {
                tracing::info!(resource = %res.plural, "created default/kubernetes");
                Ok(())
            }
            Err(e) if e.code == 409 => Ok(()),
            Err(e) => Err(e),
        };
    }
    let r = guaranteed_update(api, Writer::Server, res, &key, NAME, false, |cur| {
        Ok(corrected(kept, cur).unwrap_or_else(|| cur.clone()))
    })
    .await;
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Does Endpoints default/kubernetes name another address than `own`, where a TCP connection
/// opens within a second? Replicas leave those objects to the one they name while it lives.
async fn another_replica_answers(api: &Api, own: (IpAddr, u16)) -> bool {
    let snap = api.registry.snapshot();
    let Some(res) = snap.get("", "v1", "endpoints") else {
        return false;
    };
    let Some(cached) = api.cache.get(&res.key(Some(NAMESPACE), NAME)) else {
        return false;
    };
    let Ok(endpoints) = serde_json::from_slice::<Value>(&cached.raw()) else {
        return false;
    };
    let ip = endpoints
        .pointer("/subsets/0/addresses/0/ip")
        .and_then(Value::as_str)
        .and_then(|ip| ip.parse::<IpAddr>().ok());
    let port = endpoints
        .pointer("/subsets/0/ports/0/port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok());
    let (Some(ip), Some(port)) = (ip, port) else {
        return false;
    };
    if (ip, port) == own {
        return false;
    }
    let connect = tokio::net::TcpStream::connect((ip, port));
    let answers = matches!(
        tokio::time::timeout(Duration::from_secs(1), connect).await,
        Ok(Ok(_))
    );
    if !answers {
        tracing::info!(
            named = %format!("{ip}:{port}"),
            "the replica default/kubernetes names does not answer: naming this one"
        );
    }
    answers
}

#[cfg(test)]
mod tests;
