//! Turns gnostic's `OpenAPIv2.proto` into the `prost` structs of
//! `crates/api/src/protobuf/openapi_v2/model.rs`.
//!
//! Plain text in, plain text out, no dependencies: `crates/api` compiles this file into its tests
//! (by `#[path]`) to check that the committed model is what this generator makes.
//!
//! The proto file is a flat list of proto3 messages whose fields are scalars, messages of the
//! same file, or one `oneof`; anything else is refused rather than guessed at. Fields whose type
//! comes from another file (`Any.value`, a `google.protobuf.Any`) are left out: gnostic only fills
//! them for registered extension handlers, and every consumer reads `Any.yaml`.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// One proto message: its plain fields and at most one `oneof`.
#[derive(Debug)]
pub struct Message {
    pub name: String,
    pub fields: Vec<Field>,
    /// The oneof's name and its arms (each arm a field that cannot repeat).
    pub oneof: Option<(String, Vec<Field>)>,
}

/// One field: `[repeated] type name = tag;`.
#[derive(Debug)]
pub struct Field {
    pub repeated: bool,
    pub ty: String,
    pub name: String,
    pub tag: u32,
}

/// The Rust type and `prost` kind of a proto scalar.
fn scalar(ty: &str) -> Option<(&'static str, &'static str)> {
    Some(match ty {
        "string" => ("String", "string"),
        "bool" => ("bool", "bool"),
        "double" => ("f64", "double"),
        "int64" => ("i64", "int64"),
        _ => return None,
    })
}

/// Splits the proto text into tokens: words, quoted strings and the punctuation `{ } ; =`;
/// `//` comments are dropped.
fn tokens(proto: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in proto.lines() {
        let mut word = String::new();
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if quoted {
                word.push(c);
                quoted = c != '"';
                continue;
            }
            if c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c.is_whitespace() || "{};=".contains(c) {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                if !c.is_whitespace() {
                    out.push(c.to_string());
                }
            } else {
                quoted = c == '"';
                word.push(c);
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// Reads the messages of a proto3 file, in file order.
pub fn parse(proto: &str) -> Result<Vec<Message>, String> {
    let toks = tokens(proto);
    let mut it = toks.iter().map(String::as_str).peekable();
    let mut messages = Vec::new();
    while let Some(tok) = it.next() {
        match tok {
            // `syntax = "proto3";`, `package ...;`, `import "...";`, `option ... = ...;`
            "syntax" | "package" | "import" | "option" => {
                for t in it.by_ref() {
                    if t == ";" {
                        break;
                    }
                }
            }
            "message" => {
                let name = it.next().ok_or("message without a name")?.to_owned();
                expect(&mut it, "{")?;
                let mut message = Message {
                    name,
                    fields: Vec::new(),
                    oneof: None,
                };
                loop {
                    match it.peek().copied() {
                        Some("}") => {
                            it.next();
                            break;
                        }
                        Some("oneof") => {
                            it.next();
                            let oneof = it.next().ok_or("oneof without a name")?.to_owned();
                            expect(&mut it, "{")?;
                            let mut arms = Vec::new();
                            while it.peek().copied() != Some("}") {
                                arms.push(field(&mut it)?);
                            }
                            it.next();
                            if message.oneof.replace((oneof, arms)).is_some() {
                                return Err(format!("{} has two oneofs", message.name));
                            }
                        }
                        Some(_) => message.fields.push(field(&mut it)?),
                        None => return Err(format!("{} is not closed", message.name)),
                    }
                }
                messages.push(message);
            }
            other => return Err(format!("unexpected {other:?} at the top level")),
        }
    }
    Ok(messages)
}

fn expect<'a>(it: &mut impl Iterator<Item = &'a str>, want: &str) -> Result<(), String> {
    match it.next() {
        Some(t) if t == want => Ok(()),
        got => Err(format!("expected {want:?}, got {got:?}")),
    }
}

fn field<'a>(it: &mut impl Iterator<Item = &'a str>) -> Result<Field, String> {
    let mut ty = it.next().ok_or("field without a type")?;
    let repeated = ty == "repeated";
    if repeated {
        ty = it.next().ok_or("repeated field without a type")?;
    }
    let name = it.next().ok_or("field without a name")?.to_owned();
    expect(it, "=")?;
    let tag = it
        .next()
        .and_then(|t| t.parse().ok())
        .ok_or(format!("field {name} has no numeric tag"))?;
    expect(it, ";")?;
    Ok(Field {
        repeated,
        ty: ty.to_owned(),
        name,
        tag,
    })
}

/// `oauth2_implicit_security` → `Oauth2ImplicitSecurity`.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A proto field name as a Rust identifier (`type` → `r#type`).
fn ident(name: &str) -> String {
    match name {
        "type" | "in" | "enum" | "ref" | "mod" | "fn" | "struct" | "impl" | "use" => {
            format!("r#{name}")
        }
        _ => name.to_owned(),
    }
}

/// Which messages each message holds directly (not through a repeated field), oneof arms included.
fn direct_children(messages: &[Message]) -> HashMap<&str, Vec<&str>> {
    messages
        .iter()
        .map(|m| {
            let arms = m.oneof.iter().flat_map(|(_, arms)| arms);
            let children = m
                .fields
                .iter()
                .chain(arms)
                .filter(|f| !f.repeated && scalar(&f.ty).is_none())
                .map(|f| f.ty.as_str())
                .collect();
            (m.name.as_str(), children)
        })
        .collect()
}

/// Whether `from` holds `to` directly or through a chain of direct children: such a field must be
/// boxed or the struct would contain itself (`prost-build` decides the same way).
fn holds(children: &HashMap<&str, Vec<&str>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from];
    while let Some(m) = todo.pop() {
        if m == to {
            return true;
        }
        if seen.insert(m) {
            todo.extend(children.get(m).into_iter().flatten());
        }
    }
    false
}

