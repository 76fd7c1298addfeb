//! Exact OpenAPI type names, harvested from k8s-openapi's `JsonSchema::schema_name` bodies.
//!
//! prost upper-camel-cases message names (`HTTPGetAction` becomes `HttpGetAction`), so the Rust
//! name alone cannot give back the proto/OpenAPI name. k8s-openapi keeps them verbatim; a
//! case-insensitive match within the same package recovers them.

use std::collections::HashMap;
use std::path::Path;

/// `(openapi package, lowercased type name)` → exact type name, plus the same by type name alone
/// (for older API versions k8s-openapi no longer carries).
#[derive(Default)]
pub struct ExactNames(HashMap<(String, String), String>, HashMap<String, String>);

impl ExactNames {
    /// Scan every `src/v1_*` tree of k8s-openapi (all versions, for the widest coverage).
    pub fn scan(k8s_openapi_src: &Path) -> Result<Self, String> {
        let mut names = ExactNames::default();
        let entries = std::fs::read_dir(k8s_openapi_src)
            .map_err(|e| format!("reading {}: {e}", k8s_openapi_src.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            let is_version = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("v1_"));
            if path.is_dir() && is_version {
                names.scan_dir(&path)?;
            }
        }
        if names.0.is_empty() {
            return Err(format!(
                "no schema names found under {}",
                k8s_openapi_src.display()
            ));
        }
        Ok(names)
    }

    fn scan_dir(&mut self, dir: &Path) -> Result<(), String> {
        for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                self.scan_dir(&path)?;
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("reading {}: {e}", path.display()))?;
                for line in text.lines() {
                    let line = line.trim();
                    let Some(name) = line
                        .strip_prefix('"')
                        .and_then(|l| l.strip_suffix("\".into()"))
                    else {
                        continue;
                    };
                    if let Some((package, ty)) = name.rsplit_once('.') {
                        if name.starts_with("io.k8s.") {
                            self.0
                                .insert((package.to_owned(), ty.to_lowercase()), ty.to_owned());
                            self.1.insert(ty.to_lowercase(), ty.to_owned());
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The exact spelling of `rust_name` in `openapi_package`, if k8s-openapi knows the type.
    pub fn get(&self, openapi_package: &str, rust_name: &str) -> Option<&str> {
        self.0
            .get(&(openapi_package.to_owned(), rust_name.to_lowercase()))
            .map(String::as_str)
    }

    /// The spelling of `rust_name` in any package (`HttpIngressPath` → `HTTPIngressPath`).
    pub fn get_any(&self, rust_name: &str) -> Option<&str> {
        self.1.get(&rust_name.to_lowercase()).map(String::as_str)
    }
}
