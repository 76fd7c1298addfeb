//! Resource quantities in the canonical form kube-apiserver stores and returns them in.
//!
//! Kubernetes keeps a `resource.Quantity` as a number plus the format it was written in, and
//! prints it canonically: `0.5` becomes `500m`, `1000` becomes `1k`, `1.5Gi` becomes `1536Mi`,
//! `2048Ki` becomes `2Mi`. Clients compare what they sent with what comes back (`kubectl diff`,
//! flotilla's own drift detection between hub and members), so the hub must print them the same
//! way. Values finer than a nano-unit round up to one, away from zero, as Kubernetes rounds.

/// The three formats a quantity keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// `Ki`, `Mi`, … (powers of 1024).
    BinarySi,
    /// `n`, `u`, `m`, `k`, `M`, … or no suffix.
    DecimalSi,
    /// `1e3`, `5E-3`.
    DecimalExponent,
}

const BINARY: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// The canonical form of a quantity string, or `None` if it is not one (validation reports
/// that; the value is left as it was).
pub fn canonical(s: &str) -> Option<String> {
    let (negative, mantissa, scale, rest) = parse_number(s.trim())?;
    let (format, mut value, mut scale) = match rest {
        "" => (Format::DecimalSi, mantissa, scale),
        _ => {
            if let Some(k) = BINARY.iter().position(|b| !b.is_empty() && *b == rest) {
                let factor = 1024i128.checked_pow(k as u32)?;
                (Format::BinarySi, mantissa.checked_mul(factor)?, scale)
            } else if let Some(e) = decimal_suffix(rest) {
                (Format::DecimalSi, mantissa, scale - e)
            } else if let Some(exp) = rest.strip_prefix(['e', 'E']) {
                let e: i32 = exp.parse().ok()?;
                (Format::DecimalExponent, mantissa, scale.checked_sub(e)?)
            } else {
                return None;
            }
        }
    };
    if value == 0 {
        return Some("0".into());
    }
    // value × 10^-scale. Nothing finer than 10^-9: round up (away from zero).
    if scale > 9 {
        let div = 10i128.checked_pow((scale - 9) as u32)?;
        value = value / div + i128::from(value % div != 0);
        scale = 9;
    }
    let sign = if negative { "-" } else { "" };
    if format == Format::BinarySi {
        if let Some(text) = binary(value, scale) {
            return Some(format!("{sign}{text}"));
        }
    }
    let (m, e) = decimal(value, -scale)?;
    let suffix = match format {
        Format::DecimalExponent if e == 0 => String::new(),
        Format::DecimalExponent => format!("e{e}"),
        _ => decimal_name(e)?.to_string(),
    };
    Some(format!("{sign}{m}{suffix}"))
}

/// Sign, digits as an integer, digits after the point, and what follows the number.
fn parse_number(s: &str) -> Option<(bool, i128, i32, &str)> {
    let (negative, s) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, rest) = s.split_at(end);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return None;
    }
    // Trailing zeros after the point carry no value; dropping them keeps the integer small.
    let frac = frac.trim_end_matches('0');
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some((negative, mantissa, frac.len() as i32, rest))
}

fn decimal_suffix(s: &str) -> Option<i32> {
    Some(match s {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        _ => return None,
    })
}

fn decimal_name(e: i32) -> Option<&'static str> {
    Some(match e {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    })
}

/// `value × 10^-scale` as a power-of-1024 multiple, if it is a whole number of at least 1024.
fn binary(value: i128, scale: i32) -> Option<String> {
    let div = 10i128.checked_pow(scale.max(0) as u32)?;
    if value % div != 0 {
        return None;
    }
    let mut v = (value / div).checked_mul(10i128.checked_pow((-scale).max(0) as u32)?)?;
    if v < 1024 {
        return None;
    }
    let mut k = 0;
    while v % 1024 == 0 && k < BINARY.len() - 1 {
        v /= 1024;
        k += 1;
    }
    Some(format!("{v}{}", BINARY[k]))
}

/// `value × 10^e` as `m × 10^e'` with `e'` a multiple of 3 in -9..=18 and `m` whole, `e'` as
/// large as possible.
fn decimal(mut m: i128, mut e: i32) -> Option<(i128, i32)> {
    while m % 10 == 0 && e < 18 {
        m /= 10;
        e += 1;
    }
    while e.rem_euclid(3) != 0 || e > 18 {
        m = m.checked_mul(10)?;
        e -= 1;
    }
    Some((m, e))
}

#[cfg(test)]
mod tests;
