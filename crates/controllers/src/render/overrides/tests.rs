use std::collections::BTreeMap;

use flotilla_apis::policy::v1alpha1::{
    AnyJson, CommandArgsOperator, CommandArgsOverrider, ImageComponent, ImageOverrider,
    ImagePredicate, LabelAnnotationOverrider, OverriderOperator, Overriders, PlaintextOverrider,
};
use serde_json::{json, Value};

use super::*;

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {"replicas": 3, "template": {"spec": {
            "initContainers": [{"name": "init", "image": "busybox:1"}],
            "containers": [
                {"name": "web", "image": "nginx:1.25", "command": ["nginx"], "args": ["-g", "daemon off;"]},
                {"name": "side", "image": "ghcr.io/org/side:2"}]}}}})
}

fn image(
    path: Option<&str>,
    component: ImageComponent,
    operator: OverriderOperator,
    value: Option<&str>,
) -> Overriders {
    Overriders {
        image_overrider: vec![ImageOverrider {
            predicate: path.map(|p| ImagePredicate { path: p.to_owned() }),
            component,
            operator,
            value: value.map(str::to_owned),
        }],
        ..Overriders::default()
    }
}

fn plaintext(path: &str, operator: OverriderOperator, value: Option<Value>) -> Overriders {
    Overriders {
        plaintext: vec![PlaintextOverrider {
            path: path.to_owned(),
            operator,
            value: value.map(AnyJson),
        }],
        ..Overriders::default()
    }
}

fn command_args(
    args: bool,
    container: &str,
    operator: CommandArgsOperator,
    value: &[&str],
) -> Overriders {
    let o = vec![CommandArgsOverrider {
        container_name: container.to_owned(),
        operator,
        value: value.iter().map(|s| s.to_string()).collect(),
    }];
    if args {
        Overriders {
            args_overrider: o,
            ..Overriders::default()
        }
    } else {
        Overriders {
            command_overrider: o,
            ..Overriders::default()
        }
    }
}

fn map(annotations: bool, operator: OverriderOperator, kv: &[(&str, &str)]) -> Overriders {
    let value: BTreeMap<String, String> = kv
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let o = vec![LabelAnnotationOverrider { operator, value }];
    if annotations {
        Overriders {
            annotations_overrider: o,
            ..Overriders::default()
        }
    } else {
        Overriders {
            labels_overrider: o,
            ..Overriders::default()
        }
    }
}

