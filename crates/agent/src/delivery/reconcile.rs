//! Reconciling one Work: apply its manifests, prune what left it, report status.
//!
//! Level-triggered: whatever happened before, a reconcile reads the Work as it is now and makes
//! the member and the Work's status match it. Safe to run twice and to crash anywhere: objects
//! are applied idempotently, the status is written only when it differs, and a Work being
//! deleted keeps the finalizer until its objects are gone from the member.

use std::time::Duration;

use flotilla_apis::names::WORK_FINALIZER;
use flotilla_apis::work::v1alpha1::{ResourceIdentifier, Work, WorkStatus, REASON_CONFLICT};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::Api;
use serde_json::json;

use super::Delivery;
use crate::{status, Error, Result};

/// What to do with a Work after a successful reconcile.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Nothing until something changes (a Work or member event, or the periodic resync).
    Idle,
    /// Look again after this long (e.g. a conflict someone may resolve in the member).
    After(Duration),
}

/// How often a Work with a conflict or a failed manifest is looked at again. Conflicting objects
/// are not flotilla's, so no member watch reports their changes.
const RECHECK: Duration = Duration::from_secs(30);

/// How soon a Work whose finalizers could not be written (it changed since the watch showed it)
/// is looked at again. Not left to the watch: the newer version may differ only in what
/// [`Triggers`](super::triggers::Triggers) ignores (e.g. a status write that raced the
/// deletion), and then no event would bring it back and a deleted Work would keep its
/// finalizer for good.
const STALE: Duration = Duration::from_millis(200);

// === impl Delivery ===

impl Delivery {
    pub(super) async fn reconcile(&self, name: &str) -> Result<Next> {
        let Some(work) = self.works.get(Some(&self.namespace), name) else {
            // Gone from the hub (its finalizer, if any, was handled before).
            return Ok(Next::Idle);
        };
        let finalizers = work.metadata.finalizers.clone().unwrap_or_default();
        let ours = finalizers.iter().any(|f| f == WORK_FINALIZER);
        if work.metadata.deletion_timestamp.is_some() {
            if !ours {
                return Ok(Next::Idle);
            }
            return self.clean_up(&work, finalizers).await;
        }
        if !ours {
            // Before anything reaches the member: a Work deleted later must find it.
            let mut with = finalizers;
            with.push(WORK_FINALIZER.to_owned());
            // Once written, the watch brings the updated Work back; reconcile that one.
            return self.set_finalizers(&work, with).await;
        }

        // The status to build on: the watch's copy may not show this loop's last write yet.
        let reported = self.reported.newer_than(&work);
        let current = reported.as_deref().or(work.status.as_ref());
        let results = self.applier.apply_knowing(&work, &self.watches).await;
        self.watches.ensure(name, &results);
        let previous = identifiers(current);
        let pruned = self.applier.prune(&previous, &work).await;
        let mut failed_prunes = Vec::new();
        for p in &pruned {
            match &p.outcome {
                Ok(action) => {
                    tracing::info!(work = %name, object = %p.identifier.name, kind = %p.identifier.kind, ?action, "pruned")
                }
                Err(e) => failed_prunes.push(e.to_string()),
            }
        }
        if !failed_prunes.is_empty() {
            // Keep the old status: its identifiers are how the next attempt finds what to prune.
            return Err(Error::Prune(failed_prunes.join("; ")));
        }

        let next = status::work_status(
            current,
            &results,
            &work.spec.status_feedback,
            work.metadata.generation,
            Time(Timestamp::now()),
        );
        if current != Some(&next) {
            self.write_status(name, next).await?;
        }
        let unsettled = results
            .iter()
            .any(|r| !r.applied && r.reason != REASON_CONFLICT);
        if unsettled {
            // An apply failure (the member refused, a kind not served yet): retry with backoff.
            let reasons: Vec<_> = results
                .iter()
                .filter(|r| !r.applied)
                .map(|r| format!("{} {}: {}", r.identifier.kind, r.identifier.name, r.message))
                .collect();
            return Err(Error::NotApplied(reasons.join("; ")));
        }
        if results.iter().any(|r| !r.applied) {
            return Ok(Next::After(RECHECK));
        }
        Ok(Next::Idle)
    }

    /// The Work is being deleted: remove (or orphan) everything it applied, then let it go.
    async fn clean_up(&self, work: &Work, finalizers: Vec<String>) -> Result<Next> {
        let mut empty = work.clone();
        empty.spec.manifests.clear();
        let pruned = self
            .applier
            .prune(&identifiers(work.status.as_ref()), &empty)
            .await;
        let errors: Vec<String> = pruned
            .iter()
            .filter_map(|p| p.outcome.as_ref().err().map(ToString::to_string))
            .collect();
        if !errors.is_empty() {
            return Err(Error::Prune(errors.join("; ")));
        }
        let rest = finalizers
            .into_iter()
            .filter(|f| f != WORK_FINALIZER)
            .collect();
        self.set_finalizers(work, rest).await
    }

    /// Sets the Work's finalizers, if it has not changed since it was read (resourceVersion
    /// precondition: another writer's finalizer is never lost). If it has, the Work is looked
    /// at again shortly, as the watch shows it by then.
    async fn set_finalizers(&self, work: &Work, finalizers: Vec<String>) -> Result<Next> {
        let api: Api<Work> = Api::namespaced(self.hub.clone(), &self.namespace);
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": work.metadata.resource_version,
        }});
        let name = work.metadata.name.as_deref().unwrap_or_default();
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => Ok(Next::Idle),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(Next::Idle),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                tracing::debug!(work = %name, "the Work changed before its finalizers were written; looking again");
                Ok(Next::After(STALE))
            }
            Err(source) => Err(Error::Hub {
                action: format!("updating the finalizers of Work {name}"),
                source,
            }),
        }
    }

    /// Replaces the Work's status (a JSON patch: a merge patch would keep fields the new
    /// status leaves out, e.g. feedback that no longer applies), reading back only its
    /// resourceVersion.
    async fn write_status(&self, name: &str, status: WorkStatus) -> Result<()> {
        let api: Api<Work> = Api::namespaced(self.hub.clone(), &self.namespace);
        self.reported.writing(name);
        let outcome = flotilla_watch::quiet::replace_status(&api, name, &status).await;
        let version = outcome
            .as_ref()
            .ok()
            .and_then(|w| w.resource_version.clone());
        self.reported
            .wrote(name, outcome.is_ok().then_some(status), version);
        match outcome {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(source) => Err(Error::Hub {
                action: format!("writing the status of Work {name}"),
                source,
            }),
        }
    }
}

/// What the Work's status says was applied: the objects the next prune compares against.
fn identifiers(status: Option<&WorkStatus>) -> Vec<ResourceIdentifier> {
    status
        .map(|s| {
            s.manifest_statuses
                .iter()
                .map(|m| m.identifier.clone())
                .filter(|id| !id.resource.is_empty())
                .collect()
        })
        .unwrap_or_default()
}
