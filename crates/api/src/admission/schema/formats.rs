//! The string `format`s a CRD may name, checked as kube-openapi's `strfmt` registry checks
//! them (`uuid`, `date`, `date-time`, `byte`, `ipv4`, `cidr`, …) and worded as
//! apiextensions-apiserver words the type error it makes of a failure:
//! `Invalid value: "x": spec.id in body must be of type uuid: "x"`.
//!
//! Number formats (`int32`, `int64`, `float`, `double`) constrain nothing beyond the type in
//! kube-openapi, and neither do `password` nor formats it does not know; those pass here too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use base64::Engine;
use regex::Regex;
use serde_json::Value;

/// The cause for string `v` at `path` that breaks `format`, if it does.
pub fn check(format: &str, v: &Value, path: &str) -> Option<(String, String)> {
    let text = v.as_str()?;
    if valid(format, text) {
        return None;
    }
    let detail = format!("{path} in body must be of type {format}: {v}");
    Some((path.into(), format!("Invalid value: {v}: {detail}")))
}

/// Whether `s` is a valid `format` (true for a format strfmt does not check).
pub fn valid(format: &str, s: &str) -> bool {
    match format {
        "uuid" => re(
            &UUID,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid3" => re(
            &UUID3,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid4" => re(
            &UUID4,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid5" => re(
            &UUID5,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10,
        "date-time" | "datetime" => date_time(s),
        // govalidator.IsBase64: standard alphabet, padded.
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(s),
        "mac" => re(
            &MAC,
            r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{2}[:-]){7}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{4}\.){2}([0-9A-Fa-f]{4})$|^([0-9A-Fa-f]{4}\.){3}([0-9A-Fa-f]{4})$",
            s,
        ),
        "hostname" => {
            re(
                &HOSTNAME,
                r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
                s,
            ) && s.len() <= 255
        }
        "hexcolor" => re(&HEXCOLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
        "duration" => re(
            &DURATION,
            r"^(-?[0-9]+(\.[0-9]*)?\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$",
            s,
        ),
        _ => true,
    }
}

static UUID: OnceLock<Option<Regex>> = OnceLock::new();
static UUID3: OnceLock<Option<Regex>> = OnceLock::new();
static UUID4: OnceLock<Option<Regex>> = OnceLock::new();
static UUID5: OnceLock<Option<Regex>> = OnceLock::new();
static MAC: OnceLock<Option<Regex>> = OnceLock::new();
static HOSTNAME: OnceLock<Option<Regex>> = OnceLock::new();
static HEXCOLOR: OnceLock<Option<Regex>> = OnceLock::new();
static DURATION: OnceLock<Option<Regex>> = OnceLock::new();

/// Match against a pattern compiled once (the patterns are constants: a failure to compile
/// would be caught by the tests, and lets every value through rather than refuse all).
fn re(cell: &OnceLock<Option<Regex>>, pattern: &str, s: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).ok())
        .as_ref()
        .is_none_or(|r| r.is_match(s))
}

/// strfmt's `ParseDateTime`: RFC 3339 with or without fractions, or a local time without zone.
fn date_time(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
        || chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests;
