//! Generates `crates/api/src/schema/k8s_generated.rs`: a static table of every protobuf message
//! in k8s-pb (fields, tags, kinds) with the Kubernetes patch/list/map markers read from the
//! doc comments prost keeps.
//!
//! ```text
//! cargo run --manifest-path tools/k8s-codegen/Cargo.toml [-- --check] [--out FILE]
//!     [--k8s-pb SRC_DIR] [--k8s-openapi SRC_DIR]
//! ```
//!
//! Re-run it after bumping k8s-pb or k8s-openapi; `--check` fails when the committed file is stale.

mod emit;
mod locate;
mod names;
mod parse;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

struct Args {
    out: PathBuf,
    check: bool,
    k8s_pb: Option<PathBuf>,
    k8s_openapi: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("k8s-codegen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        out: workspace_root().join("crates/api/src/schema/k8s_generated.rs"),
        check: false,
        k8s_pb: None,
        k8s_openapi: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .map(PathBuf::from)
                .ok_or(format!("{a} needs a value"))
        };
        match a.as_str() {
            "--out" => args.out = value()?,
            "--k8s-pb" => args.k8s_pb = Some(value()?),
            "--k8s-openapi" => args.k8s_openapi = Some(value()?),
            "--check" => args.check = true,
            other => {
                return Err(format!(
                    "unknown argument {other}; see the header of tools/k8s-codegen/src/main.rs"
                ))
            }
        }
    }
    Ok(args)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let manifest = workspace_root().join("Cargo.toml");
    let pb_src = match args.k8s_pb {
        Some(dir) => dir,
        None => locate::crate_src(&manifest, locate::K8S_PB)?,
    };
    let openapi_src = match args.k8s_openapi {
        Some(dir) => dir,
        None => locate::crate_src(&manifest, locate::K8S_OPENAPI)?,
    };
    let exact = names::ExactNames::scan(&openapi_src)?;
    let messages = parse::parse_tree(&pb_src)?;

    let mut by_path: HashMap<Vec<String>, String> = HashMap::new();
    let mut named = Vec::with_capacity(messages.len());
    let mut guessed = Vec::new();
    for m in &messages {
        let (ty, exact_hit) = emit::type_name(m, &exact);
        if !exact_hit {
            guessed.push(format!("{}.{ty}", emit::proto_package(&m.module)));
        }
        let proto = format!("{}.{ty}", emit::proto_package(&m.module));
        let openapi = format!("{}.{ty}", emit::openapi_package(&m.module));
        let mut path = m.module.clone();
        path.push(m.rust_name.clone());
        by_path.insert(path, proto.clone());
        named.push(emit::Named {
            proto,
            openapi,
            message: m,
        });
    }
    named.sort_by(|a, b| a.proto.cmp(&b.proto));
    if let Some(w) = named.windows(2).find(|w| w[0].proto == w[1].proto) {
        return Err(format!("two messages are both named {}", w[0].proto));
    }

    let source = format!("{} and {}", crate_label(&pb_src), crate_label(&openapi_src));
    let lookup = |path: &[String]| by_path.get(path).cloned();
    let text = emit::render(&named, &lookup, &source)?;

    let fields: usize = messages.iter().map(|m| m.fields.len()).sum();
    eprintln!(
        "k8s-codegen: {} messages, {fields} fields from {}; {} names spelled without k8s-openapi's help (other package, doc comment or prost name)",
        named.len(),
        pb_src.display(),
        guessed.len()
    );
    if args.check {
        let current = std::fs::read_to_string(&args.out).unwrap_or_default();
        if current != text {
            return Err(format!(
                "{} is stale; re-run without --check",
                args.out.display()
            ));
        }
        return Ok(());
    }
    std::fs::write(&args.out, text).map_err(|e| format!("writing {}: {e}", args.out.display()))?;
    eprintln!("k8s-codegen: wrote {}", args.out.display());
    Ok(())
}

/// `.../k8s-pb-0.9.0/src` → `k8s-pb-0.9.0`.
fn crate_label(src: &Path) -> String {
    src.parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| src.display().to_string())
}
