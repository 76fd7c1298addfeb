use super::*;

#[test]
fn a_work_of_labelled_configmaps() {
    let w = work(
        "bench-1",
        "flotilla-es-member-1",
        "w1",
        &["a".into(), "b".into()],
    );
    let v = serde_json::to_value(&w).unwrap();
    assert_eq!(v["apiVersion"], "work.flotilla.io/v1alpha1");
    assert_eq!(v["metadata"]["namespace"], "flotilla-es-member-1");
    assert_eq!(v["metadata"]["labels"][RUN_LABEL], "bench-1");
    let m = &v["spec"]["manifests"];
    assert_eq!(m.as_array().unwrap().len(), 2);
    assert_eq!(m[1]["metadata"]["name"], "b");
    assert_eq!(m[1]["metadata"]["namespace"], BENCH_NAMESPACE);
    assert_eq!(m[1]["metadata"]["labels"][RUN_LABEL], "bench-1");
    assert_eq!(m[0]["data"]["payload"].as_str().unwrap().len(), DATA_BYTES);
    assert_eq!(
        crate::track::selector("bench-1"),
        "bench.flotilla.io/run=bench-1"
    );
}

#[test]
fn manifests_split_into_works() {
    let table: &[(usize, usize, &[usize])] = &[
        (0, 100, &[]),
        (100, 100, &[100]),
        (250, 100, &[100, 100, 50]),
        (9_667, 100, &[100; 96]),
        (3, 0, &[1, 1, 1]),
    ];
    for (total, per, want) in table {
        let got = batches(*total, *per);
        if *total == 9_667 {
            assert_eq!(got.len(), 97);
            assert_eq!(got.iter().sum::<usize>(), 9_667);
            assert_eq!(got[96], 67);
        } else {
            assert_eq!(&got, want, "{total} by {per}");
        }
    }
}
