//! Reading prost messages, their field attributes and Kubernetes doc-comment markers out of the
//! k8s-pb sources.

use std::path::Path;

use syn::{Attribute, Expr, Fields, GenericArgument, Item, Lit, LitStr, PathArguments, Type};

/// A protobuf scalar or message kind, as prost spells it in `#[prost(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Double,
    Float,
    Enum,
    Message,
}

impl Kind {
    fn from_prost(word: &str) -> Option<Kind> {
        Some(match word {
            "string" => Kind::String,
            "bytes" => Kind::Bytes,
            "bool" => Kind::Bool,
            "int32" => Kind::Int32,
            "int64" => Kind::Int64,
            "uint32" => Kind::Uint32,
            "uint64" => Kind::Uint64,
            "double" => Kind::Double,
            "float" => Kind::Float,
            "enumeration" => Kind::Enum,
            "message" => Kind::Message,
            _ => return None,
        })
    }
}

/// Kubernetes markers (`+patchStrategy=merge`, ...) from a doc comment.
#[derive(Default, Debug)]
pub struct Markers {
    pub patch_strategy: String,
    pub patch_merge_key: String,
    pub list_type: String,
    pub list_map_keys: Vec<String>,
    pub map_type: String,
    pub struct_type: String,
}

impl Markers {
    fn from_docs(docs: &[String]) -> Markers {
        let mut m = Markers::default();
        for line in docs {
            let Some((key, value)) = line
                .trim()
                .strip_prefix('+')
                .and_then(|l| l.split_once('='))
            else {
                continue;
            };
            let value = value.trim().to_owned();
            let slot = match key.trim() {
                "patchStrategy" => &mut m.patch_strategy,
                "patchMergeKey" => &mut m.patch_merge_key,
                "listType" => &mut m.list_type,
                "mapType" => &mut m.map_type,
                "structType" => &mut m.struct_type,
                "listMapKey" => {
                    if !m.list_map_keys.contains(&value) {
                        m.list_map_keys.push(value);
                    }
                    continue;
                }
                _ => continue,
            };
            // The first occurrence wins; later ones are repeats in longer comments.
            if slot.is_empty() {
                *slot = value;
            }
        }
        m
    }
}

/// One field of a prost message.
#[derive(Debug)]
pub struct Field {
    /// The Rust field name without a raw-identifier prefix (`type`, not `r#type`).
    pub rust: String,
    pub tag: u32,
    pub kind: Kind,
    /// Module path plus Rust name of the message type (of the value, for maps).
    pub message: Option<Vec<String>>,
    pub repeated: bool,
    pub optional: bool,
    pub map: Option<(Kind, Kind)>,
    pub markers: Markers,
}

/// One prost message.
#[derive(Debug)]
pub struct Message {
    /// Module path below the crate root, e.g. `["api", "core", "v1"]`.
    pub module: Vec<String>,
    pub rust_name: String,
    pub docs: Vec<String>,
    pub markers: Markers,
    pub fields: Vec<Field>,
}

/// Parse every `mod.rs` below `src`, returning messages in a stable (path) order.
pub fn parse_tree(src: &Path) -> Result<Vec<Message>, String> {
    let mut files = Vec::new();
    collect_files(src, &mut files)?;
    files.sort();
    let mut messages = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).map_err(|e| e.to_string())?;
        let module: Vec<String> = rel
            .parent()
            .map(|p| p.iter().map(|c| c.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("reading {}: {e}", file.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| format!("parsing {}: {e}", file.display()))?;
        for item in ast.items {
            parse_item(item, &module, &mut messages)
                .map_err(|e| format!("{}: {e}", file.display()))?;
        }
    }
    Ok(messages)
}

fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else if path.file_name().is_some_and(|n| n == "mod.rs") {
            out.push(path);
        }
    }
    Ok(())
}

fn parse_item(item: Item, module: &[String], out: &mut Vec<Message>) -> Result<(), String> {
    match item {
        Item::Struct(s) if derives_prost(&s.attrs, "Message") => {
            let docs = docs(&s.attrs);
            let Fields::Named(named) = s.fields else {
                return Err(format!("message {} has unnamed fields", s.ident));
            };
            let mut fields = Vec::new();
            for f in named.named {
                let name = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                let rust = name.trim_start_matches("r#").to_owned();
                let field = parse_field(rust, &f.attrs, &f.ty, module)
                    .map_err(|e| format!("{}.{name}: {e}", s.ident))?;
                fields.push(field);
            }
            out.push(Message {
                module: module.to_vec(),
                rust_name: s.ident.to_string(),
                markers: Markers::from_docs(&docs),
                docs,
                fields,
            });
            Ok(())
        }
        // Neither nested messages, enums nor oneofs occur in k8s-pb; fail loudly if that changes
        // rather than silently producing an incomplete table.
        Item::Enum(e)
            if derives_prost(&e.attrs, "Enumeration") || derives_prost(&e.attrs, "Oneof") =>
        {
            Err(format!(
                "prost enum {} is not supported by this generator",
                e.ident
            ))
        }
        Item::Mod(m) if m.content.is_some() => Err(format!(
            "inline module {} (nested messages) is not supported",
            m.ident
        )),
        _ => Ok(()),
    }
}

