//! Resource quantities as integers of milli-units: what the agent sums into a Cluster's resource
//! summary and the scheduler compares and divides, parsed one way for both.
//!
//! Kubernetes quantities (`500m`, `2`, `1.5Gi`, `1e3`) are parsed to thousandths of a unit so
//! CPU (`250m`) and bytes (`1Gi`) share one integer type, rounded up as Kubernetes' `MilliValue`
//! rounds (`0.0001` → 1); values saturate at `i64::MAX` (9.2e15 units, far beyond any cluster).
//! Anything that does not parse is `None`, and callers treat the resource as unknown.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// The quantity in milli-units, or `None` if it is not a Kubernetes quantity.
pub fn millis(q: &Quantity) -> Option<i64> {
    parse_millis(&q.0)
}

/// [`millis`] of a quantity's text.
pub fn parse_millis(s: &str) -> Option<i64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let (negative, number) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number.strip_prefix('+').unwrap_or(number)),
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |d: &str| d.is_empty() || d.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) {
        return None;
    }
    // value = mantissa / 10^scale, times the suffix's multiplier, times 1000.
    let mut mantissa: i128 = 0;
    for b in whole.bytes().chain(frac.bytes().take(18)) {
        mantissa = mantissa
            .saturating_mul(10)
            .saturating_add(i128::from(b - b'0'));
    }
    let scale = frac.len().min(18) as u32;
    let (mul, div): (i128, i128) = match suffix {
        "" => (1000, 1),
        "m" => (1, 1),
        "k" => (1000 * 1000, 1),
        "M" => (1000 * 1_000_000, 1),
        "G" => (1000 * 1_000_000_000, 1),
        "T" => (1000 * 1_000_000_000_000, 1),
        "P" => (1000 * 1_000_000_000_000_000, 1),
        "E" => (1000 * 1_000_000_000_000_000_000, 1),
        "Ki" => (1000 << 10, 1),
        "Mi" => (1000 << 20, 1),
        "Gi" => (1000 << 30, 1),
        "Ti" => (1000 << 40, 1),
        "Pi" => (1000 << 50, 1),
        "Ei" => (1000 << 60, 1),
        e if e.starts_with(['e', 'E']) => {
            let exp: i32 = e[1..].parse().ok()?;
            if exp >= 0 {
                (1000 * 10i128.checked_pow(exp.unsigned_abs().min(30))?, 1)
            } else {
                (1000, 10i128.checked_pow(exp.unsigned_abs().min(30))?)
            }
        }
        _ => return None,
    };
    // Rounded up: a request of a fraction of a thousandth still takes one.
    let denominator = 10i128.pow(scale).saturating_mul(div);
    let value = mantissa.saturating_mul(mul).saturating_add(denominator - 1) / denominator;
    let value = i64::try_from(value).unwrap_or(i64::MAX);
    Some(if negative { -value } else { value })
}

/// Milli-units back to a quantity: whole units when exact (`2000` → `2`), else `m` (`1500m`).
pub fn format_millis(v: i64) -> String {
    if v % 1000 == 0 {
        (v / 1000).to_string()
    } else {
        format!("{v}m")
    }
}

#[cfg(test)]
mod tests;