/// (name, overriders, pointer checked, expected value there; `None`: the field is absent)
#[test]
fn applies() {
    use CommandArgsOperator as C;
    use ImageComponent::{Registry, Tag};
    use OverriderOperator::{Add, Remove, Replace};
    let c0 = "/spec/template/spec/containers/0";
    let cases: Vec<(&str, Overriders, String, Option<Value>)> = vec![
        (
            "registry on every container",
            image(None, Registry, Add, Some("r.example.com")),
            format!("{c0}/image"),
            Some(json!("r.example.com/nginx:1.25")),
        ),
        (
            "registry on the second container",
            image(None, Registry, Replace, Some("r.example.com")),
            "/spec/template/spec/containers/1/image".into(),
            Some(json!("r.example.com/org/side:2")),
        ),
        (
            "registry on init containers",
            image(None, Registry, Add, Some("r.example.com")),
            "/spec/template/spec/initContainers/0/image".into(),
            Some(json!("r.example.com/busybox:1")),
        ),
        (
            "predicate: only that image",
            image(
                Some("/spec/template/spec/containers/1/image"),
                Tag,
                Replace,
                Some("3"),
            ),
            format!("{c0}/image"),
            Some(json!("nginx:1.25")),
        ),
        (
            "predicate: that image changes",
            image(
                Some("/spec/template/spec/containers/1/image"),
                Tag,
                Replace,
                Some("3"),
            ),
            "/spec/template/spec/containers/1/image".into(),
            Some(json!("ghcr.io/org/side:3")),
        ),
        (
            "remove registry",
            image(None, Registry, Remove, None),
            "/spec/template/spec/containers/1/image".into(),
            Some(json!("org/side:2")),
        ),
        (
            "plaintext add",
            plaintext("/spec/paused", Add, Some(json!(true))),
            "/spec/paused".into(),
            Some(json!(true)),
        ),
        (
            "plaintext add to a list",
            plaintext(&format!("{c0}/args/-"), Add, Some(json!("-v"))),
            format!("{c0}/args/2"),
            Some(json!("-v")),
        ),
        (
            "plaintext replace",
            plaintext("/spec/replicas", Replace, Some(json!(5))),
            "/spec/replicas".into(),
            Some(json!(5)),
        ),
        (
            "plaintext remove",
            plaintext("/metadata/labels/tier", Remove, None),
            "/metadata/labels/tier".into(),
            None,
        ),
        (
            "plaintext escaped key",
            plaintext("/metadata/labels/a.io~1b", Add, Some(json!("c"))),
            "/metadata/labels/a.io~1b".into(),
            Some(json!("c")),
        ),
        (
            "command add",
            command_args(false, "web", C::Add, &["-q"]),
            format!("{c0}/command"),
            Some(json!(["nginx", "-q"])),
        ),
        (
            "args remove",
            command_args(true, "web", C::Remove, &["-g"]),
            format!("{c0}/args"),
            Some(json!(["daemon off;"])),
        ),
        (
            "args add creates the list",
            command_args(true, "side", C::Add, &["--x"]),
            "/spec/template/spec/containers/1/args".into(),
            Some(json!(["--x"])),
        ),
        (
            "command of another container untouched",
            command_args(false, "nope", C::Add, &["x"]),
            format!("{c0}/command"),
            Some(json!(["nginx"])),
        ),
        (
            "labels add",
            map(false, Add, &[("env", "prod"), ("app", "web2")]),
            "/metadata/labels".into(),
            Some(json!({"app": "web2", "tier": "front", "env": "prod"})),
        ),
        (
            "labels replace only existing",
            map(false, Replace, &[("tier", "back"), ("new", "x")]),
            "/metadata/labels".into(),
            Some(json!({"app": "web", "tier": "back"})),
        ),
        (
            "labels remove",
            map(false, Remove, &[("tier", "")]),
            "/metadata/labels".into(),
            Some(json!({"app": "web"})),
        ),
        (
            "annotations add",
            map(true, Add, &[("a", "b")]),
            "/metadata/annotations".into(),
            Some(json!({"a": "b"})),
        ),
        (
            "annotations remove last drops the map",
            map(true, Remove, &[("a", "")]),
            "/metadata/annotations".into(),
            None,
        ),
    ];
    for (name, overriders, pointer, want) in cases {
        let mut obj = deployment();
        apply_overrides(&mut obj, &overriders).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(obj.pointer(&pointer).cloned(), want, "{name}");
    }
}

#[test]
fn errors_name_the_overrider_and_path() {
    use OverriderOperator::{Add, Remove, Replace};
    let cases: Vec<(&str, Overriders, &str, &str)> = vec![
        (
            "add below a missing parent",
            plaintext("/spec/nope/x", Add, Some(json!(1))),
            "plaintext",
            "/spec/nope/x",
        ),
        (
            "replace a missing field",
            plaintext("/spec/nope", Replace, Some(json!(1))),
            "plaintext",
            "/spec/nope",
        ),
        (
            "remove a missing field",
            plaintext("/metadata/labels/nope", Remove, None),
            "plaintext",
            "/metadata/labels/nope",
        ),
        (
            "index out of range",
            plaintext("/spec/template/spec/containers/9", Remove, None),
            "plaintext",
            "/spec/template/spec/containers/9",
        ),
        (
            "not a pointer",
            plaintext("spec", Add, Some(json!(1))),
            "plaintext",
            "spec",
        ),
        (
            "replace without a value",
            plaintext("/spec/replicas", Replace, None),
            "plaintext",
            "/spec/replicas",
        ),
        (
            "image predicate to nothing",
            image(
                Some("/spec/template/spec/containers/5/image"),
                ImageComponent::Tag,
                Replace,
                Some("1"),
            ),
            "imageOverrider",
            "/spec/template/spec/containers/5/image",
        ),
        (
            "image predicate to a non-string",
            image(
                Some("/spec/replicas"),
                ImageComponent::Tag,
                Replace,
                Some("1"),
            ),
            "imageOverrider",
            "/spec/replicas",
        ),
    ];
    for (name, overriders, want_overrider, want_path) in cases {
        let mut obj = deployment();
        match apply_overrides(&mut obj, &overriders) {
            Err(Error::Override {
                overrider, path, ..
            }) => {
                assert_eq!(
                    (overrider, path.as_str()),
                    (want_overrider, want_path),
                    "{name}"
                );
            }
            other => panic!("{name}: expected an override error, got {other:?}"),
        }
    }
}

