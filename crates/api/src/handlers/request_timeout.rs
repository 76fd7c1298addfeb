//! The `?timeout=` query parameter, as kube-apiserver's request-deadline filter reads it: a Go
//! duration (`30s`, `1m30s`, `0s`) for any request that is not long-running (a watch is: it
//! ends by `timeoutSeconds`). One that does not parse is refused before anything else, even
//! authentication, with kube's words: `invalid timeout specified in the request URL - time:
//! invalid duration "x"`. A valid one is accepted; the hub answers well within kube's 60 s
//! ceiling, so it has no shorter deadline to apply.

use std::time::Duration;

use crate::error::{ApiError, Result};

/// Check `?timeout=` of a request with this path and raw query.
pub(super) fn check(path: &str, query: Option<&str>) -> Result<()> {
    let Some(query) = query else { return Ok(()) };
    let mut timeout = None;
    let mut watch = path.contains("/watch/");
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            // The first value counts, as Go's url.Values.Get.
            "timeout" if timeout.is_none() => timeout = Some(v.into_owned()),
            "watch" => watch |= matches!(v.as_ref(), "true" | "1" | "True"),
            _ => {}
        }
    }
    match timeout {
        Some(t) if !t.is_empty() && !watch => parse_go_duration(&t).map(|_| ()).map_err(|e| {
            ApiError::bad_request(format!(
                "invalid timeout specified in the request URL - {e}"
            ))
        }),
        _ => Ok(()),
    }
}

/// A Go `time.ParseDuration`: an optional sign, then numbers (decimals allowed) each with a
/// unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`); `0` alone is zero. Negative durations are
/// zero here (kube then uses its default). Errors are worded as Go's.
pub(super) fn parse_go_duration(s: &str) -> std::result::Result<Duration, String> {
    let invalid = || format!("time: invalid duration \"{s}\"");
    let mut rest = s;
    let negative = rest.starts_with('-');
    if let Some(r) = rest.strip_prefix('-').or_else(|| rest.strip_prefix('+')) {
        rest = r;
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..num_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        let value: f64 = number.parse().map_err(|_| invalid())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let seconds = match unit {
            "" => return Err(format!("time: missing unit in duration \"{s}\"")),
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            other => {
                return Err(format!(
                    "time: unknown unit \"{other}\" in duration \"{s}\""
                ))
            }
        };
        total += value * seconds;
        rest = &rest[unit_len..];
    }
    if negative || !total.is_finite() {
        return Ok(Duration::ZERO);
    }
    Ok(Duration::from_secs_f64(total.min(u32::MAX as f64)))
}

#[cfg(test)]
mod tests;
