use super::*;

#[test]
fn deployment_ready_cell() {
    let d = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2}});
    assert_eq!(computed("@ready", &d), json!("2/3"));
}
