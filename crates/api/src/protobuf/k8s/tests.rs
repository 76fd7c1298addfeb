//! Decoding bodies produced by the `k8s-pb` prost types, shaped as Go's encoder shapes them
//! (non-pointer fields always present, zero or not), and compared with the JSON Go would write.

use std::collections::BTreeMap;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::authentication::v1 as authn;
use k8s_pb::api::authorization::v1 as authz;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{json, Value};

use super::{decode_k8s_protobuf, decode_k8s_protobuf_with, encode_k8s_protobuf, MAGIC};
use crate::protobuf::ProtoError;

/// Wraps a typed message in `k8s\0` + `runtime.Unknown`, as client-go does.
fn body(api_version: &str, kind: &str, object: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    [MAGIC.as_slice(), &unknown.encode_to_vec()].concat()
}

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn map<V>(pairs: &[(&str, V)]) -> BTreeMap<String, V>
where
    V: Clone,
{
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// ObjectMeta as Go writes it for a new object: every non-pointer field present, mostly empty.
fn go_metadata(name: &str, namespace: &str) -> Option<meta::ObjectMeta> {
    Some(meta::ObjectMeta {
        name: s(name),
        generate_name: s(""),
        namespace: s(namespace),
        self_link: s(""),
        uid: s(""),
        resource_version: s(""),
        generation: Some(0),
        creation_timestamp: Some(meta::Time::default()),
        ..Default::default()
    })
}

fn decode(bytes: &[u8]) -> Value {
    decode_k8s_protobuf(bytes).expect("decodes")
}

#[test]
fn configmap_from_kubectl_create() {
    let cm = core::ConfigMap {
        metadata: go_metadata("settings", "default"),
        data: map(&[("mode", "fast".to_owned()), ("empty", String::new())]),
        binary_data: map(&[("blob", vec![0u8, 1, 2])]),
        ..Default::default()
    };
    let want = json!({
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "settings", "namespace": "default", "creationTimestamp": null},
        "data": {"empty": "", "mode": "fast"},
        "binaryData": {"blob": "AAEC"}
    });
    assert_eq!(decode(&body("v1", "ConfigMap", &cm)), want);
}

#[test]
fn secret_bytes_are_base64_and_pointer_false_is_kept() {
    let secret = core::Secret {
        metadata: go_metadata("creds", "prod"),
        immutable: Some(false),
        data: map(&[("password", b"hunter2".to_vec())]),
        r#type: s("Opaque"),
        ..Default::default()
    };
    let got = decode(&body("v1", "Secret", &secret));
    assert_eq!(got["data"], json!({"password": "aHVudGVyMg=="}));
    assert_eq!(got["type"], "Opaque");
    assert_eq!(
        got["immutable"], false,
        "`immutable` is a *bool: Go writes false"
    );
}

#[test]
fn deployment_keeps_pointer_zero_and_drops_omitempty_zero() {
    let labels = map(&[("app", "web".to_owned())]);
    let deployment = apps::Deployment {
        metadata: go_metadata("web", "default"),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: Some(meta::LabelSelector {
                match_labels: labels.clone(),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels,
                    creation_timestamp: Some(meta::Time::default()),
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    containers: vec![core::Container {
                        name: s("nginx"),
                        image: s("nginx:1.27"),
                        resources: Some(core::ResourceRequirements::default()),
                        stdin: Some(false),
                        tty: Some(false),
                        ..Default::default()
                    }],
                    host_network: Some(false),
                    ..Default::default()
                }),
            }),
            strategy: Some(apps::DeploymentStrategy::default()),
            min_ready_seconds: Some(0),
            paused: Some(false),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus::default()),
    };
    let want = json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "web", "namespace": "default", "creationTimestamp": null},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "resources": {}}]}
            },
            "strategy": {}
        },
        "status": {}
    });
    assert_eq!(decode(&body("apps/v1", "Deployment", &deployment)), want);
}

