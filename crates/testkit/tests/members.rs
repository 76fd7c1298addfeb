//! Real member clusters from `scripts/members`: a Deployment of 5 replicas becomes Ready in each of
//! three members, and a member survives an outage (stop, then start) with its data.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_testkit::Members;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Node;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};

fn deployment(name: &str, replicas: i32) -> Result<Deployment> {
    Ok(serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{
                    "name": "web",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": { "requests": { "cpu": "100m", "memory": "64Mi" } }
                }] }
            }
        }
    }))?)
}

/// Waits until the Deployment reports `replicas` ready and available, up to `limit`.
async fn wait_ready(
    client: &Client,
    name: &str,
    replicas: i32,
    limit: Duration,
) -> Result<Duration> {
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let start = Instant::now();
    loop {
        let d = api.get(name).await?;
        let s = d.status.unwrap_or_default();
        if s.ready_replicas == Some(replicas)
            && s.available_replicas == Some(replicas)
            && s.updated_replicas == Some(replicas)
        {
            return Ok(start.elapsed());
        }
        if start.elapsed() > limit {
            bail!(
                "deployment {name}: {:?} of {replicas} ready after {limit:?}",
                s.ready_replicas
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployments_become_ready_in_three_members_and_a_member_survives_an_outage() -> Result<()> {
    let members = tokio::task::block_in_place(|| Members::up(3))?;
    let clients = members.clients().await?;
    let expected = [
        ("member-1", "eu", "eu-a"),
        ("member-2", "us", "us-a"),
        ("member-3", "ap", "ap-a"),
    ];

    for ((name, region, zone), client) in expected.iter().zip(&clients) {
        let m = members.member(name)?;
        assert_eq!((m.region.as_str(), m.zone.as_str()), (*region, *zone));
        let version = client
            .apiserver_version()
            .await
            .with_context(|| format!("{name}: /version"))?;
        assert!(
            version.git_version.starts_with("v1.32."),
            "{name} reports {}",
            version.git_version
        );

        let nodes: Api<Node> = Api::all(client.clone());
        let nodes = nodes
            .list(&ListParams::default().labels("type=kwok"))
            .await?;
        assert_eq!(nodes.items.len(), 3, "{name}: kwok nodes");
        for node in &nodes.items {
            let labels = node.metadata.labels.clone().unwrap_or_default();
            assert_eq!(
                labels
                    .get("topology.kubernetes.io/region")
                    .map(String::as_str),
                Some(*region)
            );
            assert_eq!(
                labels
                    .get("topology.kubernetes.io/zone")
                    .map(String::as_str),
                Some(*zone)
            );
            let capacity = node
                .status
                .as_ref()
                .and_then(|s| s.capacity.clone())
                .unwrap_or_default();
            assert_eq!(capacity.get("cpu").map(|q| q.0.as_str()), Some("32"));
            assert_eq!(capacity.get("pods").map(|q| q.0.as_str()), Some("110"));
        }

        let api: Api<Deployment> = Api::default_namespaced(client.clone());
        api.create(&PostParams::default(), &deployment("web", 5)?)
            .await
            .with_context(|| format!("{name}: create"))?;
    }
    for ((name, _, _), client) in expected.iter().zip(&clients) {
        let took = wait_ready(client, "web", 5, Duration::from_secs(30))
            .await
            .with_context(|| name.to_string())?;
        eprintln!("{name}: deployment web 5/5 ready after {took:?}");
    }

    // An outage of member-2: its API stops answering; the others go on.
    let m2 = members.member("member-2")?.clone();
    tokio::task::block_in_place(|| members.stop("member-2"))?;
    let down: Api<Deployment> = Api::default_namespaced(clients[1].clone());
    assert!(
        down.get("web").await.is_err(),
        "member-2 still answers after stop"
    );
    wait_ready(&clients[0], "web", 5, Duration::from_secs(5))
        .await
        .context("member-1 during member-2's outage")?;

    // It comes back with its data, and its controllers work again.
    tokio::task::block_in_place(|| members.start("member-2"))?;
    let client = flotilla_testkit::members::client_for(&m2.kubeconfig).await?;
    wait_ready(&client, "web", 5, Duration::from_secs(30))
        .await
        .context("member-2 after start: web")?;
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &deployment("after-outage", 5)?)
        .await?;
    let took = wait_ready(&client, "after-outage", 5, Duration::from_secs(30))
        .await
        .context("member-2 after start")?;
    eprintln!("member-2 after the outage: deployment after-outage 5/5 ready after {took:?}");
    Ok(())
}
