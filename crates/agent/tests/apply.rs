//! The Applier against a real member cluster (one shared member per test binary; each test
//! works in its own namespaces).

use anyhow::{ensure, Context, Result};
use flotilla_agent::{Applier, ManifestResult, PruneAction};
use flotilla_apis::names::OWNER_ANNOTATION;
use flotilla_apis::work::v1alpha1::{ConflictPolicy, DeletePolicy, Manifest, Work, WorkSpec};
use flotilla_testkit::Members;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::{json, Value};

async fn member() -> Result<Client> {
    let members = tokio::task::block_in_place(|| Members::shared(1))?;
    members.client("member-1").await
}

fn work(name: &str, manifests: Vec<Value>, conflict: ConflictPolicy, delete: DeletePolicy) -> Work {
    let mut w = Work::new(
        name,
        WorkSpec {
            manifests: manifests.into_iter().map(Manifest).collect(),
            conflict_policy: conflict,
            delete_policy: delete,
            ..WorkSpec::default()
        },
    );
    w.metadata.namespace = Some("flotilla-es-member-1".into());
    w
}

fn configmap(ns: &str, name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": ns}, "data": {"value": value}})
}

fn owner(cm: &ConfigMap) -> Option<String> {
    cm.metadata
        .annotations
        .as_ref()?
        .get(OWNER_ANNOTATION)
        .cloned()
}

