//! Kubernetes protobuf bodies built by hand (`k8s\0` + `runtime.Unknown`), so a test can send
//! what no client library would: a CustomResourceDefinition thousands of schemas deep, or an
//! envelope naming one kind to a URL of another. Field numbers are those of the Kubernetes
//! `generated.proto` files.

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes_field(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    varint(out, (u64::from(tag) << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn bool_field(out: &mut Vec<u8>, tag: u32, value: bool) {
    varint(out, u64::from(tag) << 3);
    varint(out, u64::from(value));
}

/// A message from `(tag, bytes)` fields.
fn message(fields: &[(u32, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (tag, bytes) in fields {
        bytes_field(&mut out, *tag, bytes);
    }
    out
}

/// `k8s\0` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw}`.
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = message(&[(1, api_version.as_bytes()), (2, kind.as_bytes())]);
    let mut out = b"k8s\0".to_vec();
    out.extend(message(&[(1, &type_meta), (2, raw), (3, b""), (4, b"")]));
    out
}

/// `ObjectMeta{name}`.
fn object_meta(name: &str) -> Vec<u8> {
    message(&[(1, name.as_bytes())])
}

/// A `v1` ConfigMap `name` with `data: {k: v}`.
pub fn config_map(name: &str) -> Vec<u8> {
    let entry = message(&[(1, b"k"), (2, b"v")]);
    let raw = message(&[(1, &object_meta(name)), (2, &entry)]);
    envelope("v1", "ConfigMap", &raw)
}

/// An `apiextensions.k8s.io/v1` CustomResourceDefinition `<plural>.<group>` (kind `kind`,
/// namespaced, version v1) whose schema is `{type: object}` wrapped in `nots` `not` schemas.
pub fn crd(group: &str, plural: &str, kind: &str, nots: usize) -> Vec<u8> {
    // JSONSchemaProps: type = 5, not = 28. Built inside out, without recursion.
    let mut schema = message(&[(5, b"object")]);
    for _ in 0..nots {
        schema = message(&[(28, &schema)]);
    }
    let validation = message(&[(1, &schema)]); // openAPIV3Schema
    let mut version = message(&[(1, b"v1"), (4, &validation)]); // name, schema
    bool_field(&mut version, 2, true); // served
    bool_field(&mut version, 3, true); // storage
    let list_kind = format!("{kind}List");
    let singular = kind.to_ascii_lowercase();
    let names = message(&[
        (1, plural.as_bytes()),
        (2, singular.as_bytes()),
        (4, kind.as_bytes()),
        (5, list_kind.as_bytes()),
    ]);
    let spec = message(&[
        (1, group.as_bytes()),
        (3, &names),
        (4, b"Namespaced"),
        (7, &version),
    ]);
    let raw = message(&[(1, &object_meta(&format!("{plural}.{group}"))), (2, &spec)]);
    envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", &raw)
}