#[test]
fn images_of_each_kind() {
    let o = image(
        None,
        ImageComponent::Registry,
        OverriderOperator::Add,
        Some("r.io"),
    );
    let cases = [
        (
            json!({"kind": "Pod", "spec": {"containers": [{"name": "a", "image": "a:1"}]}}),
            "/spec/containers/0/image",
        ),
        (
            json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a:1"}]}}}}}}),
            "/spec/jobTemplate/spec/template/spec/containers/0/image",
        ),
        (
            json!({"kind": "DaemonSet", "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a:1"}]}}}}),
            "/spec/template/spec/containers/0/image",
        ),
    ];
    for (mut obj, pointer) in cases {
        apply_overrides(&mut obj, &o).unwrap();
        assert_eq!(obj.pointer(pointer), Some(&json!("r.io/a:1")), "{pointer}");
    }
    // A kind without a pod template is left alone.
    let mut cm = json!({"kind": "ConfigMap", "data": {"image": "a:1"}});
    apply_overrides(&mut cm, &o).unwrap();
    assert_eq!(cm, json!({"kind": "ConfigMap", "data": {"image": "a:1"}}));
}

#[test]
fn plaintext_runs_after_the_other_overriders() {
    let mut o = image(
        None,
        ImageComponent::Tag,
        OverriderOperator::Replace,
        Some("2"),
    );
    o.plaintext = plaintext(
        "/spec/template/spec/containers/0/image",
        OverriderOperator::Replace,
        Some(json!("pinned:9")),
    )
    .plaintext;
    let mut obj = deployment();
    apply_overrides(&mut obj, &o).unwrap();
    assert_eq!(
        obj.pointer("/spec/template/spec/containers/0/image"),
        Some(&json!("pinned:9"))
    );
    assert_eq!(
        obj.pointer("/spec/template/spec/containers/1/image"),
        Some(&json!("ghcr.io/org/side:2"))
    );
}

/// No overrider writes what an object is (issue 18: a namespace's policy rewrote a copy's
/// namespace or kind to reach the rest of a member); the object is left as it was.
#[test]
fn identity_fields_are_refused() {
    use OverriderOperator::{Add, Remove, Replace};
    let cases: Vec<(&str, Overriders, &str)> = vec![
        (
            "namespace",
            plaintext("/metadata/namespace", Add, Some(json!("kube-system"))),
            "plaintext",
        ),
        (
            "name",
            plaintext("/metadata/name", Replace, Some(json!("other"))),
            "plaintext",
        ),
        (
            "kind",
            plaintext("/kind", Replace, Some(json!("ClusterRoleBinding"))),
            "plaintext",
        ),
        (
            "apiVersion",
            plaintext(
                "/apiVersion",
                Replace,
                Some(json!("rbac.authorization.k8s.io/v1")),
            ),
            "plaintext",
        ),
        (
            "generateName",
            plaintext("/metadata/generateName", Add, Some(json!("x-"))),
            "plaintext",
        ),
        (
            "the whole metadata",
            plaintext(
                "/metadata",
                Replace,
                Some(json!({"name": "web", "namespace": "kube-system"})),
            ),
            "plaintext",
        ),
        (
            "the whole object",
            plaintext("", Replace, Some(json!({}))),
            "plaintext",
        ),
        (
            "remove the namespace",
            plaintext("/metadata/namespace", Remove, None),
            "plaintext",
        ),
        (
            "an image predicate on the name",
            image(
                Some("/metadata/name"),
                ImageComponent::Registry,
                Add,
                Some("r.io"),
            ),
            "imageOverrider",
        ),
    ];
    for (name, overriders, want) in cases {
        let mut obj = deployment();
        obj["metadata"]["namespace"] = json!("team");
        let before = obj.clone();
        match apply_overrides(&mut obj, &overriders) {
            Err(Error::Override {
                overrider, reason, ..
            }) => {
                assert_eq!(overrider, want, "{name}");
                assert!(reason.contains("identity"), "{name}: {reason}");
            }
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
        assert_eq!(obj, before, "{name}: nothing was written");
    }
}
