use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::watcher::Event;

use super::{Events, State};

fn cm(ns: &str, name: &str, rv: u64) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            resource_version: Some(rv.to_string()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// What a reader has been sent so far, as `init`, `+name@rv` (listed or changed), `-name@rv`,
/// `done`.
fn drain(events: &mut Events<ConfigMap>) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(Some(event)) = events.next().now_or_never() {
        let show = |o: &ConfigMap, sign: &str| {
            format!(
                "{sign}{}@{}",
                o.metadata.name.as_deref().unwrap(),
                o.metadata.resource_version.as_deref().unwrap()
            )
        };
        seen.push(match event.unwrap() {
            Event::Init => "init".to_owned(),
            Event::InitApply(o) | Event::Apply(o) => show(&o, "+"),
            Event::Delete(o) => show(&o, "-"),
            Event::InitDone => "done".to_owned(),
        });
    }
    seen
}

#[test]
fn readers_there_when_the_shared_list_began_get_their_namespace_of_it() {
    let mut state = State::<ConfigMap>::new();
    let (_, mut a) = state.add("a");
    let (_, mut b) = state.add("b");
    state.take(Event::Init);
    state.take(Event::InitApply(cm("a", "x", 1)));
    state.take(Event::InitApply(cm("b", "y", 2)));
    state.take(Event::InitApply(cm("c", "z", 3)));
    state.take(Event::InitDone);
    assert_eq!(drain(&mut a), ["init", "+x@1", "done"]);
    assert_eq!(drain(&mut b), ["init", "+y@2", "done"]);
    state.take(Event::Apply(cm("a", "x", 4)));
    state.take(Event::Delete(cm("b", "y", 5)));
    state.take(Event::Apply(cm("c", "z", 6)));
    assert_eq!(drain(&mut a), ["+x@4"]);
    assert_eq!(drain(&mut b), ["-y@5"]);
}

#[test]
fn a_reader_that_lists_itself_gets_only_what_its_list_did_not_hold() {
    let mut state = State::<ConfigMap>::new();
    state.take(Event::Init);
    state.take(Event::InitDone);
    let (id, mut a) = state.add("a");
    // Changes while its list is under way wait for it.
    state.take(Event::Apply(cm("a", "x", 10)));
    state.take(Event::Apply(cm("a", "w", 12)));
    assert_eq!(drain(&mut a), Vec::<String>::new());
    // Its list was taken at 11: it held x@10, not w@12.
    state.listed_own("a", id, vec![cm("a", "x", 10)], Some(11));
    assert_eq!(drain(&mut a), ["init", "+x@10", "done", "+w@12"]);
    // From now on: what is newer than its list.
    state.take(Event::Apply(cm("a", "x", 9)));
    state.take(Event::Apply(cm("a", "x", 13)));
    assert_eq!(drain(&mut a), ["+x@13"]);
}

#[test]
fn a_reader_that_came_during_the_shared_list_is_left_to_its_own() {
    let mut state = State::<ConfigMap>::new();
    state.take(Event::Init);
    let (id, mut a) = state.add("a");
    state.take(Event::InitApply(cm("a", "x", 1)));
    state.take(Event::InitDone);
    // The shared list may have missed part of its namespace: it lists itself.
    assert_eq!(drain(&mut a), Vec::<String>::new());
    assert!(state.waiting("a", id).is_some());
    state.listed_own("a", id, vec![cm("a", "x", 1)], Some(1));
    assert_eq!(drain(&mut a), ["init", "+x@1", "done"]);
}

#[test]
fn a_new_shared_list_replaces_what_every_reader_holds() {
    let mut state = State::<ConfigMap>::new();
    let (_, mut a) = state.add("a");
    state.take(Event::Init);
    state.take(Event::InitApply(cm("a", "x", 1)));
    state.take(Event::InitApply(cm("a", "y", 2)));
    state.take(Event::InitDone);
    drain(&mut a);
    // The watch's history expired and it listed again; y was deleted meanwhile, unseen.
    state.take(Event::Init);
    state.take(Event::InitApply(cm("a", "x", 1)));
    state.take(Event::InitDone);
    assert_eq!(drain(&mut a), ["init", "+x@1", "done"]);
    state.take(Event::Apply(cm("a", "x", 3)));
    assert_eq!(drain(&mut a), ["+x@3"]);
}

#[test]
fn a_dropped_reader_is_forgotten() {
    let mut state = State::<ConfigMap>::new();
    state.take(Event::Init);
    state.take(Event::InitDone);
    let (id, a) = state.add("a");
    drop(a);
    assert!(state.waiting("a", id).is_none(), "its list stops");
    state.take(Event::Apply(cm("a", "x", 1)));
    assert!(state.readers.is_empty());
}
