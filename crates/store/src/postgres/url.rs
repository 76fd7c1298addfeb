//! Reading a `postgres://` URL: the libpq TLS parameters tokio-postgres does not know
//! (`sslmode=verify-ca|verify-full`, `sslrootcert`, `sslcert`, `sslkey`) are taken out here,
//! the rest is handed to tokio-postgres, and the URL is never logged or echoed with its password.
//!
//! # `sslmode`
//! As libpq: `disable` (plaintext), `prefer` (TLS if the server offers it, else plaintext; the
//! default, as in libpq, so existing URLs keep working), `require` (TLS or no connection),
//! `verify-ca` (TLS, and the server's certificate must chain to a trusted root), `verify-full`
//! (as verify-ca, and the certificate must name the URL's host). `allow` (plaintext first) is
//! refused. Under `prefer` and `require` nothing stops a machine in the middle; use
//! `verify-full` for a database that is not on loopback.
//!
//! Trusted roots: `sslrootcert=PATH` (PEM), or `sslrootcert=system` for the machine's roots.
//! Unlike libpq, verify-ca/verify-full without `sslrootcert` use the system roots rather than
//! `~/.postgresql/root.crt`. As in libpq, an `sslrootcert` given with `prefer` or `require`
//! makes them check the chain too, and `sslrootcert=system` needs `verify-full`.
//! `sslcert=PATH&sslkey=PATH` present a client certificate (both or neither).

use std::path::PathBuf;
use std::str::FromStr;

use percent_encoding::percent_decode_str;
use tokio_postgres::config::Host;
use tokio_postgres::Config;

use crate::{Error, Result};

/// How much TLS the URL asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// Where trusted roots come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    File(PathBuf),
    System,
}

/// The URL's TLS settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub mode: SslMode,
    /// Roots to verify the server's chain against; `None` = no verification.
    pub roots: Option<Roots>,
    /// Client certificate chain and key files.
    pub client: Option<(PathBuf, PathBuf)>,
}

/// A parsed URL.
pub(crate) struct Parsed {
    /// The driver's configuration, its `ssl_mode` set from [`TlsSettings::mode`].
    pub config: Config,
    pub tls: TlsSettings,
    /// The servers named, as `host:port[,host:port…]`, for messages.
    pub host: String,
}

/// Split the URL, take out our parameters, and let tokio-postgres read the rest.
pub(crate) fn parse(url: &str) -> Result<Parsed> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let (mut mode, mut rootcert, mut cert, mut key) = (None, None, None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let slot = match decode(k)?.as_str() {
            "sslmode" => &mut mode,
            "sslrootcert" => &mut rootcert,
            "sslcert" => &mut cert,
            "sslkey" => &mut key,
            _ => {
                kept.push(pair);
                continue;
            }
        };
        *slot = Some(decode(v)?);
    }
    let tls = settings(mode.as_deref(), rootcert, cert, key)?;
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    // tokio-postgres's parse errors name the option, never its value.
    let mut config = Config::from_str(&rest).map_err(|e| {
        let cause = std::error::Error::source(&e).map(|s| format!(": {s}"));
        Error::PostgresUrl {
            detail: format!("{e}{}", cause.unwrap_or_default()),
        }
    })?;
    config.ssl_mode(match tls.mode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
            tokio_postgres::config::SslMode::Require
        }
    });
    let host = host_label(&config);
    Ok(Parsed { config, tls, host })
}

fn decode(s: &str) -> Result<String> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| Error::PostgresUrl {
            detail: "a query parameter is not valid percent-encoded UTF-8".into(),
        })
}

fn settings(
    mode: Option<&str>,
    rootcert: Option<String>,
    cert: Option<String>,
    key: Option<String>,
) -> Result<TlsSettings> {
    let invalid = |detail: String| Error::PostgresUrl { detail };
    let roots = rootcert.map(|r| match r.as_str() {
        "system" => Roots::System,
        _ => Roots::File(r.into()),
    });
    let mode = match mode {
        // libpq: sslrootcert=system makes verify-full the default.
        None if roots == Some(Roots::System) => SslMode::VerifyFull,
        None | Some("prefer") => SslMode::Prefer,
        Some("disable") => SslMode::Disable,
        Some("require") => SslMode::Require,
        Some("verify-ca") => SslMode::VerifyCa,
        Some("verify-full") => SslMode::VerifyFull,
        Some("allow") => {
            return Err(invalid(
                "sslmode=allow is not supported (it tries plaintext first): use verify-full, \
                 require, prefer or disable"
                    .into(),
            ))
        }
        Some(other) => {
            return Err(invalid(format!(
                "sslmode={other:?} is not one of disable, prefer, require, verify-ca, verify-full"
            )))
        }
    };
    if roots == Some(Roots::System) && !matches!(mode, SslMode::VerifyFull | SslMode::Disable) {
        return Err(invalid(
            "sslrootcert=system needs sslmode=verify-full (a public CA signs certificates for \
             anyone, so only the host name check makes them mean something)"
                .into(),
        ));
    }
    let roots = match (mode, roots) {
        (SslMode::Disable, _) => None,
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => Some(Roots::System),
        (_, roots) => roots,
    };
    let client = match (cert, key) {
        (Some(c), Some(k)) => Some((c.into(), k.into())),
        (None, None) => None,
        _ => {
            return Err(invalid(
                "sslcert and sslkey go together: give both or neither".into(),
            ))
        }
    };
    Ok(TlsSettings {
        mode,
        roots,
        client,
    })
}

/// `host:port` of every server the configuration names (the default port when none is given).
fn host_label(config: &Config) -> String {
    let ports = config.get_ports();
    let hosts = config.get_hosts();
    let port = |i: usize| match ports.len() {
        0 => 5432,
        1 => ports[0],
        _ => ports.get(i).copied().unwrap_or(5432),
    };
    let label: Vec<String> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| match h {
            Host::Tcp(name) if name.contains(':') => format!("[{name}]:{}", port(i)),
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            #[cfg(unix)]
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    if label.is_empty() {
        "localhost:5432".into()
    } else {
        label.join(",")
    }
}

/// Whether every server the configuration names is on this machine (loopback or a unix
/// socket), where plaintext is no exposure.
pub(crate) fn is_local(config: &Config) -> bool {
    let addrs = config.get_hostaddrs();
    if !addrs.is_empty() {
        // The connection goes to hostaddr; host only names the server for TLS.
        return addrs.iter().all(std::net::IpAddr::is_loopback);
    }
    config.get_hosts().iter().all(|h| match h {
        Host::Tcp(name) => {
            name == "localhost"
                || name
                    .trim_matches(|c| c == '[' || c == ']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        #[cfg(unix)]
        Host::Unix(_) => true,
    })
}

/// A store URL fit for logs and messages: the password (in the user part or as a `password`
/// parameter) replaced by `***`. Any URL is accepted; non-URLs come back unchanged.
pub fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = match base.find("://") {
        // The last '@' ends the user part: a password may hold '@' or '/' unescaped.
        Some(s) => match base[s + 3..].rfind('@').map(|a| s + 3 + a) {
            Some(at) => match base[s + 3..at].find(':') {
                Some(c) => format!("{}:***{}", &base[..s + 3 + c], &base[at..]),
                None => base.to_owned(),
            },
            None => base.to_owned(),
        },
        None => base.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if decode(k).is_ok_and(|k| k == "password") => "password=***".into(),
                _ => p.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

#[cfg(test)]
mod tests;
