use std::collections::HashMap;

use super::{check, Fields, Type};

/// A Deployment-like schema: `Deployment.spec.replicas` is an int, labels a map of strings.
struct Schema;

impl Fields for Schema {
    fn field(&self, object: &str, field: &str) -> Option<Type> {
        match (object, field) {
            ("Deployment", "spec") => Some(Type::Object("Spec".into())),
            ("Deployment", "metadata") => Some(Type::Object("Meta".into())),
            ("Meta", "name") => Some(Type::String),
            ("Meta", "labels") => Some(Type::Map(Box::new(Type::String))),
            ("Spec", "replicas") => Some(Type::Int),
            ("Spec", "paused") => Some(Type::Bool),
            ("Spec", "containers") => Some(Type::List(Box::new(Type::Object("C".into())))),
            ("C", "image") => Some(Type::String),
            _ => None,
        }
    }
}

fn errors(source: &str) -> Vec<String> {
    let vars = HashMap::from([
        ("object".to_string(), Type::Object("Deployment".into())),
        ("params".to_string(), Type::Dyn),
    ]);
    check(source, &vars, &Schema)
}

#[test]
fn well_typed_expressions_pass() {
    for ok in [
        "object.spec.replicas > 1",
        "object.spec.replicas > 1.5",
        "'wants replicas > 1, got ' + string(object.spec.replicas)",
        "object.metadata.labels['app'] == 'x' && !object.spec.paused",
        "object.spec.containers.all(c, c.image.startsWith('nginx'))",
        "has(object.spec.replicas) ? object.spec.replicas : 0",
        "params.max > object.spec.replicas",
        "object.spec.containers.map(c, c.image).size() > 0",
        "object.metadata.labels.exists(k, k.startsWith('a'))",
    ] {
        assert_eq!(errors(ok), Vec::<String>::new(), "{ok}");
    }
}

#[test]
fn type_confusion_is_found_as_cel_go_words_it() {
    let cases = [
        (
            "object.spec.replicas > '1'",
            "found no matching overload for '_>_' applied to '(int, string)'",
        ),
        (
            "'wants replicas > 1, got ' + object.spec.replicas",
            "found no matching overload for '_+_' applied to '(string, int)'",
        ),
        ("object.spec.replicass > 1", "undefined field 'replicass'"),
        (
            "object.spec.containers.all(c, c.imag == 'x')",
            "undefined field 'imag'",
        ),
        (
            "object.spec.paused && 1",
            "found no matching overload for '_&&_' applied to '(bool, int)'",
        ),
    ];
    for (source, want) in cases {
        let got = errors(source);
        assert_eq!(got.len(), 1, "{source}: {got:?}");
        assert!(got[0].contains(want), "{source}: {}", got[0]);
        assert!(got[0].starts_with("ERROR: <input>:1:"), "{}", got[0]);
    }
}

#[test]
fn the_error_points_at_the_operator() {
    let got = errors("object.spec.replicas > '1'");
    assert!(got[0].starts_with("ERROR: <input>:1:22:"), "{}", got[0]);
    assert!(got[0].ends_with(" | .....................^"), "{}", got[0]);
}
