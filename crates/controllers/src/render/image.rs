//! Container image references and the `imageOverrider`.
//!
//! An image is `[registry/]repository[:tag][@digest]`. The first path segment is the registry
//! only when it looks like a host: it contains `.` or `:` (a port, `localhost:5000`) or is
//! `localhost`; otherwise it belongs to the repository (`library/nginx`). Nothing is
//! normalised: `nginx` has no registry component (the runtime's `docker.io` default is not
//! written in), and `docker.io/library/nginx` keeps its registry as written.
//!
//! Operators follow Karmada: `add` appends the value to the component (so on an absent registry
//! or tag it sets it: `add registry.example.com` on `nginx:1.25` gives
//! `registry.example.com/nginx:1.25`), `replace` sets it, `remove` drops it. Removing the
//! repository is refused: the result would not be an image.
//!
//! Digests: a digest pins the content, and a runtime pulls by digest when one is present, so a
//! tag changed beside an old digest would be silently ignored. Any change to the `Tag`
//! component therefore drops the digest; `remove` drops both (the image falls back to
//! `latest`). A `replace` value of the form `algorithm:hex` (e.g. `sha256:…`) is written as a
//! digest instead of a tag.

use std::fmt;

use flotilla_apis::policy::v1alpha1::{ImageComponent, ImageOverrider, OverriderOperator};

/// A parsed container image reference (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    /// The registry host and port, when written.
    pub registry: Option<String>,
    /// The repository path, e.g. `library/nginx`.
    pub repository: String,
    /// The tag, when written.
    pub tag: Option<String>,
    /// The digest (`sha256:…`), when written.
    pub digest: Option<String>,
}

// === impl ImageRef ===

impl ImageRef {
    /// Parses an image reference; the error says what is wrong with it.
    pub fn parse(image: &str) -> Result<Self, String> {
        let (name, digest) = match image.split_once('@') {
            Some((name, digest)) if is_digest(digest) => (name, Some(digest.to_owned())),
            Some(_) => return Err(format!("image {image:?} has a malformed digest")),
            None => (image, None),
        };
        let (registry, rest) = match name.split_once('/') {
            Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
                (Some(first.to_owned()), rest)
            }
            _ => (None, name),
        };
        // The registry is split off, so any `:` left separates the tag.
        let (repository, tag) = match rest.rsplit_once(':') {
            Some((_, "")) => return Err(format!("image {image:?} has an empty tag")),
            Some((repo, tag)) => (repo, Some(tag.to_owned())),
            None => (rest, None),
        };
        if repository.is_empty() || repository.split('/').any(str::is_empty) {
            return Err(format!("image {image:?} has no valid repository"));
        }
        Ok(Self {
            registry,
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// Applies one image overrider's change to this reference.
    pub fn apply(&mut self, overrider: &ImageOverrider) -> Result<(), String> {
        use OverriderOperator::{Add, Remove, Replace};
        let value = || {
            overrider
                .value
                .clone()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{:?} needs a value", overrider.operator))
        };
        match (overrider.component, overrider.operator) {
            (ImageComponent::Registry, Add) => {
                let value = value()?;
                self.registry = Some(self.registry.take().unwrap_or_default() + &value);
            }
            (ImageComponent::Registry, Replace) => self.registry = Some(value()?),
            (ImageComponent::Registry, Remove) => self.registry = None,
            (ImageComponent::Repository, Add) => self.repository.push_str(&value()?),
            (ImageComponent::Repository, Replace) => self.repository = value()?,
            (ImageComponent::Repository, Remove) => {
                return Err("removing the repository would leave no image".to_owned())
            }
            (ImageComponent::Tag, Add) => {
                let value = value()?;
                self.tag = Some(self.tag.take().unwrap_or_default() + &value);
                self.digest = None;
            }
            (ImageComponent::Tag, Replace) => {
                let value = value()?;
                if is_digest(&value) {
                    self.tag = None;
                    self.digest = Some(value);
                } else {
                    self.tag = Some(value);
                    self.digest = None;
                }
            }
            (ImageComponent::Tag, Remove) => {
                self.tag = None;
                self.digest = None;
            }
        }
        // What a value brings in must still parse back to the same parts.
        let written = self.to_string();
        match Self::parse(&written) {
            Ok(parsed) if parsed == *self => Ok(()),
            _ => Err(format!("the result {written:?} is not a valid image")),
        }
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(registry) = &self.registry {
            write!(f, "{registry}/")?;
        }
        f.write_str(&self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// `algorithm:hex`, as `sha256:0123…`.
fn is_digest(s: &str) -> bool {
    s.split_once(':').is_some_and(|(algo, hex)| {
        !algo.is_empty()
            && algo
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+._-".contains(c))
            && hex.len() >= 32
            && hex.chars().all(|c| c.is_ascii_hexdigit())
    })
}

/// Where the pod spec of a kind's pod template is, as a JSON pointer.
pub(crate) fn pod_spec_pointer(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => Some("/spec"),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "ReplicationController" => Some("/spec/template/spec"),
        "CronJob" => Some("/spec/jobTemplate/spec/template/spec"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
