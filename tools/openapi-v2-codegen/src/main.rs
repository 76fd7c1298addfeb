//! Generates `crates/api/src/protobuf/openapi_v2/model.rs`, the `prost` structs of gnostic's
//! `openapi.v2` messages, from the copy of `OpenAPIv2.proto` kept next to this tool.
//!
//! ```text
//! cargo run --manifest-path tools/openapi-v2-codegen/Cargo.toml [-- --check] [--refresh] [--out FILE]
//! ```
//!
//! `--refresh` first replaces the copy with the `OpenAPIv2.proto` of the gnostic-models version
//! that `tools/k8s/go.mod` pins (kube-openapi's, so kubectl's), fetched with `go mod download`.
//! `--check` fails when the committed model is stale; `crates/api`'s tests check the same
//! (`openapi_v2::tests::model_is_generated`).

mod generate;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const MODULE: &str = "github.com/google/gnostic-models";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("openapi-v2-codegen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn tool_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run() -> Result<(), String> {
    let mut out = tool_dir().join("../../crates/api/src/protobuf/openapi_v2/model.rs");
    let (mut check, mut refresh) = (false, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--check" => check = true,
            "--refresh" => refresh = true,
            "--out" => out = PathBuf::from(args.next().ok_or("--out needs a value")?),
            other => return Err(format!(
                "unknown argument {other}; see the header of tools/openapi-v2-codegen/src/main.rs"
            )),
        }
    }
    let copy = tool_dir().join("OpenAPIv2.proto");
    if refresh {
        refresh_copy(&copy)?;
    }
    let proto = read(&copy)?;
    let text = generate::generate(&proto)?;
    if check {
        if read(&out).unwrap_or_default() != text {
            return Err(format!(
                "{} is stale; re-run without --check",
                out.display()
            ));
        }
        return Ok(());
    }
    std::fs::write(&out, text).map_err(|e| format!("writing {}: {e}", out.display()))?;
    eprintln!("openapi-v2-codegen: wrote {}", out.display());
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// Copies `openapiv2/OpenAPIv2.proto` of the pinned gnostic-models into `copy`, under a line
/// naming its origin (the generated header repeats it).
fn refresh_copy(copy: &Path) -> Result<(), String> {
    let go_mod = read(&tool_dir().join("../k8s/go.mod"))?;
    let version = go_mod
        .lines()
        .find_map(|l| l.trim().strip_prefix(MODULE)?.split_whitespace().next())
        .ok_or(format!("tools/k8s/go.mod does not require {MODULE}"))?;
    let module = format!("{MODULE}@{version}");
    let output = Command::new("go")
        .args(["mod", "download", "-json", &module])
        .output()
        .map_err(|e| format!("running go mod download: {e}"))?;
    let json = String::from_utf8_lossy(&output.stdout);
    let dir = json
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"Dir\": \""))
        .and_then(|l| l.strip_suffix("\","))
        .ok_or(format!("go mod download {module} gave no Dir: {json}"))?;
    let proto = read(&Path::new(dir).join("openapiv2/OpenAPIv2.proto"))?;
    let text = format!(
        "// Copied from {module} openapiv2/OpenAPIv2.proto by tools/openapi-v2-codegen --refresh.\n{proto}"
    );
    std::fs::write(copy, text).map_err(|e| format!("writing {}: {e}", copy.display()))
}