/// The `#[prost(...)]` kind and the Rust type of a field of `owner`; `None` for a field whose
/// message comes from another proto file.
fn rust_field(
    f: &Field,
    owner: &str,
    known: &BTreeSet<&str>,
    children: &HashMap<&str, Vec<&str>>,
) -> Option<(String, String, bool)> {
    if let Some((rust, kind)) = scalar(&f.ty) {
        return Some((kind.to_owned(), rust.to_owned(), false));
    }
    if !known.contains(f.ty.as_str()) {
        return None;
    }
    let boxed = !f.repeated && holds(children, &f.ty, owner);
    Some(("message".to_owned(), f.ty.clone(), boxed))
}

/// The Rust source of `model.rs` for the proto file `proto`; `source` names where it came from.
pub fn generate(proto: &str) -> Result<String, String> {
    let source = proto
        .lines()
        .find_map(|l| l.strip_prefix("// Copied from "))
        .and_then(|l| l.split(" by ").next())
        .ok_or(
            "the proto copy lacks its `// Copied from ... by ...` line; re-run with --refresh",
        )?;
    let messages = parse(proto)?;
    let known: BTreeSet<&str> = messages.iter().map(|m| m.name.as_str()).collect();
    let children = direct_children(&messages);
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "// @generated by tools/openapi-v2-codegen from {source}."
    );
    let _ = writeln!(
        w,
        "// Do not edit by hand: run `cargo run --manifest-path tools/openapi-v2-codegen/Cargo.toml` instead."
    );
    w.push_str(HEADER);
    for m in &messages {
        w.push('\n');
        message(w, m, &known, &children)?;
    }
    Ok(out)
}

const HEADER: &str =
    "//! gnostic's `openapi.v2` messages, one `prost` struct per message of `OpenAPIv2.proto`.
//!
//! Field names and tags are the `.proto`'s, so the bytes are what gnostic's Go types (and
//! therefore kubectl) expect. Each `oneof` is an enum named after its message (`ParameterOneof`);
//! a field whose message would contain itself is boxed. `Any.value` (a `google.protobuf.Any`) is
//! left out: gnostic only fills it for registered extension handlers, and every consumer reads
//! `Any.yaml`.
// One struct per proto message; the proto file is the documentation.
#![allow(missing_docs)]
// The oneofs mirror the proto; the document is built once per schema change, so size is moot.
#![allow(clippy::large_enum_variant)]
";

fn message(
    w: &mut String,
    m: &Message,
    known: &BTreeSet<&str>,
    children: &HashMap<&str, Vec<&str>>,
) -> Result<(), String> {
    let _ = writeln!(w, "#[derive(Clone, PartialEq, prost::Message)]");
    let _ = writeln!(w, "pub struct {} {{", m.name);
    for f in &m.fields {
        let Some((kind, ty, boxed)) = rust_field(f, &m.name, known, children) else {
            continue;
        };
        let (label, ty) = match (f.repeated, kind.as_str(), boxed) {
            (true, _, _) => (" repeated,", format!("Vec<{ty}>")),
            (false, "message", true) => (" optional, boxed,", format!("Option<Box<{ty}>>")),
            (false, "message", false) => (" optional,", format!("Option<{ty}>")),
            (false, _, _) => ("", ty),
        };
        let _ = writeln!(w, "    #[prost({kind},{label} tag = \"{}\")]", f.tag);
        let _ = writeln!(w, "    pub {}: {ty},", ident(&f.name));
    }
    let Some((oneof, arms)) = &m.oneof else {
        w.push_str("}\n");
        return Ok(());
    };
    let enum_name = format!("{}Oneof", m.name);
    let tags: Vec<String> = arms.iter().map(|a| a.tag.to_string()).collect();
    let _ = writeln!(
        w,
        "    #[prost(oneof = \"{enum_name}\", tags = \"{}\")]",
        tags.join(", ")
    );
    let _ = writeln!(w, "    pub {}: Option<{enum_name}>,", ident(oneof));
    w.push_str("}\n\n");
    let _ = writeln!(w, "/// `{}.{oneof}`.", m.name);
    let _ = writeln!(w, "#[derive(Clone, PartialEq, prost::Oneof)]");
    let _ = writeln!(w, "pub enum {enum_name} {{");
    for a in arms {
        let (kind, ty, boxed) = rust_field(a, &m.name, known, children).ok_or(format!(
            "{}.{}: an arm of another file's type",
            m.name, a.name
        ))?;
        if a.repeated {
            return Err(format!("{}.{}: a repeated oneof arm", m.name, a.name));
        }
        let ty = if boxed { format!("Box<{ty}>") } else { ty };
        let _ = writeln!(w, "    #[prost({kind}, tag = \"{}\")]", a.tag);
        let _ = writeln!(w, "    {}({ty}),", camel(&a.name));
    }
    w.push_str("}\n");
    Ok(())
}