#[test]
fn pod_inlines_embedded_structs_and_renames_acronyms() {
    let port = |p: IntOrString| Some(p);
    let pod = core::Pod {
        metadata: go_metadata("p", "default"),
        spec: Some(core::PodSpec {
            volumes: vec![core::Volume {
                name: s("cfg"),
                volume_source: Some(core::VolumeSource {
                    config_map: Some(core::ConfigMapVolumeSource {
                        local_object_reference: Some(core::LocalObjectReference {
                            name: s("settings"),
                        }),
                        default_mode: Some(0o644),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            }],
            containers: vec![core::Container {
                name: s("app"),
                ports: vec![core::ContainerPort {
                    container_port: Some(8080),
                    protocol: s("TCP"),
                    ..Default::default()
                }],
                resources: Some(core::ResourceRequirements {
                    limits: map(&[
                        ("cpu", Quantity { string: s("500m") }),
                        ("memory", Quantity { string: s("1Gi") }),
                    ]),
                    ..Default::default()
                }),
                liveness_probe: Some(core::Probe {
                    handler: Some(core::ProbeHandler {
                        http_get: Some(core::HttpGetAction {
                            path: s("/healthz"),
                            port: port(IntOrString {
                                r#type: Some(1),
                                int_val: Some(0),
                                str_val: s("http"),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    period_seconds: Some(10),
                    ..Default::default()
                }),
                security_context: Some(core::SecurityContext {
                    run_as_non_root: Some(false),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            host_ipc: Some(true),
            ..Default::default()
        }),
        status: Some(core::PodStatus {
            pod_ip: s("10.0.0.7"),
            ..Default::default()
        }),
    };
    let got = decode(&body("v1", "Pod", &pod));
    assert_eq!(
        got["spec"]["volumes"],
        json!([{"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}}])
    );
    let container = &got["spec"]["containers"][0];
    assert_eq!(
        container["ports"],
        json!([{"containerPort": 8080, "protocol": "TCP"}])
    );
    assert_eq!(
        container["resources"],
        json!({"limits": {"cpu": "500m", "memory": "1Gi"}})
    );
    assert_eq!(
        container["livenessProbe"],
        json!({"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10})
    );
    assert_eq!(container["securityContext"], json!({"runAsNonRoot": false}));
    assert_eq!(got["spec"]["hostIPC"], true);
    assert_eq!(got["status"], json!({"podIP": "10.0.0.7"}));
}

#[test]
fn service_ports_use_int_or_string() {
    let service = core::Service {
        metadata: go_metadata("web", "default"),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                name: s("5678-8080"),
                protocol: s("TCP"),
                port: Some(5678),
                target_port: Some(IntOrString {
                    r#type: Some(0),
                    int_val: Some(8080),
                    str_val: s(""),
                }),
                node_port: Some(0),
                ..Default::default()
            }],
            r#type: s("ClusterIP"),
            cluster_ip: s("None"),
            ..Default::default()
        }),
        status: Some(core::ServiceStatus {
            load_balancer: Some(core::LoadBalancerStatus::default()),
            ..Default::default()
        }),
    };
    let got = decode(&body("v1", "Service", &service));
    let want_spec = json!({
        "ports": [{"name": "5678-8080", "protocol": "TCP", "port": 5678, "targetPort": 8080}],
        "clusterIP": "None",
        "type": "ClusterIP"
    });
    assert_eq!(got["spec"], want_spec);
    assert_eq!(got["status"], json!({"loadBalancer": {}}));
}

#[test]
fn token_request_times_and_renamed_uid() {
    let request = authn::TokenRequest {
        metadata: go_metadata("", ""),
        spec: Some(authn::TokenRequestSpec {
            audiences: vec!["https://kubernetes.default.svc".into()],
            expiration_seconds: Some(3600),
            bound_object_ref: Some(authn::BoundObjectReference {
                kind: s("Pod"),
                api_version: s("v1"),
                name: s("p"),
                u_id: s("1234"),
            }),
        }),
        status: Some(authn::TokenRequestStatus {
            token: s(""),
            expiration_timestamp: Some(meta::Time {
                seconds: Some(1_700_000_000),
                nanos: Some(0),
            }),
        }),
    };
    let got = decode(&body("authentication.k8s.io/v1", "TokenRequest", &request));
    assert_eq!(got["metadata"], json!({"creationTimestamp": null}));
    assert_eq!(
        got["spec"]["boundObjectRef"],
        json!({"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "1234"})
    );
    assert_eq!(got["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        got["status"],
        json!({"token": "", "expirationTimestamp": "2023-11-14T22:13:20Z"})
    );
}

#[test]
fn delete_options_resolve_in_any_group_and_extra_values_are_arrays() {
    let options = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: s("Foreground"),
        ..Default::default()
    };
    let got = decode(&body("apps/v1", "DeleteOptions", &options));
    assert_eq!(
        got,
        json!({"kind": "DeleteOptions", "apiVersion": "apps/v1", "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"})
    );

    let review = authz::SubjectAccessReview {
        metadata: go_metadata("", ""),
        spec: Some(authz::SubjectAccessReviewSpec {
            resource_attributes: Some(authz::ResourceAttributes {
                verb: s("get"),
                resource: s("pods"),
                ..Default::default()
            }),
            user: s("alice"),
            extra: map(&[(
                "scopes",
                authz::ExtraValue {
                    items: vec!["a".into(), "b".into()],
                },
            )]),
            ..Default::default()
        }),
        status: None,
    };
    let got = decode(&body(
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        &review,
    ));
    assert_eq!(got["spec"]["extra"], json!({"scopes": ["a", "b"]}));
    assert_eq!(
        got["spec"]["resourceAttributes"],
        json!({"verb": "get", "resource": "pods"})
    );
}

#[test]
fn catalog_names_take_precedence() {
    let cm = core::ConfigMap {
        binary_data: map(&[("k", vec![1u8])]),
        ..Default::default()
    };
    let names = |openapi: &str, rust: &str| {
        (openapi == "io.k8s.api.core.v1.ConfigMap" && rust == "binary_data")
            .then(|| "BINARY".to_owned())
    };
    let got = decode_k8s_protobuf_with(&body("v1", "ConfigMap", &cm), &names).expect("decodes");
    assert_eq!(got["BINARY"], json!({"k": "AQ=="}));
}

#[test]
fn bad_bodies_are_errors() {
    let cm = core::ConfigMap::default();
    assert!(matches!(
        decode_k8s_protobuf(b"{\"kind\":\"ConfigMap\"}"),
        Err(ProtoError::ReadEnvelope { .. })
    ));
    assert!(matches!(
        decode_k8s_protobuf(&body("example.com/v1", "Widget", &cm)),
        Err(ProtoError::ResolveKind { .. })
    ));
    let mut truncated = body(
        "v1",
        "ConfigMap",
        &core::ConfigMap {
            data: map(&[("a", "b".to_owned())]),
            ..Default::default()
        },
    );
    truncated.pop();
    assert!(decode_k8s_protobuf(&truncated).is_err());
    // A string field carrying a varint.
    let mut raw = Vec::new();
    crate::protobuf::wire::put_varint_field(&mut raw, 1, 5);
    let mismatched = body("v1", "Namespace", &core::Namespace::default());
    let mut unknown = Unknown::decode(&mismatched[4..]).expect("envelope");
    unknown.raw = Some([vec![0x0a, 2, 0x08, 5]].concat()); // metadata { name: varint 5 }
    let bad = [MAGIC.as_slice(), &unknown.encode_to_vec()].concat();
    assert!(matches!(
        decode_k8s_protobuf(&bad),
        Err(ProtoError::DecodeBody { .. })
    ));
}

#[test]
fn encode_round_trips_through_k8s_pb() {
    let objects = [
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "labels": {"a": "b"}, "creationTimestamp": "2024-01-02T03:04:05Z"}, "data": {"k": "v"}, "binaryData": {"b": "AAEC"}}),
        json!({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": "http"}, {"port": 81, "targetPort": 8081}], "clusterIP": "None"}}),
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "spec": {"volumes": [{"name": "v", "secret": {"secretName": "s", "defaultMode": 256}}], "containers": [{"name": "c", "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k", "optional": false}}}]}], "hostPID": true}}),
        json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "renewTime": "2024-01-02T03:04:05.123456Z", "leaseDurationSeconds": 15}}),
        json!({"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1", "metadata": {"name": "ws.example.com"}, "spec": {"group": "example.com", "names": {"plural": "ws", "kind": "W"}, "scope": "Namespaced", "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "additionalProperties": false, "default": {"size": 1}}, "list": {"type": "array", "items": {"type": "string"}}}}}}]}}),
    ];
    for object in objects {
        let bytes = encode_k8s_protobuf(&object).expect("encodes");
        assert_eq!(decode(&bytes), object, "round trip of {}", object["kind"]);
    }

    // The bytes are what the Go types (here their prost twins) read.
    let cm = &encode_k8s_protobuf(&json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}, "data": {"k": "v"}})).expect("encodes");
    let unknown = Unknown::decode(&cm[4..]).expect("envelope");
    assert_eq!(
        unknown.type_meta.and_then(|t| t.kind).as_deref(),
        Some("ConfigMap")
    );
    let typed = core::ConfigMap::decode(unknown.raw.unwrap_or_default().as_slice()).expect("typed");
    assert_eq!(typed.metadata.and_then(|m| m.name).as_deref(), Some("c"));
    assert_eq!(typed.data.get("k").map(String::as_str), Some("v"));
}

#[test]
fn every_message_reference_in_the_table_resolves() {
    let missing: Vec<_> = crate::protobuf::table::MESSAGES
        .iter()
        .flat_map(|m| m.fields.iter().map(move |f| (m.proto, f)))
        .filter(|(_, f)| !f.message.is_empty() && super::find_message(f.message).is_none())
        .map(|(proto, f)| format!("{proto}.{} -> {}", f.rust, f.message))
        .collect();
    assert!(missing.is_empty(), "unresolved: {missing:?}");
}

#[test]
fn messages_nested_past_the_depth_limit_are_refused() {
    use crate::limits::MAX_DEPTH;
    use crate::protobuf::wire::put_bytes_field;
    let wrap = |tag: u32, inner: &[u8]| {
        let mut out = Vec::new();
        put_bytes_field(&mut out, tag, inner);
        out
    };
    // A CRD whose schema is `nots` nested `not`s, built inside out (prost would recurse).
    let crd = |nots: usize| {
        let mut schema = wrap(5, b"object");
        for _ in 0..nots {
            schema = wrap(28, &schema);
        }
        let version = wrap(4, &wrap(1, &schema));
        let raw = wrap(2, &wrap(7, &version));
        let mut type_meta = wrap(1, b"apiextensions.k8s.io/v1");
        type_meta.extend(wrap(2, b"CustomResourceDefinition"));
        [MAGIC.as_slice(), &wrap(1, &type_meta), &wrap(2, &raw)].concat()
    };
    // The CRD, its spec, a version and its validation are four messages above the schemas.
    let deepest = decode(&crd(MAX_DEPTH - 5));
    assert!(deepest
        .pointer("/spec/versions/0/schema/openAPIV3Schema/not/not")
        .is_some());
    for nots in [MAX_DEPTH - 4, 5_000] {
        let err = decode_k8s_protobuf(&crd(nots)).unwrap_err();
        assert!(
            matches!(&err, ProtoError::DecodeBody { reason, .. } if reason.contains("nested more than")),
            "{nots}: {err}"
        );
    }
}