fn derives_prost(attrs: &[Attribute], what: &str) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("derive") && {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                let segs: Vec<String> = meta
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                found |= segs.first().is_some_and(|s| s == "prost")
                    && segs.last().is_some_and(|s| s == what);
                Ok(())
            });
            found
        }
    })
}

fn docs(attrs: &[Attribute]) -> Vec<String> {
    let mut lines = Vec::new();
    for a in attrs {
        if let syn::Meta::NameValue(nv) = &a.meta {
            if nv.path.is_ident("doc") {
                if let Expr::Lit(lit) = &nv.value {
                    if let Lit::Str(s) = &lit.lit {
                        lines.push(s.value());
                    }
                }
            }
        }
    }
    lines
}

fn parse_field(
    rust: String,
    attrs: &[Attribute],
    ty: &Type,
    module: &[String],
) -> Result<Field, String> {
    let prost = attrs
        .iter()
        .find(|a| a.path().is_ident("prost"))
        .ok_or("no #[prost] attribute")?;
    let (mut kind, mut tag, mut repeated, mut optional, mut map) = (None, None, false, false, None);
    prost
        .parse_nested_meta(|meta| {
            let word = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            match word.as_str() {
                "optional" => optional = true,
                "repeated" => repeated = true,
                "required" | "boxed" => {}
                "tag" => {
                    tag = Some(
                        meta.value()?
                            .parse::<LitStr>()?
                            .value()
                            .parse::<u32>()
                            .map_err(|e| meta.error(e))?,
                    )
                }
                "packed" => {
                    meta.value()?.parse::<LitStr>()?;
                }
                "btree_map" | "map" => {
                    let spec = meta.value()?.parse::<LitStr>()?.value();
                    let (k, v) = spec
                        .split_once(',')
                        .ok_or_else(|| meta.error("map without value type"))?;
                    let k = Kind::from_prost(k.trim())
                        .ok_or_else(|| meta.error("unknown map key kind"))?;
                    let v = Kind::from_prost(v.trim())
                        .ok_or_else(|| meta.error("unknown map value kind"))?;
                    map = Some((k, v));
                    kind = Some(Kind::Message);
                }
                other => {
                    if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<LitStr>()?;
                    }
                    kind = Some(
                        Kind::from_prost(other)
                            .ok_or_else(|| meta.error(format!("unknown prost kind {other}")))?,
                    );
                }
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    let kind = kind.ok_or("no kind in #[prost]")?;
    let tag = tag.ok_or("no tag in #[prost]")?;
    let wants_message =
        kind == Kind::Message && map.is_none() || map.is_some_and(|(_, v)| v == Kind::Message);
    let message = if wants_message {
        Some(resolve(
            innermost(ty).ok_or("cannot find message type")?,
            module,
        )?)
    } else {
        None
    };
    // A map is its own thing on the wire; report its value kind through `map`, not `kind`.
    let kind = match map {
        Some((_, v)) => v,
        None => kind,
    };
    Ok(Field {
        rust,
        tag,
        kind,
        message,
        repeated,
        optional,
        map,
        markers: Markers::from_docs(&docs(attrs)),
    })
}

/// The element type inside `Option<..>`, `Vec<..>`, `Box<..>` or the value of `BTreeMap<K, V>`.
fn innermost(ty: &Type) -> Option<&syn::Path> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    let wrapper = matches!(
        last.ident.to_string().as_str(),
        "Option" | "Vec" | "Box" | "BTreeMap" | "HashMap"
    );
    if !wrapper {
        return Some(&tp.path);
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let inner = args
        .args
        .iter()
        .filter_map(|a| {
            if let GenericArgument::Type(t) = a {
                Some(t)
            } else {
                None
            }
        })
        .last()?;
    innermost(inner)
}

/// Resolve a (possibly `super::`- or `crate::`-relative) type path to a module path + name.
fn resolve(path: &syn::Path, module: &[String]) -> Result<Vec<String>, String> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let mut out: Vec<String> = module.to_vec();
    let mut rest = segs.as_slice();
    if rest.first().is_some_and(|s| s == "crate") {
        out.clear();
        rest = &rest[1..];
    }
    while rest.first().is_some_and(|s| s == "super") {
        out.pop().ok_or("`super` above the crate root")?;
        rest = &rest[1..];
    }
    out.extend(rest.iter().cloned());
    Ok(out)
}
