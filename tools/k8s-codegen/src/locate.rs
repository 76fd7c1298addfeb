//! Finding the `k8s-pb` and `k8s-openapi` sources on disk.
//!
//! First choice is `cargo metadata` of the main workspace (so the generated table matches the
//! versions the hub is built with); a crate the workspace does not (yet) depend on is looked up
//! in the cargo registry's source cache instead.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate versions the generated table is made from.
pub const K8S_PB: (&str, &str) = ("k8s-pb", "0.9.");
/// k8s-openapi supplies the exact (acronym-preserving) type names prost loses.
pub const K8S_OPENAPI: (&str, &str) = ("k8s-openapi", "0.29.");

/// Source directory (`.../src`) of `name`, preferring the version the workspace resolves.
pub fn crate_src(
    workspace_manifest: &Path,
    (name, version_prefix): (&str, &str),
) -> Result<PathBuf, String> {
    if let Some(dir) = from_metadata(workspace_manifest, name, version_prefix)? {
        return Ok(dir);
    }
    from_registry(name, version_prefix)
}

fn from_metadata(
    manifest: &Path,
    name: &str,
    version_prefix: &str,
) -> Result<Option<PathBuf>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("parsing cargo metadata: {e}"))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    for p in packages {
        let version = p["version"].as_str().unwrap_or_default();
        if p["name"] == name && version.starts_with(version_prefix) {
            if let Some(manifest) = p["manifest_path"].as_str() {
                let dir = Path::new(manifest).with_file_name("src");
                return Ok(Some(dir));
            }
        }
    }
    Ok(None)
}

fn from_registry(name: &str, version_prefix: &str) -> Result<PathBuf, String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let registry = home.join("registry").join("src");
    let prefix = format!("{name}-{version_prefix}");
    let mut found = Vec::new();
    for index in
        std::fs::read_dir(&registry).map_err(|e| format!("reading {}: {e}", registry.display()))?
    {
        let index = index.map_err(|e| e.to_string())?.path();
        for krate in std::fs::read_dir(&index).map_err(|e| e.to_string())? {
            let krate = krate.map_err(|e| e.to_string())?.path();
            let file_name = krate
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if file_name.starts_with(&prefix) {
                found.push(krate.join("src"));
            }
        }
    }
    // The highest patch release wins; names sort well enough within one minor version.
    found.sort();
    found.pop().ok_or_else(|| {
        format!(
            "{name} {version_prefix}x is neither a dependency of the workspace nor in {}; run `cargo fetch` \
             in a crate that depends on it, or pass --{name} DIR",
            registry.display()
        )
    })
}
