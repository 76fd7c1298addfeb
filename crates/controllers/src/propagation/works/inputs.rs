//! What the binding controller's work for a binding depends on ([`super::super::settled`]):
//! the binding's generation (its spec), annotations (the template's content hash, orphaning,
//! the placement), finalizers and the scheduler's observed generation; its Works as they are
//! now (each one's resourceVersion); and the epoch of the override policies and clusters. The
//! template's content is there through its hash, which the detector keeps on the binding.
//! Status writes — the binding's, the template's — change none of these.
//!
//! Rendering depends on less ([`Inputs::rendered_of`]): not on the Works' status reports, so
//! the reconciles that only sum those up neither read the template again nor render.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use flotilla_apis::work::v1alpha1::Work;
use kube::ResourceExt;

use super::{cluster_of, RENDER_HASH_ANNOTATION};
use crate::propagation::binding::BindingObject;

/// A digest of the inputs: kept for every binding, twice, so 8 bytes rather than the strings
/// they are made of. A collision (one in 2^64 per change) would leave a binding unreconciled
/// until its entry ages out ([`crate::propagation::settled::MAX_AGE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Inputs(u64);

/// What a binding's Works were last rendered from ([`Inputs::rendered_of`]), and what summing
/// status reads of the template (`status::status_view`, with the status this controller last
/// wrote into it) as JSON text, parsed when used: a few hundred bytes where the parsed view
/// took 5 KB. Compared by the inputs only.
#[derive(Clone, Debug)]
pub(super) struct Rendered {
    pub inputs: Inputs,
    pub view: Option<Arc<str>>,
}

impl PartialEq for Rendered {
    fn eq(&self, other: &Self) -> bool {
        self.inputs == other.inputs
    }
}

impl Inputs {
    pub(super) fn of<B: BindingObject>(b: &B, works: &[Arc<Work>], epoch: u64) -> Self {
        Self::with(b, works, epoch, |w| w.metadata.resource_version.clone())
    }

    /// What rendering the binding's Works depends on: as [`Inputs::of`], but each Work counts
    /// by what was rendered into it (its render hash) and whether it is being deleted, not by
    /// its resourceVersion, which its status reports move.
    pub(super) fn rendered_of<B: BindingObject>(b: &B, works: &[Arc<Work>], epoch: u64) -> Self {
        Self::with(b, works, epoch, |w| {
            let hash = w.annotations().get(RENDER_HASH_ANNOTATION);
            let deleting = w.metadata.deletion_timestamp.is_some();
            Some(rendered_version(hash.map_or("", String::as_str), deleting))
        })
    }

    /// [`Inputs::rendered_of`] the binding's Works will show once the watch brings back what
    /// was just written: each with the render hash `hashes` gives its cluster. `None` unless
    /// `works` are exactly those clusters' Works and none is being deleted (a Work made or
    /// deleted changes the set, which is then read from the watch as it comes).
    pub(super) fn rendered_after<B: BindingObject>(
        b: &B,
        works: &[Arc<Work>],
        epoch: u64,
        hashes: &HashMap<String, String>,
    ) -> Option<Self> {
        let same = works.len() == hashes.len()
            && works.iter().all(|w| {
                w.metadata.deletion_timestamp.is_none() && hashes.contains_key(cluster_of(w))
            });
        same.then(|| {
            Self::with(b, works, epoch, |w| {
                Some(rendered_version(&hashes[cluster_of(w)], false))
            })
        })
    }

    fn with<B: BindingObject>(
        b: &B,
        works: &[Arc<Work>],
        epoch: u64,
        version: impl Fn(&Work) -> Option<String>,
    ) -> Self {
        let mut works: Vec<_> = works
            .iter()
            .map(|w| (w.metadata.namespace.clone(), version(w)))
            .collect();
        works.sort();
        let mut digest = std::hash::DefaultHasher::new();
        (
            epoch,
            b.meta().generation,
            b.annotations(),
            b.finalizers(),
            b.status().and_then(|s| s.scheduler_observed_generation),
            works,
        )
            .hash(&mut digest);
        Self(digest.finish())
    }
}

/// What a Work counts as in [`Inputs::rendered_of`].
fn rendered_version(hash: &str, deleting: bool) -> String {
    format!("{hash}{}", if deleting { " deleting" } else { "" })
}

#[cfg(test)]
mod tests {
    use flotilla_apis::work::v1alpha1::{ResourceBinding, ResourceBindingStatus};

