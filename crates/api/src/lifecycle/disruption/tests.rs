use serde_json::json;

use super::*;

fn pdb(spec: Value) -> Value {
    json!({"metadata": {"name": "b", "generation": 2}, "spec": spec})
}

fn pod(name: &str, labels: Value, ready: bool) -> Value {
    json!({"metadata": {"name": name, "labels": labels},
           "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
}

#[test]
fn a_budget_counts_the_matching_pods() {
    let pods = vec![
        pod("a", json!({"foo": "bar"}), true),
        pod("b", json!({"foo": "bar"}), true),
        pod("c", json!({"foo": "bar"}), false),
        pod("d", json!({"other": "x"}), true),
    ];
    let sel = json!({"matchLabels": {"foo": "bar"}});
    // (spec, expected, healthy, desired, allowed)
    let cases = [
        (json!({"selector": sel, "minAvailable": 1}), 3, 2, 1, 1),
        (json!({"selector": sel, "minAvailable": 2}), 3, 2, 2, 0),
        (json!({"selector": sel, "minAvailable": "50%"}), 3, 2, 2, 0),
        (json!({"selector": sel, "maxUnavailable": 1}), 3, 2, 2, 0),
        (
            json!({"selector": sel, "maxUnavailable": "100%"}),
            3,
            2,
            0,
            2,
        ),
        (
            json!({"selector": {"matchLabels": {"none": "x"}}, "minAvailable": 2}),
            0,
            0,
            2,
            0,
        ),
    ];
    for (spec, expected, healthy, desired, allowed) in cases {
        let s = status(&pdb(spec.clone()), &pods, "T");
        assert_eq!(s["observedGeneration"], 2, "{spec}");
        assert_eq!(
            (
                &s["expectedPods"],
                &s["currentHealthy"],
                &s["desiredHealthy"],
                &s["disruptionsAllowed"]
            ),
            (
                &json!(expected),
                &json!(healthy),
                &json!(desired),
                &json!(allowed)
            ),
            "{spec}"
        );
        let c = &s["conditions"][0];
        assert_eq!(c["type"], "DisruptionAllowed");
        assert_eq!(c["status"], if allowed > 0 { "True" } else { "False" });
    }
}

#[test]
fn an_unchanged_condition_keeps_its_time_and_disrupted_pods_stay() {
    let mut b = pdb(json!({"selector": {}, "minAvailable": 1}));
    let first = status(&b, &[], "T1");
    assert_eq!(first["conditions"][0]["lastTransitionTime"], "T1");
    b["status"] = first.clone();
    b["status"]["disruptedPods"] = json!({"p": "T0"});
    let again = status(&b, &[], "T2");
    assert_eq!(again["conditions"][0]["lastTransitionTime"], "T1");
    assert_eq!(again["disruptedPods"], json!({"p": "T0"}));
}
