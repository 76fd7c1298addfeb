//! Writing the generated Rust table.

use std::fmt::Write as _;

use crate::names::ExactNames;
use crate::parse::{Field, Kind, Message};

/// A message with its resolved names, ready to print.
pub struct Named<'a> {
    pub proto: String,
    pub openapi: String,
    pub message: &'a Message,
}

/// `["api", "core", "v1"]` → `k8s.io.api.core.v1`.
pub fn proto_package(module: &[String]) -> String {
    format!("k8s.io.{}", module.join("."))
}

/// `["apiextensions_apiserver", "pkg", ...]` → `io.k8s.apiextensions-apiserver.pkg...`: Go module
/// names use dashes where proto packages (and Rust modules) need underscores; deeper path
/// components (e.g. `custom_metrics`) keep theirs.
pub fn openapi_package(module: &[String]) -> String {
    let mut parts = module.to_vec();
    if let Some(first) = parts.first_mut() {
        *first = first.replace('_', "-");
    }
    format!("io.k8s.{}", parts.join("."))
}

/// The message's proto/OpenAPI type name: k8s-openapi's spelling if it has the type, else its
/// spelling of a same-named type in another package, else the first word of the doc comment
/// when it spells the same name, else the Rust name.
pub fn type_name(m: &Message, names: &ExactNames) -> (String, bool) {
    if let Some(exact) = names.get(&openapi_package(&m.module), &m.rust_name) {
        return (exact.to_owned(), true);
    }
    if let Some(other) = names.get_any(&m.rust_name) {
        return (other.to_owned(), false);
    }
    let first_word = m
        .docs
        .first()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default();
    let first_word = first_word.trim_end_matches(|c: char| !c.is_alphanumeric());
    if first_word.eq_ignore_ascii_case(&m.rust_name) {
        return (first_word.to_owned(), false);
    }
    (m.rust_name.clone(), false)
}

fn kind(k: Kind) -> &'static str {
    match k {
        Kind::String => "ProtoKind::String",
        Kind::Bytes => "ProtoKind::Bytes",
        Kind::Bool => "ProtoKind::Bool",
        Kind::Int32 => "ProtoKind::Int32",
        Kind::Int64 => "ProtoKind::Int64",
        Kind::Uint32 => "ProtoKind::Uint32",
        Kind::Uint64 => "ProtoKind::Uint64",
        Kind::Double => "ProtoKind::Double",
        Kind::Float => "ProtoKind::Float",
        Kind::Enum => "ProtoKind::Enum",
        Kind::Message => "ProtoKind::Message",
    }
}

const PRELUDE: &str = include_str!("prelude.rs.txt");

/// Render the whole file. `lookup` maps a message's module path + Rust name to its proto name.
pub fn render(
    messages: &[Named],
    lookup: &dyn Fn(&[String]) -> Option<String>,
    source: &str,
) -> Result<String, String> {
    let mut out = String::new();
    out.push_str(&PRELUDE.replace("{SOURCE}", source));
    out.push_str("pub static MESSAGES: &[MessageMeta] = &[\n");
    for n in messages {
        let m = n.message;
        let _ = writeln!(out, "    MessageMeta {{");
        let _ = writeln!(out, "        proto: {:?},", n.proto);
        let _ = writeln!(out, "        openapi: {:?},", n.openapi);
        let _ = writeln!(out, "        struct_type: {:?},", m.markers.struct_type);
        if m.fields.is_empty() {
            let _ = writeln!(out, "        fields: &[],");
        } else {
            let _ = writeln!(out, "        fields: &[");
            for f in &m.fields {
                let line = field(f, lookup).map_err(|e| format!("{}.{}: {e}", n.proto, f.rust))?;
                let _ = writeln!(out, "            {line},");
            }
            let _ = writeln!(out, "        ],");
        }
        let _ = writeln!(out, "    }},");
    }
    out.push_str("];\n");
    Ok(out)
}

fn field(f: &Field, lookup: &dyn Fn(&[String]) -> Option<String>) -> Result<String, String> {
    let message = match &f.message {
        Some(path) => {
            lookup(path).ok_or_else(|| format!("unknown message type {}", path.join("::")))?
        }
        None => String::new(),
    };
    let mut s = match (f.map, f.kind) {
        (Some((k, v)), _) => format!(
            "FieldMeta::map({:?}, {}, {}, {}, {:?})",
            f.rust,
            f.tag,
            kind(k),
            kind(v),
            message
        ),
        (None, Kind::Message) => {
            format!("FieldMeta::message({:?}, {}, {:?})", f.rust, f.tag, message)
        }
        (None, k) => format!("FieldMeta::scalar({:?}, {}, {})", f.rust, f.tag, kind(k)),
    };
    if f.optional {
        s.push_str(".optional()");
    }
    if f.repeated {
        s.push_str(".repeated()");
    }
    let m = &f.markers;
    if !m.patch_strategy.is_empty() || !m.patch_merge_key.is_empty() {
        let _ = write!(s, ".patch({:?}, {:?})", m.patch_strategy, m.patch_merge_key);
    }
    if !m.list_type.is_empty() || !m.list_map_keys.is_empty() {
        let _ = write!(s, ".list({:?}, &{:?})", m.list_type, m.list_map_keys);
    }
    if !m.map_type.is_empty() {
        let _ = write!(s, ".map_type({:?})", m.map_type);
    }
    Ok(s)
}
