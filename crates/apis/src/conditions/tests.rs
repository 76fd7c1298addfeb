use super::*;

#[test]
fn transition_time_moves_only_with_the_status() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let t1: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
    let mut c = Vec::new();
    let ready = |status, message| Set {
        type_: "Ready",
        status,
        reason: "R",
        message,
    };
    assert!(set(&mut c, ready("True", "a"), t0));
    assert!(!set(&mut c, ready("True", "a"), t1));
    assert!(set(&mut c, ready("True", "b"), t1));
    assert_eq!(c[0].last_transition_time.0, t0);
    assert!(set(&mut c, ready("False", "b"), t1));
    assert_eq!(c[0].last_transition_time.0, t1);
    set(
        &mut c,
        Set {
            type_: "Joined",
            status: "True",
            reason: "J",
            message: "",
        },
        t1,
    );
    assert_eq!(
        c.iter().map(|c| c.type_.as_str()).collect::<Vec<_>>(),
        ["Joined", "Ready"]
    );
    assert!(is_true(&c, "Joined") && !is_true(&c, "Ready"));
}
