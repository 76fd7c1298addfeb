//! `flotilla serve`: the hub.

pub(crate) mod dns;
mod encryption;
pub(crate) mod files;
mod identity;
pub(crate) mod pki;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

/// Options of `flotilla serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Directory for the database, certificates, tokens and admin.kubeconfig.
    #[arg(long, default_value = "./flotilla-data", env = "FLOTILLA_DATA_DIR")]
    data_dir: PathBuf,
    /// Address to listen on (HTTPS). Port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:6443", env = "FLOTILLA_LISTEN")]
    listen: SocketAddr,
    /// Storage: `sqlite:PATH` (default: DATA_DIR/flotilla.db) or `postgres://user@host:port/db`
    /// (TLS as libpq's sslmode: `?sslmode=verify-full&sslrootcert=CA.pem`; default prefer).
    // Its value may hold a password: never shown in --help.
    #[arg(long, env = "FLOTILLA_STORE", hide_env_values = true)]
    store: Option<String>,
    /// When a write is acknowledged. `full`: on disk (each group commit is flushed with fsync,
    /// concurrent writes sharing the flush), so it survives power loss. `relaxed`: committed
    /// but not yet flushed, as flotilla did before: it survives the process being killed, not
    /// the machine (the last writes may be lost; the database stays consistent). For labs.
    #[arg(long, value_enum, default_value_t = Durability::Full, env = "FLOTILLA_DURABILITY")]
    durability: Durability,
    /// kube-apiserver's EncryptionConfiguration file (apiserver.config.k8s.io/v1): which
    /// resources are stored encrypted, with which providers (aesgcm, aescbc, secretbox,
    /// identity) and keys; the first provider of a resource writes, all of them read. Rotate a
    /// key by listing the new one first, restarting, and rewriting the objects (`kubectl get
    /// secrets -A -o json | kubectl replace -f -`). Without it, Secrets are encrypted with the
    /// hub's own key (DATA_DIR/encryption.key, or derived from the identity key for replicas).
    #[arg(long, value_name = "FILE")]
    encryption_provider_config: Option<PathBuf>,
    /// kube-apiserver's audit Policy file (audit.k8s.io/v1): rules by user, group, verb,
    /// resource, namespace or non-resource URL give each request a level (None, Metadata,
    /// Request, RequestResponse); the first rule that matches wins. Needs --audit-log-path.
    #[arg(long, value_name = "FILE", requires = "audit_log_path")]
    audit_policy_file: Option<PathBuf>,
    /// Where audit events go, one audit.k8s.io/v1 Event as JSON per line (`-`: standard
    /// output). Needs --audit-policy-file.
    #[arg(long, value_name = "FILE", requires = "audit_policy_file")]
    audit_log_path: Option<PathBuf>,
    /// Rotate the audit log when it passes this many megabytes (0: never).
    #[arg(long, value_name = "MB", default_value_t = 100)]
    audit_log_maxsize: u64,
    /// Rotated audit logs kept (FILE.1 the newest); older ones are removed.
    #[arg(long, value_name = "N", default_value_t = 10)]
    audit_log_maxbackup: usize,
    /// Run as one replica of several sharing the PostgreSQL store: announce this replica's
    /// commits on this NATS server and follow the others', so every replica's watches carry
    /// every write. Needs a postgres:// --store and an identity key (--identity-key-file).
    #[arg(long, value_name = "nats://HOST:PORT", env = "FLOTILLA_NATS")]
    nats: Option<String>,
    /// A file holding the identity key: secret text of 32 bytes or more (e.g. `head -c 48
    /// /dev/urandom | base64`), the same for every replica on one PostgreSQL store. The replicas
    /// then share the CA, the admin token and the service-account signing key, kept in the
    /// store encrypted with it: the first replica creates them, the others load them. The
    /// environment variable FLOTILLA_IDENTITY_KEY may hold the key text itself instead.
    #[arg(long, value_name = "FILE", env = "FLOTILLA_IDENTITY_KEY_FILE")]
    identity_key_file: Option<PathBuf>,
    /// Extra names or IPs for the serving certificate (repeatable), e.g. the name of the
    /// balancer in front of the replicas.
    #[arg(long = "tls-san")]
    tls_san: Vec<String>,
    /// The issuer (`iss`) of service-account tokens; default `https://LISTEN-ADDRESS`. Replicas
    /// sharing an identity take the first replica's, so give the balancer's URL on it.
    #[arg(long, value_name = "URL")]
    service_account_issuer: Option<String>,
    /// The longest a service-account token lives (`kubectl create token`, agents' credentials):
    /// a request for longer gets this long, as with kube-apiserver's flag. Between 1h and 2^32
    /// seconds; 0 for no cap. Agents renew their tokens at half-life.
    #[arg(long, default_value = "24h", value_parser = parse_max_token_expiration)]
    service_account_max_token_expiration: std::time::Duration,
    /// Run only the API server: no controllers, no push workers (they can run elsewhere).
    #[arg(long)]
    no_controllers: bool,
    /// Connections served at once. More wait, unanswered, until one closes: raise it with the
    /// fleet (each pull agent holds one connection) and the process's open-file limit.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// A client must send its first request's whole headers this long after its TLS
    /// handshake, or its connection is closed; it also bounds the TLS handshake (at most 10s).
    /// Connections without a request for 90s are closed too (on HTTP/1.1, a later request's
    /// headers must be whole within 90s of the previous response).
    #[arg(long, default_value = "32s", value_parser = parse_header_read_timeout)]
    header_read_timeout: std::time::Duration,
    /// Read-only requests (get, list) served at once, as kube-apiserver's flag; more wait in
    /// fair queues, one per user and priority level, served in turn, so one flooding client
    /// cannot starve others; a full queue (128) or 15 s of waiting is a 429 with Retry-After.
    /// Watches and the exempt priority level (system:masters, health checks) take no seat. 0:
    /// no limit.
    #[arg(long, default_value_t = 400)]
    max_requests_inflight: usize,
    /// Mutating requests (create, update, patch, delete) served at once, queued the same way.
    #[arg(long, default_value_t = 200)]
    max_mutating_requests_inflight: usize,
    /// Watches one user may hold open at once; the next is a 429 with Retry-After until one
    /// closes. Members of system:masters (the admin, the hub's own controllers) are not
    /// counted. 0: no limit.
    #[arg(long, default_value_t = flotilla_api::limits::DEFAULT_MAX_WATCHES_PER_USER)]
    max_watches_per_user: usize,
    /// The most items a LIST without `limit` returns; a larger one is a 413 saying to page
    /// (`?limit=500` and `continue`, as kubectl, client-go and kube-rs do by default). 0: no
    /// limit.
    #[arg(long, default_value_t = flotilla_api::limits::DEFAULT_MAX_UNPAGED_LIST_ITEMS)]
    max_unpaged_list_items: usize,
    /// Requests one HTTP/2 connection may have open at once. Clients built on hyper (kube-rs,
    /// the agents, the controllers in this process) queue past it rather than open another
    /// connection, so it must exceed their concurrent watches: about 20, plus one per
    /// propagated kind and one per push member.
    #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u32).range(1..))]
    http2_max_streams_per_connection: u32,
    /// How often the store compacts history older than one interval, as kube-apiserver's
    /// --etcd-compaction-interval (tests shorten it to see continue tokens expire).
    #[arg(long, default_value = "5m", value_parser = crate::fleet::parse_duration, hide = true)]
    compaction_interval: std::time::Duration,
    /// Serve the fleet's DNS names on this address, over UDP and TCP (e.g. 0.0.0.0:53, or
    /// 127.0.0.1:5353 unprivileged), answering for --dns-zone from memory. Needs --dns-zone.
    /// `flotilla dns` serves the same names from its own process.
    #[arg(long, value_name = "ADDR")]
    dns_listen: Option<SocketAddr>,
    /// With --dns-listen: the multi-cluster services zone answered beside --dns-zone on the
    /// same sockets, `<svc>.<ns>.svc.<NAME>` for each ServiceImport; "" answers none.
    #[arg(long, value_name = "NAME", default_value = crate::dns::clusterset::DEFAULT_ZONE,
          value_parser = crate::dns::clusterset::parse_clusterset_zone)]
    clusterset_zone: String,
    /// With --dns-listen: a file mapping client networks to regions (`CIDR REGION` lines, or a
    /// MaxMind DB: `maxmind FILE.mmdb` with `country CODE REGION` / `continent CODE REGION`
    /// lines) and the distances between regions (`distance REGION REGION N` lines), for
    /// GlobalServices with the Geo strategy.
    #[arg(long, value_name = "FILE")]
    dns_geo_file: Option<PathBuf>,
    /// The controllers' options (unless --no-controllers).
    #[command(flatten)]
    pub(crate) controllers: crate::controllers::ControllerArgs,
}

