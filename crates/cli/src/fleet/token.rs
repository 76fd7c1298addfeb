//! `flotilla token create`: a bootstrap credential a member's agent uses to ask to join.
//!
//! The token is kubeadm-shaped (`<6-char id>.<16-char secret>`) and stored as a Secret
//! `bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token` in `flotilla-system`; the hub
//! authenticates it as `system:bootstrap:<id>`, which may only create one Cluster (its join
//! request) and read that Cluster back. It expires (default one hour), and `flotilla cluster
//! remove` deletes it with the cluster it was used for.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use flotilla_apis::names::{
    BOOTSTRAP_TOKEN_CLUSTER_KEY, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_TYPE,
    SYSTEM_NAMESPACE,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::PostParams;
use kube::config::Kubeconfig;
use kube::Api;
use rand::Rng;
use serde_json::json;

use super::client::{hub_config, parse_duration};

/// `flotilla token ...`
#[derive(Args, Debug)]
pub struct TokenArgs {
    #[command(subcommand)]
    command: TokenCommand,
}

#[derive(Subcommand, Debug)]
enum TokenCommand {
    /// Create a bootstrap credential: a kubeconfig a member's agent uses once to ask to join
    /// (`flotilla agent --bootstrap-kubeconfig`). It can do nothing else, serves one cluster
    /// only, and expires.
    Create(CreateArgs),
}

#[derive(Args, Debug)]
struct CreateArgs {
    /// The hub's admin kubeconfig (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// Where to write the bootstrap kubeconfig (mode 0600); standard output when absent.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// How long the credential may be used to ask to join (e.g. 30m, 1h, 2d).
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    ttl: Duration,
    /// Only a cluster of this name may join with it (any single name when absent).
    #[arg(long)]
    cluster: Option<String>,
    /// A note kept with the token (who it is for).
    #[arg(long)]
    description: Option<String>,
}

/// Runs `flotilla token`.
pub async fn run(args: TokenArgs) -> Result<()> {
    match args.command {
        TokenCommand::Create(a) => create(a).await,
    }
}

fn random(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::thread_rng();
    (0..n)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

async fn create(args: CreateArgs) -> Result<()> {
    if let Some(name) = &args.cluster {
        super::check_cluster_name(name)?;
    }
    if args.ttl.is_zero() {
        anyhow::bail!(
            "--ttl must be more than 0: bootstrap credentials always expire (e.g. --ttl 1h)"
        );
    }
    let (config, kubeconfig) = hub_config(args.kubeconfig.as_deref()).await?;
    let client =
        kube::Client::try_from(config.clone()).context("cannot build a client for the hub")?;
    let issued = issue(
        &client,
        &kubeconfig,
        args.ttl,
        args.cluster.as_deref(),
        args.description.as_deref(),
    )
    .await?;
    let (id, expires, text) = (&issued.id, &issued.expires, &issued.kubeconfig);
    match &args.output {
        Some(path) => {
            crate::serve::pki::write_private(path, text)?;
            eprintln!(
                "bootstrap credential {id} written to {} (expires {expires}{}).\n\
                 On the member: flotilla agent --cluster NAME --bootstrap-kubeconfig {} \
                 --kubeconfig MEMBER.kubeconfig --state-dir DIR",
                path.display(),
                args.cluster
                    .as_deref()
                    .map(|c| format!("; for cluster {c} only"))
                    .unwrap_or_default(),
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// A bootstrap credential stored on the hub.
pub(crate) struct Issued {
    /// The token's id (`system:bootstrap:<id>` on the hub).
    pub id: String,
    /// When it stops being accepted.
    pub expires: Timestamp,
    /// A kubeconfig for the hub of `kubeconfig` with the token as its user.
    pub kubeconfig: String,
}

/// Stores a new bootstrap token on the hub (through `client`, the admin's) and returns the
/// kubeconfig an agent joins with: the hub's address and CA from `kubeconfig`.
pub(crate) async fn issue(
    client: &kube::Client,
    kubeconfig: &Kubeconfig,
    ttl: Duration,
    cluster: Option<&str>,
    description: Option<&str>,
) -> Result<Issued> {
    let (id, secret) = (random(6), random(16));
    let ttl = SignedDuration::from_secs(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
    let expires = Timestamp::now()
        .checked_add(ttl)
        .context("--ttl is too long")?;
    let mut data = json!({
        "token-id": id,
        "token-secret": secret,
        "expiration": expires.to_string(),
        "usage-bootstrap-authentication": "true",
        "description": description.unwrap_or("flotilla join"),
    });
    if let Some(c) = cluster {
        data[BOOTSTRAP_TOKEN_CLUSTER_KEY] = json!(c);
    }
    let object: Secret = serde_json::from_value(json!({
        "metadata": {"name": format!("{BOOTSTRAP_TOKEN_SECRET_PREFIX}{id}"), "namespace": SYSTEM_NAMESPACE},
        "type": BOOTSTRAP_TOKEN_TYPE,
        "stringData": data,
    }))?;
    Api::<Secret>::namespaced(client.clone(), SYSTEM_NAMESPACE)
        .create(&PostParams::default(), &object)
        .await
        .context("the hub refused to store the bootstrap token (is this the admin kubeconfig?)")?;

    let context = kubeconfig
        .current_context
        .as_deref()
        .and_then(|c| kubeconfig.contexts.iter().find(|x| x.name == c))
        .and_then(|c| c.context.as_ref());
    let cluster = context
        .and_then(|c| kubeconfig.clusters.iter().find(|x| x.name == c.cluster))
        .or(kubeconfig.clusters.first())
        .and_then(|c| c.cluster.clone())
        .context("the kubeconfig names no cluster")?;
    let ca = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => data.clone(),
        (None, Some(path)) => {
            use base64::Engine;
            let pem = std::fs::read(path).with_context(|| format!("cannot read {path}"))?;
            base64::engine::general_purpose::STANDARD.encode(pem)
        }
        (None, None) => String::new(),
    };
    let out = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "flotilla-hub", "cluster": {
            "server": cluster.server, "certificate-authority-data": ca}}],
        "users": [{"name": format!("bootstrap-{id}"), "user": {"token": format!("{id}.{secret}")}}],
        "contexts": [{"name": "flotilla-bootstrap", "context": {
            "cluster": "flotilla-hub", "user": format!("bootstrap-{id}")}}],
        "current-context": "flotilla-bootstrap",
    });
    Ok(Issued {
        id,
        expires,
        kubeconfig: serde_yaml::to_string(&out)?,
    })
}
