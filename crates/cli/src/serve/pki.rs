//! First-start credentials: a CA, a serving certificate, the admin token, admin.kubeconfig.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context, Result};
use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

/// What the server needs to start serving.
pub struct Credentials {
    /// The CA certificate (PEM) clients trust.
    pub ca_pem: String,
    /// The admin bearer token.
    pub admin_token: String,
    /// The TLS configuration.
    pub tls: rustls::ServerConfig,
}

/// Writes `data` to `path` with mode 0600 (keys, tokens, kubeconfigs), replacing what was there.
pub(crate) fn write_private(path: &Path, data: &str) -> Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(data.as_bytes())?;
    Ok(())
}

/// The CA certificate's file name in the data directory (PEM, public).
pub(crate) const CA_CERT: &str = "ca.crt";
/// The CA key's file name in the data directory (PEM, mode 0600).
pub(crate) const CA_KEY: &str = "ca.key";
/// The admin token's file name in the data directory (mode 0600).
pub(crate) const ADMIN_TOKEN: &str = "admin.token";

/// Create the CA and the admin token in `dir` where they are missing; keep them where present.
pub(crate) fn ensure_authority(dir: &Path) -> Result<()> {
    let ca_crt = dir.join(CA_CERT);
    let ca_key = dir.join(CA_KEY);
    if !ca_crt.exists() || !ca_key.exists() {
        let key = KeyPair::generate().context("generating the CA key")?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "flotilla-ca");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_after = rcgen::date_time_ymd(2036, 1, 1);
        let cert = params.self_signed(&key)?;
        fs::write(&ca_crt, cert.pem())?;
        write_private(&ca_key, &key.serialize_pem())?;
        tracing::info!(path = %ca_crt.display(), "created a new certificate authority");
    }
    let token_path = dir.join(ADMIN_TOKEN);
    match fs::read_to_string(&token_path) {
        Ok(t) if !t.trim().is_empty() => {}
        _ => write_private(&token_path, &random_token())?,
    }
    Ok(())
}

/// A new bearer token: 32 random bytes, in hex.
pub(crate) fn random_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Load or create the CA and admin token in `dir`; issue a fresh serving certificate for `host`
/// (plus localhost and `extra` SANs) signed by the CA, so clients trusting the CA keep working
/// across restarts and address changes (and every replica sharing the CA serves its own).
pub fn ensure(dir: &Path, host: &str, extra: &[String]) -> Result<Credentials> {
    ensure_authority(dir)?;
    let ca_crt = dir.join(CA_CERT);
    let ca_key = dir.join(CA_KEY);
    let ca_pem =
        fs::read_to_string(&ca_crt).with_context(|| format!("reading {}", ca_crt.display()))?;
    let ca_key_pem =
        fs::read_to_string(&ca_key).with_context(|| format!("reading {}", ca_key.display()))?;
    let ca_keypair = KeyPair::from_pem(&ca_key_pem).context("parsing ca.key")?;
    let issuer = Issuer::from_ca_cert_pem(&ca_pem, ca_keypair).context("parsing ca.crt")?;

    let mut sans: Vec<String> = vec![
        "localhost".into(),
        "127.0.0.1".into(),
        "::1".into(),
        host.to_string(),
    ];
    sans.extend(extra.iter().cloned());
    sans.sort();
    sans.dedup();
    let mut params = CertificateParams::default();
    params
        .distinguished_name
        .push(DnType::CommonName, "flotilla-hub");
    params.subject_alt_names = sans
        .iter()
        .map(|s| match s.parse::<std::net::IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => s.clone().try_into().map(SanType::DnsName),
        })
        .collect::<Result<_, _>>()?;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.not_after = rcgen::date_time_ymd(2036, 1, 1);
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;

    let token_path = dir.join(ADMIN_TOKEN);
    let admin_token = fs::read_to_string(&token_path)
        .with_context(|| format!("reading {}", token_path.display()))?
        .trim()
        .to_string();

    let certs = vec![cert.der().clone()];
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(|e| anyhow::anyhow!("serving key: {e}"))?;
    let tls = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(certs, key_der)
    .context("building the TLS configuration")?;
    Ok(Credentials {
        ca_pem,
        admin_token,
        tls,
    })
}

/// Write a kubeconfig (context `flotilla`) for `server` with `token`.
pub fn write_kubeconfig(path: &Path, server: &str, ca_pem: &str, token: &str) -> Result<()> {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let cfg = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "flotilla", "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": "flotilla-admin", "user": {"token": token}}],
        "contexts": [{"name": "flotilla", "context": {"cluster": "flotilla", "user": "flotilla-admin"}}],
        "current-context": "flotilla",
        "preferences": {},
    });
    write_private(path, &serde_yaml::to_string(&cfg)?)
}
