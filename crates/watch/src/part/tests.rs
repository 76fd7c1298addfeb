//! The sieve: what is stored, what is cut, and what wakes.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::watcher::Event;

use super::*;

fn cm(name: &str, kept: bool, data: &str, noise: &str) -> ConfigMap {
    let labels = kept.then(|| [("kept".to_owned(), "yes".to_owned())].into());
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("ns".to_owned()),
            labels,
            annotations: Some([("noise".to_owned(), noise.to_owned())].into()),
            managed_fields: Some(vec![Default::default()]),
            ..ObjectMeta::default()
        },
        data: Some([("d".to_owned(), data.to_owned())].into()),
        ..ConfigMap::default()
    }
}

fn sieve() -> Sieve<ConfigMap> {
    Sieve::new(Part {
        keep: |c: &ConfigMap| {
            c.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("kept"))
        },
        trim: |c: &mut ConfigMap| c.metadata.annotations = None,
        digest: |c: &ConfigMap| {
            c.data
                .as_ref()
                .map_or(0, |d| d.len() as u64 + d["d"].len() as u64)
        },
    })
}

/// An event's kind and object name, and whether it woke the reader.
type Seen = (&'static str, String, bool);

/// What the sieve let through of an event ([`Seen`]), checked lean and trimmed.
fn seen(out: Option<(Event<ConfigMap>, bool)>) -> Option<Seen> {
    let (e, wake) = out?;
    let (kind, o) = match e {
        Event::Apply(o) => ("apply", Some(o)),
        Event::Delete(o) => ("delete", Some(o)),
        Event::InitApply(o) => ("init-apply", Some(o)),
        Event::Init => ("init", None),
        Event::InitDone => ("init-done", None),
    };
    if let Some(o) = &o {
        assert!(o.metadata.managed_fields.is_none(), "lean");
        assert!(o.metadata.annotations.is_none(), "trimmed");
    }
    Some((
        kind,
        o.and_then(|o| o.metadata.name).unwrap_or_default(),
        wake,
    ))
}

#[test]
fn only_kept_objects_are_stored_and_only_what_the_reader_reads_wakes_it() {
    let mut s = sieve();
    let none = String::new;
    // Each event in turn, and what the sieve makes of it.
    let steps: Vec<(Event<ConfigMap>, Option<Seen>)> = vec![
        (Event::Init, Some(("init", none(), false))),
        (
            Event::InitApply(cm("a", true, "x", "1")),
            Some(("init-apply", "a".into(), false)),
        ),
        (Event::InitApply(cm("b", false, "x", "1")), None),
        (Event::InitDone, Some(("init-done", none(), true))),
        // What the reader depends on is unchanged: stored (it may read the rest), no wake-up.
        (
            Event::Apply(cm("a", true, "x", "2")),
            Some(("apply", "a".into(), false)),
        ),
        (
            Event::Apply(cm("a", true, "xy", "2")),
            Some(("apply", "a".into(), true)),
        ),
        // Objects not kept come and go unseen.
        (Event::Apply(cm("b", false, "y", "2")), None),
        (Event::Delete(cm("b", false, "y", "2")), None),
        // One that stops being kept leaves the store; a kept one's deletion is told, once.
        (
            Event::Apply(cm("c", true, "z", "1")),
            Some(("apply", "c".into(), true)),
        ),
        (
            Event::Apply(cm("c", false, "z", "1")),
            Some(("delete", "c".into(), true)),
        ),
        (
            Event::Delete(cm("a", true, "xy", "2")),
            Some(("delete", "a".into(), true)),
        ),
        (Event::Delete(cm("a", true, "xy", "2")), None),
    ];
    for (i, (event, want)) in steps.into_iter().enumerate() {
        assert_eq!(seen(s.sift(event)), want, "step {i}");
    }
}
