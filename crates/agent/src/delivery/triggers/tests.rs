use flotilla_apis::work::v1alpha1::{Work, WorkSpec, WorkStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::watcher::Event;

use super::Triggers;

fn work(generation: i64) -> Work {
    let mut w = Work::new("web", WorkSpec::default());
    w.metadata.namespace = Some("flotilla-es-m-1".into());
    w.metadata.generation = Some(generation);
    w
}

#[test]
fn new_works_and_changed_specs_are_reconciled_status_writes_are_not() {
    let t = Triggers::default();
    assert_eq!(t.triggered(&Event::Apply(work(1))).as_deref(), Some("web"));
    let mut reported = work(1);
    reported.status = Some(WorkStatus::default());
    reported.metadata.resource_version = Some("9".into());
    assert_eq!(t.triggered(&Event::Apply(reported)), None, "a status write");
    assert_eq!(t.triggered(&Event::Apply(work(2))).as_deref(), Some("web"));
}

#[test]
fn finalizers_deletion_and_a_relist_are_reconciled() {
    let t = Triggers::default();
    t.triggered(&Event::Apply(work(1)));
    let mut finalized = work(1);
    finalized.metadata.finalizers = Some(vec!["work.flotilla.io/cleanup".into()]);
    assert!(t.triggered(&Event::Apply(finalized.clone())).is_some());
    let mut deleting = finalized.clone();
    deleting.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
    assert!(t.triggered(&Event::Apply(deleting)).is_some());
    // After a watch restart, whatever it missed.
    assert!(t.triggered(&Event::InitApply(work(1))).is_some());
}

#[test]
fn a_deleted_work_is_forgotten() {
    let t = Triggers::default();
    t.triggered(&Event::Apply(work(1)));
    assert_eq!(t.triggered(&Event::Delete(work(1))), None);
    assert!(
        t.triggered(&Event::Apply(work(1))).is_some(),
        "created again"
    );
}