/// `--durability`: when the store acknowledges a write.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Durability {
    Full,
    Relaxed,
}

impl From<Durability> for flotilla_store::Durability {
    fn from(d: Durability) -> Self {
        match d {
            Durability::Full => flotilla_store::Durability::Full,
            Durability::Relaxed => flotilla_store::Durability::Relaxed,
        }
    }
}

/// Run the hub until SIGTERM or Ctrl-C.
pub async fn run(args: ServeArgs) -> Result<()> {
    crate::memory::no_huge_pages();
    let dns = dns::Plan::from_args(&args)?;
    files::private_dir(&args.data_dir)?;
    let dir = args
        .data_dir
        .canonicalize()
        .context("resolving the data directory")?;
    files::private_files(&dir);
    let store_url = match &args.store {
        Some(u) => u.clone(),
        None => format!("sqlite:{}", dir.join("flotilla.db").display()),
    };
    if !(store_url.starts_with("sqlite:")
        || store_url.starts_with("postgres://")
        || store_url.starts_with("postgresql://"))
    {
        bail!(
            "--store must be sqlite:PATH or postgres://USER@HOST:PORT/DB (got {:?})",
            flotilla_store::redact_url(&store_url)
        );
    }
    let postgres = store_url.starts_with("postgres://") || store_url.starts_with("postgresql://");
    let key_text = std::env::var_os("FLOTILLA_IDENTITY_KEY");
    let identity_key = identity::IdentityKey::from_args(
        args.identity_key_file.as_deref(),
        key_text.as_ref().map(|t| t.as_encoded_bytes()),
    )?;
    if args.nats.is_some() && !postgres {
        bail!(
            "--nats needs a PostgreSQL store that every replica shares: add --store \
             postgres://USER@HOST:PORT/DB"
        );
    }
    if args.nats.is_some() && identity_key.is_none() {
        bail!(
            "--nats needs an identity key: give --identity-key-file FILE (or FLOTILLA_IDENTITY_KEY \
             with the key text), the same on every replica, so they share one CA, admin token \
             and signing key"
        );
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {}: is another server using it? pick another with --listen",
                args.listen
            )
        })?;
    let addr = listener.local_addr()?;
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let advertise = if addr.is_ipv6() {
        format!("[{host}]:{}", addr.port())
    } else {
        format!("{host}:{}", addr.port())
    };

    if args.durability == Durability::Relaxed {
        tracing::warn!(
            "--durability relaxed: writes are acknowledged before they are on disk; a power \
             loss or OS crash can lose the last ones. Use the default (full) in production"
        );
    }
    let options = flotilla_store::OpenOptions {
        nats: args.nats.clone(),
        durability: args.durability.into(),
    };
    let store = flotilla_store::Store::open_with(&store_url, options)
        .await
        .with_context(|| {
            format!(
                "cannot open the store {}",
                flotilla_store::redact_url(&store_url)
            )
        })?;
    let own_issuer = format!("https://{advertise}");
    let issuer = identity::settle(
        &store,
        postgres,
        identity_key.as_ref(),
        &dir,
        &own_issuer,
        args.service_account_issuer.as_deref(),
    )
    .await?;

    let creds = pki::ensure(&dir, &host, &args.tls_san)?;
    let kubeconfig = dir.join("admin.kubeconfig");
    pki::write_kubeconfig(
        &kubeconfig,
        &format!("https://{advertise}"),
        &creds.ca_pem,
        &creds.admin_token,
    )?;

    let encryption = encryption::choose(
        args.encryption_provider_config.as_deref(),
        &dir,
        identity_key.as_ref(),
    )?;
    let audit = match (&args.audit_policy_file, &args.audit_log_path) {
        (Some(policy), Some(log)) => {
            let rotation = flotilla_api::audit::Rotation {
                max_bytes: args.audit_log_maxsize * 1024 * 1024,
                max_backups: args.audit_log_maxbackup,
            };
            let audit = flotilla_api::audit::Audit::open(policy, log, rotation)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            tracing::info!(policy = %policy.display(), log = %log.display(), "auditing requests");
            Some(std::sync::Arc::new(audit))
        }
        _ => None,
    };
    let api = flotilla_api::Api::start(
        flotilla_api::Config {
            admin_token: flotilla_api::auth::AdminToken::new(&creds.admin_token),
            advertise_address: advertise.clone(),
            service_account_issuer: Some(issuer),
            replica: args.nats.is_some(),
            signing_key_file: dir.join(flotilla_api::access::signing_key::FILE_NAME),
            max_token_expiration: Some(args.service_account_max_token_expiration)
                .filter(|d| !d.is_zero()),
            compaction_interval: args.compaction_interval,
            flotilla_kinds: true,
            watch_buffer: flotilla_api::cache::BROADCAST_CAPACITY,
            encryption,
            audit,
            max_requests_inflight: args.max_requests_inflight,
            max_mutating_requests_inflight: args.max_mutating_requests_inflight,
            max_watches_per_user: args.max_watches_per_user,
            max_unpaged_list_items: args.max_unpaged_list_items,
        },
        store,
    )
    .await
    .map_err(|e| anyhow::anyhow!("starting the API server: {e}"))?;
    tracing::info!(address = %advertise, store = %flotilla_store::redact_url(&store_url), "flotilla hub is serving");
    tracing::info!(
        "use it: kubectl --kubeconfig {} get namespaces",
        kubeconfig.display()
    );

    if !args.no_controllers {
        api.metrics
            .register_with(flotilla_controllers::metrics::register);
    }
    let limits = flotilla_api::server::Limits {
        max_connections: args.max_connections as usize,
        header_read_timeout: args.header_read_timeout,
        http2_max_streams: args.http2_max_streams_per_connection,
    };
    let dns_server = dns.bind().await?;
    // The controllers give their shards back before the API server stops serving them.
    let (stopped, stop) = tokio::sync::oneshot::channel::<()>();
    let in_process = api.clone();
    let serving = flotilla_api::serve(api, listener, creds.tls, limits, async {
        let _ = stop.await;
    });
    let controlling = async {
        let r = if args.no_controllers {
            shutdown_signal().await;
            Ok(())
        } else {
            let (config, signal) = (&args.controllers, shutdown_signal());
            match crate::controllers::hub_identity(&dir) {
                Ok(id) => {
                    let api = Some(in_process);
                    crate::controllers::run::run(&kubeconfig, api, config, &id, signal).await
                }
                Err(e) => Err(e),
            }
        };
        let _ = stopped.send(());
        r
    };
    let answering = dns::serve(dns_server, &kubeconfig);
    tokio::select! {
        (served, controlled) = async { tokio::join!(serving, controlling) } => {
            served?;
            controlled?;
        }
        r = answering => r?,
    }
    tracing::info!("stopped");
    Ok(())
}

pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("signal received");
}

/// `--service-account-max-token-expiration`: kube-apiserver's bounds (1 hour to 2^32 seconds),
/// or 0 for no cap.
fn parse_max_token_expiration(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::fleet::parse_duration(s)?;
    let (low, high) = (3600, 1u64 << 32);
    if !d.is_zero() && !(low..=high).contains(&d.as_secs()) {
        return Err(format!(
            "{s:?} is out of range: the longest token lifetime must be between 1h and 2^32 \
             seconds (or 0 for no cap)"
        ));
    }
    Ok(d)
}

/// `--header-read-timeout`: a duration, not zero (no connection could ever send a request).
fn parse_header_read_timeout(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::fleet::parse_duration(s)?;
    if d.is_zero() {
        return Err("must be more than 0s: every connection would be closed at once".into());
    }
    Ok(d)
}