fn assert_applied(results: &[ManifestResult]) -> Result<()> {
    for r in results {
        ensure!(r.applied && r.reason == "Applied", "not applied: {r:?}");
        ensure!(r.resource_version.is_some(), "no resourceVersion: {r:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_configmap_and_deployment_apply_with_owner_and_field_manager() -> Result<()> {
    let client = member().await?;
    let ns = "agent-apply";
    let w = work(
        "apply",
        vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "namespace": ns, "resourceVersion": "99", "uid": "hub-uid"},
                   "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                            "template": {"metadata": {"labels": {"app": "web"}},
                                         "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10",
                                                  "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}},
                   "status": {"replicas": 5}}),
            configmap(ns, "settings", "1"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        ],
        ConflictPolicy::Abort,
        DeletePolicy::Delete,
    );
    let applier = Applier::new(client.clone());
    let results = applier.apply(&w).await;
    assert_eq!(results.len(), 3);
    assert_applied(&results)?;
    let ids: Vec<_> = results
        .iter()
        .map(|r| {
            (
                r.identifier.ordinal,
                r.identifier.resource.as_str(),
                r.identifier.namespace.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            (0, "deployments", Some(ns)),
            (1, "configmaps", Some(ns)),
            (2, "namespaces", None)
        ]
    );
    assert_eq!(results[0].generation, Some(1));

    let deploy = Api::<Deployment>::namespaced(client.clone(), ns)
        .get("web")
        .await?;
    let annotations = deploy.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations.get(OWNER_ANNOTATION).map(String::as_str),
        Some("flotilla-es-member-1/apply")
    );
    let managers: Vec<_> = deploy
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        managers.iter().any(|m| m == "flotilla"),
        "managers: {managers:?}"
    );
    assert_eq!(deploy.spec.and_then(|s| s.replicas), Some(5));
    let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .get("settings")
        .await?;
    assert_eq!(owner(&cm).as_deref(), Some("flotilla-es-member-1/apply"));

    // Applying again is a no-op that still reports Applied (the objects are flotilla's now).
    let again = applier.apply(&w).await;
    assert_applied(&again)?;
    assert_eq!(again[0].generation, Some(1));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_object_conflicts_under_abort_and_is_taken_under_overwrite() -> Result<()> {
    let client = member().await?;
    let ns = "agent-conflict";
    // The namespace is missing: the applier creates it for the ConfigMap.
    let applier = Applier::new(client.clone());
    let setup = applier
        .apply(&work(
            "setup",
            vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})],
            ConflictPolicy::Abort,
            DeletePolicy::Delete,
        ))
        .await;
    assert_applied(&setup)?;
    let cms = Api::<ConfigMap>::namespaced(client.clone(), ns);
    let theirs: ConfigMap = serde_json::from_value(configmap(ns, "shared", "theirs"))?;
    let pp = PostParams {
        field_manager: Some("someone-else".into()),
        ..PostParams::default()
    };
    cms.create(&pp, &theirs)
        .await
        .context("creating the foreign ConfigMap")?;

    let abort = work(
        "conflict",
        vec![configmap(ns, "shared", "ours")],
        ConflictPolicy::Abort,
        DeletePolicy::Delete,
    );
    let results = applier.apply(&abort).await;
    assert!(!results[0].applied);
    assert_eq!(results[0].reason, "Conflict");
    assert!(
        results[0]
            .message
            .contains("ConfigMap agent-conflict/shared"),
        "{}",
        results[0].message
    );
    let cm = cms.get("shared").await?;
    assert_eq!(
        cm.data.unwrap_or_default().get("value").map(String::as_str),
        Some("theirs")
    );
    assert_eq!(owner(&cms.get("shared").await?), None);

    // Adopt applies without force: the other manager owns data.value, so SSA reports a conflict.
    let adopt = work(
        "conflict",
        vec![configmap(ns, "shared", "ours")],
        ConflictPolicy::Adopt,
        DeletePolicy::Delete,
    );
    let results = applier.apply(&adopt).await;
    assert_eq!(results[0].reason, "Conflict", "{:?}", results[0]);
    assert!(
        results[0].message.contains("someone-else"),
        "{}",
        results[0].message
    );

    let overwrite = work(
        "conflict",
        vec![configmap(ns, "shared", "ours")],
        ConflictPolicy::Overwrite,
        DeletePolicy::Delete,
    );
    let results = applier.apply(&overwrite).await;
    assert_applied(&results)?;
    let cm = cms.get("shared").await?;
    assert_eq!(owner(&cm).as_deref(), Some("flotilla-es-member-1/conflict"));
    assert_eq!(
        cm.data.unwrap_or_default().get("value").map(String::as_str),
        Some("ours")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_manifests_are_deleted_or_orphaned() -> Result<()> {
    let client = member().await?;
    let applier = Applier::new(client.clone());
    for (ns, policy) in [
        ("agent-prune-delete", DeletePolicy::Delete),
        ("agent-prune-orphan", DeletePolicy::Orphan),
    ] {
        let before = work(
            "prune",
            vec![configmap(ns, "kept", "1"), configmap(ns, "removed", "1")],
            ConflictPolicy::Abort,
            policy,
        );
        let results = applier.apply(&before).await;
        assert_applied(&results)?;
        let previous: Vec<_> = results.into_iter().map(|r| r.identifier).collect();

        let after = work(
            "prune",
            vec![configmap(ns, "kept", "2")],
            ConflictPolicy::Abort,
            policy,
        );
        assert_applied(&applier.apply(&after).await)?;
        let pruned = applier.prune(&previous, &after).await;
        assert_eq!(pruned.len(), 1, "{pruned:?}");
        assert_eq!(pruned[0].identifier.name, "removed");
        let cms = Api::<ConfigMap>::namespaced(client.clone(), ns);
        match policy {
            DeletePolicy::Delete => {
                assert_eq!(pruned[0].outcome.as_ref().ok(), Some(&PruneAction::Deleted));
                assert!(cms.get_opt("removed").await?.is_none());
            }
            DeletePolicy::Orphan => {
                assert_eq!(
                    pruned[0].outcome.as_ref().ok(),
                    Some(&PruneAction::Orphaned)
                );
                let cm = cms.get("removed").await?;
                assert_eq!(owner(&cm), None);
            }
        }
        assert!(cms.get_opt("kept").await?.is_some());
        // Pruning again finds nothing of this Work's left to remove.
        let again = applier.prune(&previous, &after).await;
        let expected = match policy {
            DeletePolicy::Delete => PruneAction::Gone,
            DeletePolicy::Orphan => PruneAction::NotOurs,
        };
        assert_eq!(again[0].outcome.as_ref().ok(), Some(&expected));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kind_fails_alone() -> Result<()> {
    let client = member().await?;
    let ns = "agent-unknown";
    let w = work(
        "unknown",
        vec![
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": ns}}),
            json!({"apiVersion": "v1", "kind": "Gadget", "metadata": {"name": "g"}}),
            configmap(ns, "after", "1"),
        ],
        ConflictPolicy::Abort,
        DeletePolicy::Delete,
    );
    let results = Applier::new(client.clone()).apply(&w).await;
    for r in &results[..2] {
        assert!(!r.applied);
        assert_eq!(r.reason, "KindNotServed", "{r:?}");
        assert!(r.message.contains("serves no"), "{}", r.message);
    }
    assert!(
        results[0].message.contains("example.com/v1/Widget"),
        "{}",
        results[0].message
    );
    assert_applied(&results[2..])?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_only_update_and_read_only_strategies() -> Result<()> {
    use flotilla_apis::work::v1alpha1::ApplyStrategy;
    let client = member().await?;
    let ns = "agent-strategies";
    let applier = Applier::new(client.clone());
    let cms = Api::<ConfigMap>::namespaced(client.clone(), ns);
    let value = |cm: &ConfigMap| cm.data.clone().unwrap_or_default().get("value").cloned();
    let with = |strategy, v: &str| {
        let mut w = work(
            "strategies",
            vec![configmap(ns, "s", v)],
            ConflictPolicy::Abort,
            DeletePolicy::Delete,
        );
        w.spec.apply_strategy = strategy;
        w
    };

    // ReadOnly never writes: a missing object is reported, not created.
    let results = applier.apply(&with(ApplyStrategy::ReadOnly, "0")).await;
    assert_eq!(
        (results[0].applied, results[0].reason.as_str()),
        (false, "ResourceNotFound")
    );
    ensure!(
        cms.get_opt("s").await.ok().flatten().is_none(),
        "ReadOnly created the object"
    );

    // CreateOnly creates once, then leaves its own object as it is.
    assert_applied(&applier.apply(&with(ApplyStrategy::CreateOnly, "1")).await)?;
    assert_applied(&applier.apply(&with(ApplyStrategy::CreateOnly, "2")).await)?;
    assert_eq!(value(&cms.get("s").await?).as_deref(), Some("1"));

    // Update replaces the whole object.
    let results = applier.apply(&with(ApplyStrategy::Update, "3")).await;
    assert_applied(&results)?;
    let cm = cms.get("s").await?;
    assert_eq!(value(&cm).as_deref(), Some("3"));
    assert_eq!(results[0].resource_version, cm.metadata.resource_version);

    // ReadOnly now observes the object without writing it.
    let results = applier.apply(&with(ApplyStrategy::ReadOnly, "4")).await;
    assert_applied(&results)?;
    assert_eq!(value(&cms.get("s").await?).as_deref(), Some("3"));

    // CreateOnly on an object that is not flotilla's is a conflict.
    let mut other = with(ApplyStrategy::CreateOnly, "5");
    other.metadata.name = Some("another-work".into());
    let results = applier.apply(&other).await;
    assert_eq!(results[0].reason, "Conflict");
    Ok(())
}

/// Knows every object unchanged since it was written (as a member watch that saw nothing).
struct AllFresh;

impl flotilla_agent::apply::Fresh for AllFresh {
    fn fresh(&self, _: &str, _: Option<&str>, _: &str) -> bool {
        true
    }
}

/// A Work at a generation lets the applier read, not write, an object the member still has as
/// it was applied; whatever changed a field the manifest sets (the spec, a label) is still put
/// back, and an object known unchanged but deleted meanwhile is created again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_left_alone_are_read_and_changed_ones_put_back() -> Result<()> {
    let client = member().await?;
    let ns = "agent-unchanged";
    let mut w = work(
        "unchanged",
        vec![json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": ns, "labels": {"tier": "front"}},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10"}]}}}})],
        ConflictPolicy::Abort,
        DeletePolicy::Delete,
    );
    w.metadata.generation = Some(1);
    let applier = Applier::new(client.clone());
    let deployments = Api::<Deployment>::namespaced(client.clone(), ns);
    let first = applier.apply(&w).await;
    assert_applied(&first)?;

    let again = applier.apply(&w).await;
    assert_applied(&again)?;
    assert_eq!(
        again[0].message, first[0].message,
        "the status must not change"
    );

    // Someone scales it by hand: the generation moves, and the next apply puts it back.
    let patch = kube::api::Patch::Merge(json!({"spec": {"replicas": 5}}));
    deployments
        .patch("web", &kube::api::PatchParams::default(), &patch)
        .await?;
    assert_applied(&applier.apply(&w).await)?;
    let replicas = deployments.get("web").await?.spec.and_then(|s| s.replicas);
    assert_eq!(replicas, Some(2), "spec drift not undone");

    // Someone relabels it: no generation moves, the label is still put back.
    let patch = kube::api::Patch::Merge(json!({"metadata": {"labels": {"tier": "back"}}}));
    deployments
        .patch("web", &kube::api::PatchParams::default(), &patch)
        .await?;
    assert_applied(&applier.apply(&w).await)?;
    let labels = deployments
        .get("web")
        .await?
        .metadata
        .labels
        .unwrap_or_default();
    assert_eq!(labels.get("tier").map(String::as_str), Some("front"));

    // Deleted behind a watch's back: written unread, so created again.
    deployments
        .delete("web", &kube::api::DeleteParams::default())
        .await?;
    let recreated = applier.apply_knowing(&w, &AllFresh).await;
    assert_applied(&recreated)?;
    ensure!(
        deployments.get_opt("web").await?.is_some(),
        "not created again"
    );
    Ok(())
}
