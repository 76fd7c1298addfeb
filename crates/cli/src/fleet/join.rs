//! `flotilla join NAME --member-kubeconfig M`: push mode. The member's kubeconfig is stored in a
//! Secret in `flotilla-system` that the Cluster points to, and a worker inside the hub does the
//! agent's job. Only the admin can do this, so it is approved at once.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use base64::Engine;
use clap::Args;
use flotilla_apis::cluster::v1alpha1::{Cluster, ClusterSpec, SecretRef, SyncMode};
use flotilla_apis::names::{push_secret_name, SYSTEM_NAMESPACE};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::config::Kubeconfig;
use kube::Api;
use serde_json::json;

use super::client::{hub_client, Topology};

/// Options of `flotilla join`.
#[derive(Args, Debug)]
pub struct JoinArgs {
    /// The name the member gets on the hub (a DNS label, e.g. eu-west-1).
    name: String,
    /// The hub's admin kubeconfig (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// A kubeconfig for the member cluster; it is stored on the hub (Secret in flotilla-system).
    #[arg(long)]
    member_kubeconfig: PathBuf,
    #[command(flatten)]
    topology: Topology,
}

/// Runs `flotilla join`.
pub async fn run(args: JoinArgs) -> Result<()> {
    super::check_cluster_name(&args.name)?;
    let labels = args.topology.label_map()?;
    let mut member = Kubeconfig::read_from(&args.member_kubeconfig)
        .with_context(|| format!("cannot read {}", args.member_kubeconfig.display()))?;
    inline_files(&mut member)?;
    let text = serde_yaml::to_string(&member)?;
    // The hub will use it from another process; make sure it works before storing it.
    let member_client = flotilla_agent::push::client_from_kubeconfig(&text).await?;
    let version = member_client.apiserver_version().await.with_context(|| {
        format!(
            "the member cluster does not answer with {}",
            args.member_kubeconfig.display()
        )
    })?;
    let mut cluster = Cluster::new(
        &args.name,
        ClusterSpec {
            region: args.topology.region,
            zone: args.topology.zone,
            provider: args.topology.provider,
            networks: args.topology.networks,
            ..ClusterSpec::default()
        },
    );
    cluster.metadata.labels = Some(labels).filter(|l| !l.is_empty());
    let hub = hub_client(args.kubeconfig.as_deref()).await?;
    register(&hub, cluster, &member, &text, "flotilla join (push)").await?;
    println!(
        "cluster {} joined in Push mode (Kubernetes {}); the hub's worker delivers its Works",
        args.name, version.git_version
    );
    Ok(())
}

/// Register `cluster` (its name, topology and labels) on `hub` in Push mode with the member
/// kubeconfig `member` (as `text`, files inlined): the credential in a Secret in
/// flotilla-system, the Cluster pointing at it, approved at once by `approver`.
pub(crate) async fn register(
    hub: &kube::Client,
    mut cluster: Cluster,
    member: &Kubeconfig,
    text: &str,
    approver: &str,
) -> Result<()> {
    let name = cluster.metadata.name.clone().unwrap_or_default();
    let endpoint = member
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| c.server.clone());
    let secret_name = push_secret_name(&name);
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": secret_name, "namespace": SYSTEM_NAMESPACE},
        "type": "Opaque",
        "data": {"kubeconfig": base64::engine::general_purpose::STANDARD.encode(text.as_bytes())},
    }))?;
    let clusters: Api<Cluster> = Api::all(hub.clone());
    if let Some(existing) = clusters.get_opt(&name).await? {
        if existing.spec.sync_mode != SyncMode::Push {
            bail!("cluster {name} is already registered in Pull mode; remove it first with `flotilla cluster remove {name}`");
        }
    }
    let pp = PatchParams::apply(flotilla_apis::names::FIELD_MANAGER).force();
    Api::<Secret>::namespaced(hub.clone(), SYSTEM_NAMESPACE)
        .patch(&secret_name, &pp, &Patch::Apply(&secret))
        .await
        .context("storing the member credential on the hub")?;
    cluster.spec.sync_mode = SyncMode::Push;
    cluster.spec.api_endpoint = endpoint;
    cluster.spec.secret_ref = Some(SecretRef {
        namespace: SYSTEM_NAMESPACE.into(),
        name: secret_name,
    });
    let mut body = serde_json::to_value(&cluster)?;
    body["apiVersion"] = json!("cluster.flotilla.io/v1alpha1");
    body["kind"] = json!("Cluster");
    clusters
        .patch(&name, &pp, &Patch::Apply(&body))
        .await
        .context("registering the Cluster on the hub")?;
    flotilla_controllers::registry::approve(hub, &name, approver).await?;
    Ok(())
}

/// Replaces file references in a kubeconfig with the files' contents, so it works elsewhere.
fn inline_files(kc: &mut Kubeconfig) -> Result<()> {
    let b64 = |path: &str| -> Result<String> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read {path} (named in the member kubeconfig)"))?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    };
    for c in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        if let Some(path) = c.certificate_authority.take() {
            c.certificate_authority_data = Some(b64(&path)?);
        }
    }
    for u in kc
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        if let Some(path) = u.client_certificate.take() {
            u.client_certificate_data = Some(b64(&path)?);
        }
        if let Some(path) = u.client_key.take() {
            u.client_key_data = Some(b64(&path)?.into());
        }
        if let Some(path) = u.token_file.take() {
            let token =
                std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
            u.token = Some(token.trim().to_owned().into());
        }
    }
    Ok(())
}
