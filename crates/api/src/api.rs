//! The server's shared state and its startup: system namespaces, bootstrap RBAC and flotilla's
//! kinds, written through the write engine.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use flotilla_store::Store;

use crate::access::{signing_key, Access};
use crate::auth::{AdminToken, TokenAuthority};
use crate::cache::Cache;
use crate::error::{ApiError, Result};
use crate::metrics::Metrics;
use crate::objects;
use crate::registry::{Registry, ResourceInfo};

/// How the server is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// The token that authenticates as cluster admin (only its digest is kept).
    pub admin_token: AdminToken,
    /// `host:port` clients use (discovery's serverAddressByClientCIDRs, token issuer).
    pub advertise_address: String,
    /// The `iss` of service-account tokens, which verification requires too; `None`:
    /// `https://ADVERTISE_ADDRESS`. Replicas sharing one identity share one issuer, so that any
    /// replica accepts the tokens of any other.
    pub service_account_issuer: Option<String>,
    /// One replica of several API servers on one store (`flotilla serve --nats`): Service,
    /// Endpoints and EndpointSlice `default/kubernetes` name one replica, the others taking
    /// over when it stops answering (each correcting them to its own would never end).
    pub replica: bool,
    /// The PEM file holding the key that signs service-account tokens, generated there at first
    /// start (normally [`crate::access::signing_key::FILE_NAME`] in the data directory).
    pub signing_key_file: PathBuf,
    /// The longest lifetime a service-account token gets (`--service-account-max-token-expiration`):
    /// a TokenRequest asking for more gets this much. `None`: only Kubernetes' 2^32 s limit.
    pub max_token_expiration: Option<std::time::Duration>,
    /// How often the store drops history older than one interval (kube-apiserver compacts
    /// every five minutes): what watches can resume from and how long continue tokens last.
    pub compaction_interval: std::time::Duration,
    /// How many changes a watcher of the whole store or of one resource may fall behind before
    /// its watch ends (its client resumes from its last resourceVersion):
    /// [`crate::cache::BROADCAST_CAPACITY`] for the hub; small for the many APIs of `flotilla sim`.
    pub watch_buffer: usize,
    /// Serve flotilla's own kinds (`Cluster`, `Work`, policies …), installed as CRDs at start:
    /// the hub does; the API of a simulated member cluster (`flotilla sim`) does not.
    pub flotilla_kinds: bool,
    /// What the store keeps sealed ([`crate::encryption`]); the default seals nothing.
    pub encryption: Arc<crate::encryption::Encryption>,
    /// The audit policy and log (`--audit-policy-file`, `--audit-log-path`); `None`: no audit.
    pub audit: Option<Arc<crate::audit::Audit>>,
    /// Read-only requests served at once (`--max-requests-inflight`; 0: no limit); more wait
    /// in fair queues or get 429 (see [`crate::flowcontrol::dispatch`]).
    pub max_requests_inflight: usize,
    /// Mutating requests served at once (`--max-mutating-requests-inflight`; 0: no limit).
    pub max_mutating_requests_inflight: usize,
    /// Watches one user may hold open (`--max-watches-per-user`; 0: no limit); see
    /// [`crate::limits::watches`].
    pub max_watches_per_user: usize,
    /// The most items a LIST without `limit` returns (`--max-unpaged-list-items`; 0: no
    /// limit); see [`crate::limits::unpaged_list`].
    pub max_unpaged_list_items: usize,
}

impl Config {
    /// A hub's configuration with every setting but these at its default (those of `flotilla
    /// serve`): no separate issuer, one replica, compaction every 5 minutes, flotilla's kinds
    /// served, no encryption or audit, kube-apiserver's in-flight limits.
    pub fn new(
        admin_token: AdminToken,
        advertise_address: String,
        signing_key_file: PathBuf,
    ) -> Config {
        Config {
            admin_token,
            advertise_address,
            service_account_issuer: None,
            replica: false,
            signing_key_file,
            max_token_expiration: None,
            compaction_interval: std::time::Duration::from_secs(300),
            watch_buffer: crate::cache::BROADCAST_CAPACITY,
            flotilla_kinds: true,
            encryption: Default::default(),
            audit: None,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            max_watches_per_user: crate::limits::DEFAULT_MAX_WATCHES_PER_USER,
            max_unpaged_list_items: crate::limits::DEFAULT_MAX_UNPAGED_LIST_ITEMS,
        }
    }
}

/// Namespaces every Kubernetes API has, plus flotilla's own.
const SYSTEM_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "flotilla-system",
];

