//! What a push member's kubeconfig may hold: inline credentials, nothing that acts.
//!
//! The hub builds its client for a push member from a kubeconfig stored in a Secret. Two kinds
//! of kubeconfig entries would act inside the hub process rather than describe a credential:
//! an exec plugin (`users[].user.exec`) or auth provider (`auth-provider`) runs a command or an
//! auth flow there, and a file reference (`tokenFile`, `client-certificate`, `client-key`,
//! `certificate-authority`) makes the hub read one of its own files. Both are refused, at
//! `flotilla join` (which inlines the files of the joining user's machine first) and again
//! when a push worker loads the Secret, so a credential written by hand is held to the same.

use kube::config::Kubeconfig;

/// What to give instead, appended to every refusal.
const INSTEAD: &str = "give a kubeconfig with inline credentials instead (a service-account \
     token from `kubectl create token`, or client-certificate-data and client-key-data)";

/// Why the hub may not use `kc`, or `None`: the first exec plugin, auth provider or file
/// reference found, by user or cluster name.
pub fn refused(kc: &Kubeconfig) -> Option<String> {
    for named in &kc.auth_infos {
        let Some(user) = &named.auth_info else {
            continue;
        };
        let who = &named.name;
        if let Some(exec) = &user.exec {
            let command = exec.command.as_deref().unwrap_or_default();
            return Some(format!(
                "the member kubeconfig's user {who:?} runs an exec plugin ({command:?}), which \
                 the hub never runs: {INSTEAD}"
            ));
        }
        if let Some(provider) = &user.auth_provider {
            return Some(format!(
                "the member kubeconfig's user {who:?} uses the auth provider {:?}, which the \
                 hub never runs: {INSTEAD}",
                provider.name
            ));
        }
        let files = [
            ("tokenFile", &user.token_file),
            ("client-certificate", &user.client_certificate),
            ("client-key", &user.client_key),
        ];
        if let Some((field, Some(path))) = files.into_iter().find(|(_, p)| p.is_some()) {
            return Some(format!(
                "the member kubeconfig's user {who:?} names a file ({field}: {path}), which the \
                 hub would read from its own disk: {INSTEAD}"
            ));
        }
    }
    for named in &kc.clusters {
        let path = named
            .cluster
            .as_ref()
            .and_then(|c| c.certificate_authority.as_ref());
        if let Some(path) = path {
            return Some(format!(
                "the member kubeconfig's cluster {:?} names a file (certificate-authority: \
                 {path}), which the hub would read from its own disk: give \
                 certificate-authority-data instead",
                named.name
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests;
