//! The binding controller's watch of Works: every Work that carries a binding label, kept in
//! its store lean, indexed by binding ([`WorkIndex`]), each event waking the Work's binding.
//!
//! A Work's manifest is most of what a Work holds (the whole object sent to the member), and
//! this controller reads little of it: the object's identity and `spec.replicas` (held
//! shrinks). The rest is cut off before the Work is stored ([`trim`]) — except for kinds a
//! ResourceInterpreter targets, whose rules read the member's copy, rebuilt from the manifest
//! and the member's report. When an interpreter for a new kind appears, the watch lists
//! again, so that kind's Works are stored whole from then on. At 10,000 Deployments in three
//! members this is the difference between about 30 MB and 300 MB of Works in the store.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use flotilla_watch::Packed;
use futures::StreamExt;
use kube::runtime::reflector::Store;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedReceiver;

use super::index::WorkIndex;
use crate::propagation::binding::{
    BindingRef, Wake, BINDING_LABEL, BINDING_NAMESPACE_ANNOTATION, BINDING_NAME_ANNOTATION,
};
use crate::propagation::feed::{lean, Changes};

/// The kinds (apiVersion, kind) some ResourceInterpreter targets.
type Kinds = BTreeSet<(String, String)>;

/// Keeps `works` and `index` filled with the hub's bound Works, waking their bindings;
/// watches again whenever `interpreters` (read on every `changed`) come to target a kind whose
/// manifests were cut off. Runs until dropped.
pub(super) async fn feed(
    hub: Client,
    works: Packed<Work>,
    index: Arc<WorkIndex>,
    interpreters: Store<ResourceInterpreter>,
    changed: Changes,
    wake: Wake,
) {
    let mut changes = changed.subscribe();
    let _ = interpreters.wait_until_ready().await;
    loop {
        let kept = interpreted(&interpreters);
        let mut events = watcher(
            Api::<Work>::all(hub.clone()),
            watcher::Config::default().labels(BINDING_LABEL),
        )
        .default_backoff()
        .modify({
            let kept = kept.clone();
            move |w| {
                lean(w);
                trim(w, &kept);
            }
        })
        .boxed();
        loop {
            tokio::select! {
                event = events.next() => match event {
                    Some(Ok(event)) => take(event, &works, &index, &wake),
                    Some(Err(_)) => {}
                    None => return,
                },
                // Never closed: `changed` holds the sender. A lag is a change too.
                _ = changes.recv() => {
                    if !interpreted(&interpreters).is_subset(&kept) {
                        tracing::info!("a ResourceInterpreter targets a new kind: the binding controller lists the Works again, keeping that kind's manifests");
                        break;
                    }
                }
            }
        }
    }
}

fn interpreted(interpreters: &Store<ResourceInterpreter>) -> Kinds {
    interpreters
        .state()
        .iter()
        .map(|i| {
            let t = &i.spec.target;
            (t.api_version.clone(), t.kind.clone())
        })
        .collect()
}

/// Stores one event and wakes the Work's binding.
fn take(event: watcher::Event<Work>, works: &Packed<Work>, index: &WorkIndex, wake: &Wake) {
    // Indexed before it is stored: a Work in the store is always in the index.
    if let watcher::Event::Apply(w) | watcher::Event::InitApply(w) = &event {
        index.seen(w);
    }
    works.apply(&event);
    let w = match &event {
        watcher::Event::Apply(w) | watcher::Event::InitApply(w) => w,
        watcher::Event::Delete(w) => {
            index.gone(w);
            w
        }
        watcher::Event::InitDone => {
            index.prune(works);
            return;
        }
        watcher::Event::Init => return,
    };
    wake_owner(w, wake);
}

/// Wakes the binding Work `w` belongs to (by its annotations).
fn wake_owner(w: &Work, wake: &Wake) {
    let a = w.annotations();
    if let Some(name) = a.get(BINDING_NAME_ANNOTATION) {
        wake.binding(
            a.get(BINDING_NAMESPACE_ANNOTATION).map(String::as_str),
            name,
        );
    }
}

/// Wakes, for each cluster name `changed` sends (a registered cluster whose labels or spec
/// changed), the bindings that render for it: those with a Work in its execution namespace in
/// `works`, and those whose last render left some cluster without one (`failing`). A
/// binding that targets none of those clusters renders nothing from it, so the change is no
/// reason to look at every binding of the fleet. Runs until the sender is gone.
pub(super) async fn wake_on_cluster(
    mut changed: UnboundedReceiver<String>,
    works: Packed<Work>,
    failing: Arc<Failing>,
    wake: Wake,
) {
    while let Some(cluster) = changed.recv().await {
        let ns = execution_namespace(&cluster);
        let names = works.names_in(&ns);
        for name in &names {
            if let Some(w) = works.get(Some(&ns), name) {
                wake_owner(&w, &wake);
            }
        }
        let failing = failing.all();
        tracing::debug!(%cluster, works = names.len(), failing = failing.len(), "a cluster changed: waking the bindings that render for it");
        for b in &failing {
            wake.to(b);
        }
    }
}

