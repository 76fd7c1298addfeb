use serde_json::json;

use super::*;

fn crd(name: &str, uid: &str, established: bool) -> Value {
    let status = if established { "True" } else { "False" };
    json!({"metadata": {"name": name, "uid": uid},
           "status": {"conditions": [{"type": "Established", "status": status}]}})
}

fn names(v: &[Value]) -> Vec<String> {
    v.iter().map(mark_of).collect()
}

#[test]
fn marks_override_the_cache_until_it_catches_up() {
    let a = crd("a.x", "1", true);
    let a_pending = crd("a.x", "1", false);
    let a_again = crd("a.x", "2", true);
    let b = crd("b.x", "3", true);
    struct Case {
        what: &'static str,
        retiring: &'static [&'static str],
        establishing: &'static [&'static str],
        cache: Vec<Value>,
        served: &'static [&'static str],
        retiring_after: &'static [&'static str],
        establishing_after: &'static [&'static str],
    }
    let cases = [
        Case {
            what: "established CRDs are served",
            retiring: &[],
            establishing: &[],
            cache: vec![a.clone(), b.clone()],
            served: &["a.x/1", "b.x/3"],
            retiring_after: &[],
            establishing_after: &[],
        },
        Case {
            what: "not established: not served",
            retiring: &[],
            establishing: &[],
            cache: vec![a_pending.clone()],
            served: &[],
            retiring_after: &[],
            establishing_after: &[],
        },
        Case {
            what: "retiring, still cached (a read older than the delete): not served",
            retiring: &["a.x/1"],
            establishing: &[],
            cache: vec![a.clone(), b.clone()],
            served: &["b.x/3"],
            retiring_after: &["a.x/1"],
            establishing_after: &[],
        },
        Case {
            what: "retiring, gone from the cache: mark dropped",
            retiring: &["a.x/1"],
            establishing: &[],
            cache: vec![b.clone()],
            served: &["b.x/3"],
            retiring_after: &[],
            establishing_after: &[],
        },
        Case {
            what: "a new CRD of a retired name is another CRD",
            retiring: &["a.x/1"],
            establishing: &[],
            cache: vec![a_again.clone()],
            served: &["a.x/2"],
            retiring_after: &[],
            establishing_after: &[],
        },
        Case {
            what: "establishing, cache not caught up: served, mark kept",
            retiring: &[],
            establishing: &["a.x/1"],
            cache: vec![a_pending.clone()],
            served: &["a.x/1"],
            retiring_after: &[],
            establishing_after: &["a.x/1"],
        },
        Case {
            what: "establishing, cache caught up: served, mark dropped",
            retiring: &[],
            establishing: &["a.x/1"],
            cache: vec![a.clone()],
            served: &["a.x/1"],
            retiring_after: &[],
            establishing_after: &[],
        },
        Case {
            what: "establishing, gone from the cache: mark dropped",
            retiring: &[],
            establishing: &["a.x/1"],
            cache: vec![],
            served: &[],
            retiring_after: &[],
            establishing_after: &[],
        },
    ];
    let set = |s: &[&str]| s.iter().map(|m| m.to_string()).collect::<BTreeSet<_>>();
    for c in cases {
        let mut marks = Marks {
            retiring: set(c.retiring),
            establishing: set(c.establishing),
        };
        let served = marks.select(c.cache);
        assert_eq!(names(&served), c.served, "{}", c.what);
        assert_eq!(marks.retiring, set(c.retiring_after), "{}", c.what);
        assert_eq!(marks.establishing, set(c.establishing_after), "{}", c.what);
    }
}