    use super::*;

    fn work(cluster: &str, rv: &str) -> Arc<Work> {
        let mut w = Work::new("shop-web-deployment", Default::default());
        w.metadata.namespace = Some(format!("flotilla-es-{cluster}"));
        w.metadata.resource_version = Some(rv.into());
        Arc::new(w)
    }

    /// A Work of `cluster` at `rv` whose render hash is `hash`.
    fn hashed(cluster: &str, rv: &str, hash: &str) -> Arc<Work> {
        let mut w = (*work(cluster, rv)).clone();
        w.annotations_mut()
            .insert(RENDER_HASH_ANNOTATION.into(), hash.into());
        Arc::new(w)
    }

    /// `w` being deleted.
    fn deleting(w: &Work) -> Arc<Work> {
        let mut w = w.clone();
        w.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
        Arc::new(w)
    }

    #[test]
    fn status_writes_are_not_inputs_but_works_and_the_template_hash_are() {
        let mut b = ResourceBinding::new("web-deployment", Default::default());
        b.metadata.generation = Some(2);
        b.annotations_mut()
            .insert("work.flotilla.io/template-hash".into(), "aa".into());
        let works = [work("m-1", "10"), work("m-2", "11")];
        let before = Inputs::of(&b, &works, 1);
        let mut summed = b.clone();
        summed.status = Some(ResourceBindingStatus {
            aggregated_status: vec![Default::default()],
            ..Default::default()
        });
        assert_eq!(before, Inputs::of(&summed, &works, 1));
        // The same Works in another order.
        assert_eq!(
            before,
            Inputs::of(&b, &[works[1].clone(), works[0].clone()], 1)
        );
        // A Work's status moved; an override or cluster changed; the template changed.
        assert_ne!(
            before,
            Inputs::of(&b, &[work("m-1", "12"), works[1].clone()], 1)
        );
        assert_ne!(before, Inputs::of(&b, &works, 2));
        let mut changed = b.clone();
        changed
            .annotations_mut()
            .insert("work.flotilla.io/template-hash".into(), "bb".into());
        assert_ne!(before, Inputs::of(&changed, &works, 1));
    }

    #[test]
    fn a_works_status_report_is_no_rendering_input_but_its_render_hash_is() {
        let b = ResourceBinding::new("web-deployment", Default::default());
        let before = Inputs::rendered_of(&b, &[hashed("m-1", "10", "h1")], 1);
        // Its status reported: a new resourceVersion, the same render.
        assert_eq!(
            before,
            Inputs::rendered_of(&b, &[hashed("m-1", "11", "h1")], 1)
        );
        assert_ne!(
            before,
            Inputs::rendered_of(&b, &[hashed("m-1", "12", "h2")], 1)
        );
        let gone = deleting(&hashed("m-1", "13", "h1"));
        assert_ne!(before, Inputs::rendered_of(&b, &[gone], 1));
        assert_ne!(before, Inputs::rendered_of(&b, &[], 1));
    }

    #[test]
    fn the_inputs_after_a_write_are_those_its_works_come_back_with() {
        let b = ResourceBinding::new("web-deployment", Default::default());
        let before = [hashed("m-1", "10", "h1"), hashed("m-2", "11", "h1")];
        let hashes: HashMap<String, String> = [("m-1", "h2"), ("m-2", "h1")]
            .map(|(c, h)| (c.to_owned(), h.to_owned()))
            .into();
        let after = [hashed("m-1", "12", "h2"), hashed("m-2", "11", "h1")];
        assert_eq!(
            Inputs::rendered_after(&b, &before, 1, &hashes),
            Some(Inputs::rendered_of(&b, &after, 1))
        );
        assert_ne!(
            Inputs::rendered_after(&b, &before, 1, &hashes),
            Some(Inputs::rendered_of(&b, &before, 1))
        );
        // A Work made, one left behind, one being deleted: the set changes, not predicted.
        assert_eq!(Inputs::rendered_after(&b, &before[..1], 1, &hashes), None);
        let mut more = hashes.clone();
        more.insert("m-3".into(), "h2".into());
        assert_eq!(Inputs::rendered_after(&b, &before, 1, &more), None);
        let with_deleting = [before[0].clone(), deleting(&before[1])];
        assert_eq!(Inputs::rendered_after(&b, &with_deleting, 1, &hashes), None);
    }
}