/// The bindings whose last render left a target cluster without a Work (not registered,
/// rendering failed, out of reach), by namespace (`None`: cluster-scoped) and name: a
/// change of a cluster may be what they wait for.
#[derive(Default)]
pub(super) struct Failing(parking_lot::Mutex<HashSet<BindingRef>>);

impl Failing {
    /// Records whether binding `name` in `namespace` rendered for all its clusters.
    pub(super) fn set(&self, namespace: Option<&str>, name: &str, failing: bool) {
        let key = (namespace.map(str::to_owned), name.to_owned());
        let mut set = self.0.lock();
        if failing {
            set.insert(key);
        } else {
            set.remove(&key);
        }
    }

    fn all(&self) -> Vec<BindingRef> {
        self.0.lock().iter().cloned().collect()
    }
}

/// Cuts a Work's manifests down to what the binding controller reads of them — apiVersion,
/// kind, name, namespace and `spec.replicas` — unless an interpreter targets their kind.
pub(super) fn trim(w: &mut Work, kept: &Kinds) {
    for m in &mut w.spec.manifests {
        let Value::Object(manifest) = &mut m.0 else {
            continue;
        };
        let text = |k: &str| manifest.get(k).and_then(Value::as_str).unwrap_or_default();
        if kept.contains(&(text("apiVersion").to_owned(), text("kind").to_owned())) {
            continue;
        }
        let mut slim = Map::new();
        for k in ["apiVersion", "kind"] {
            if let Some(v) = manifest.remove(k) {
                slim.insert(k.to_owned(), v);
            }
        }
        if let Some(Value::Object(meta)) = manifest.get_mut("metadata") {
            let mut id = Map::new();
            for k in ["name", "namespace"] {
                if let Some(v) = meta.remove(k) {
                    id.insert(k.to_owned(), v);
                }
            }
            slim.insert("metadata".to_owned(), Value::Object(id));
        }
        if let Some(replicas) = manifest.get_mut("spec").and_then(|s| s.get_mut("replicas")) {
            let replicas = replicas.take();
            slim.insert(
                "spec".to_owned(),
                serde_json::json!({ "replicas": replicas }),
            );
        }
        *manifest = slim;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn work(manifest: Value) -> Work {
        serde_json::from_value(json!({
            "apiVersion": "work.flotilla.io/v1alpha1",
            "kind": "Work",
            "metadata": {"name": "w", "namespace": "flotilla-es-m1"},
            "spec": {"manifests": [manifest]},
        }))
        .expect("a Work")
    }

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        })
    }

    #[test]
    fn a_manifest_keeps_its_identity_and_replicas() {
        let mut w = work(deployment());
        trim(&mut w, &Kinds::new());
        assert_eq!(
            w.spec.manifests[0].0,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"replicas": 3},
            })
        );
        let mut cm = work(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}),
        );
        trim(&mut cm, &Kinds::new());
        assert_eq!(
            cm.spec.manifests[0].0,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        );
    }

    #[tokio::test]
    async fn a_changed_cluster_wakes_the_bindings_with_a_work_there_and_those_failing() {
        let works = Packed::<Work>::default();
        let owned = |cluster: &str, binding: &str, ns: Option<&str>| {
            let mut w = work(deployment());
            w.metadata.name = Some(format!("w-{binding}"));
            w.metadata.namespace = Some(execution_namespace(cluster));
            w.annotations_mut()
                .insert(BINDING_NAME_ANNOTATION.into(), binding.into());
            if let Some(ns) = ns {
                w.annotations_mut()
                    .insert(BINDING_NAMESPACE_ANNOTATION.into(), ns.into());
            }
            works.apply(&watcher::Event::Apply(w));
        };
        owned("m-1", "web", Some("shop"));
        owned("m-1", "crds", None);
        owned("m-2", "api", Some("shop"));
        let failing = Arc::new(Failing::default());
        failing.set(Some("shop"), "waiting", true);
        failing.set(Some("shop"), "fixed", true);
        failing.set(Some("shop"), "fixed", false);
        let (wake, (mut rb_rx, mut crb_rx)) = Wake::new();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tx.send("m-1".to_owned()).expect("send");
        drop(tx);
        wake_on_cluster(rx, works, failing, wake).await;
        let mut namespaced = Vec::new();
        while let Ok(r) = rb_rx.try_recv() {
            namespaced.push(format!("{}/{}", r.namespace.unwrap_or_default(), r.name));
        }
        namespaced.sort();
        assert_eq!(namespaced, ["shop/waiting", "shop/web"]);
        let cluster = crb_rx.try_recv().expect("the cluster-scoped binding woken");
        assert_eq!(cluster.name, "crds");
        assert!(crb_rx.try_recv().is_err());
    }

    #[test]
    fn an_interpreted_kind_keeps_its_whole_manifest() {
        let mut w = work(deployment());
        let kept = Kinds::from([("apps/v1".to_owned(), "Deployment".to_owned())]);
        trim(&mut w, &kept);
        assert_eq!(w.spec.manifests[0].0, deployment());
    }
}