/// The API server's state.
pub struct Api {
    /// Configuration.
    pub config: Config,
    /// Storage.
    pub store: Store,
    /// Watch cache.
    pub cache: Arc<Cache>,
    /// What is served.
    pub registry: Registry,
    /// Authentication and authorization.
    pub access: Access,
    /// Metrics.
    pub metrics: Metrics,
    /// API Priority and Fairness: what each request is classified as.
    pub flowcontrol: crate::flowcontrol::FlowControl,
    /// Schemas of built-in kinds and CRDs.
    pub schemas: crate::schemas::Schemas,
    /// Open watches per user ([`crate::limits::watches`]).
    pub watches: Arc<crate::limits::watches::Watches>,
    ready: AtomicBool,
    /// Set when the server begins to shut down: open watches end at once (clients re-watch
    /// elsewhere or after the restart) instead of holding the drain for its whole timeout.
    stopping: tokio::sync::watch::Sender<bool>,
}

impl Api {
    /// Tell open watches to end: the server is shutting down.
    pub fn begin_shutdown(&self) {
        self.stopping.send_replace(true);
    }

    /// Completes when the server begins to shut down.
    pub fn stopping(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.stopping.subscribe();
        async move {
            let _ = rx.wait_for(|stopping| *stopping).await;
        }
    }

    /// Load the cache, start the lifecycle loops, create the system namespaces, install
    /// flotilla's own kinds.
    pub async fn start(config: Config, store: Store) -> Result<Arc<Api>> {
        let signer = signing_key::load_or_generate(&config.signing_key_file)?;
        let issuer = config
            .service_account_issuer
            .clone()
            .unwrap_or_else(|| format!("https://{}", config.advertise_address));
        let mut authority = TokenAuthority::new(issuer, signer);
        if let Some(max) = config.max_token_expiration {
            authority =
                authority.with_max_expiration(i64::try_from(max.as_secs()).unwrap_or(i64::MAX));
        }
        let (reads, writes) = (
            config.max_requests_inflight,
            config.max_mutating_requests_inflight,
        );
        let watches_per_user = config.max_watches_per_user;
        let cache = Cache::start_with(
            store.clone(),
            config.watch_buffer,
            config.encryption.clone(),
        )
        .await?;
        let api = Arc::new(Api {
            access: Access::new(config.admin_token.clone(), authority),
            config,
            store,
            cache,
            registry: Registry::new(),
            metrics: Metrics::default(),
            flowcontrol: crate::flowcontrol::FlowControl::with_limits(reads, writes),
            schemas: crate::schemas::Schemas::new(),
            watches: crate::limits::watches::Watches::new(watches_per_user),
            ready: AtomicBool::new(false),
            stopping: tokio::sync::watch::Sender::new(false),
        });
        crate::lifecycle::start(&api);
        crate::flowcontrol::start(&api);
        crate::aggregator::start(&api);
        api.access.start(api.cache.clone());
        // Like kube-apiserver: keep about one interval (five minutes) of history for watches
        // and continue tokens, compacting what is older.
        api.store.spawn_auto_compaction(
            api.config
                .compaction_interval
                .max(std::time::Duration::from_secs(1)),
        );
        api.bootstrap().await?;
        api.ready.store(true, Ordering::SeqCst);
        Ok(api)
    }

    async fn bootstrap(self: &Arc<Self>) -> Result<()> {
        let snap = self.registry.snapshot();
        let ns = snap
            .get("", "v1", "namespaces")
            .cloned()
            .ok_or_else(|| ApiError::internal("namespaces not served"))?;
        for name in SYSTEM_NAMESPACES {
            if self.cache.get(&ns.key(None, name)).is_none() {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
                match objects::commit_create(self, &ns, obj, Some("flotilla"), false).await {
                    Ok(_) => tracing::info!(namespace = name, "created system namespace"),
                    Err(e) if e.code == 409 => {}
                    Err(e) => return Err(e),
                }
            }
        }
        for obj in crate::auth::bootstrap::objects() {
            let plural = if obj["kind"] == "ClusterRole" {
                "clusterroles"
            } else {
                "clusterrolebindings"
            };
            let res = snap
                .get("rbac.authorization.k8s.io", "v1", plural)
                .cloned()
                .ok_or_else(|| ApiError::internal("RBAC not served"))?;
            let name = obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if self.cache.get(&res.key(None, &name)).is_none() {
                match objects::commit_create(self, &res, obj, Some("flotilla"), false).await {
                    Ok(_) | Err(ApiError { code: 409, .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if self.config.flotilla_kinds {
            crate::flotilla_kinds::install(self).await?;
        }
        Ok(())
    }

    /// A started API on SQLite in `dir`, with admin token `test` (for unit tests).
    #[cfg(test)]
    pub(crate) async fn for_tests(dir: &std::path::Path) -> Arc<Api> {
        let url = format!("sqlite:{}", dir.join("db").display());
        let store = Store::open(&url).await.expect("open the test store");
        let config = Config::new(
            AdminToken::new("test"),
            "127.0.0.1:6443".into(),
            dir.join("signing-key.pem"),
        );
        Api::start(config, store).await.expect("start the test API")
    }

    /// Has startup finished?
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// A new set of established CRDs: serve their resources and schemas.
    pub(crate) fn set_custom_resources(&self, custom: Vec<ResourceInfo>, crds: Vec<Value>) {
        self.schemas.set_crds(&crds);
        self.registry.set_custom(custom);
    }
}
