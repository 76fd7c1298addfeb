//! Durations as Go writes them (`1h0m0s`, `1.5s`, `300ms`): `metav1.Duration` in the API,
//! and the durations of flotilla's own specs (a rollout's `minSuccessTime`, ...), parsed one
//! way everywhere.

use std::time::Duration;

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// A non-negative Go duration as a [`Duration`]; `None` when `text` is not one.
pub fn parse(text: &str) -> Option<Duration> {
    let nanos = parse_go_duration(text)?;
    u64::try_from(nanos).ok().map(Duration::from_nanos)
}

/// Go's `time.Duration.String()`.
pub fn format_go_duration(nanos: i64) -> String {
    let negative = nanos < 0;
    let mut u = nanos.unsigned_abs();
    let body = if u == 0 {
        "0s".to_owned()
    } else if u < NANOS_PER_SECOND as u64 {
        // Under a second Go switches to the largest unit that keeps an integer part.
        let (prec, unit) = match u {
            0..=999 => (0, "ns"),
            1_000..=999_999 => (3, "µs"),
            _ => (6, "ms"),
        };
        let (frac, whole) = fraction(u, prec);
        format!("{whole}{frac}{unit}")
    } else {
        let (frac, whole) = fraction(u, 9);
        u = whole;
        let mut out = format!("{}{frac}s", u % 60);
        u /= 60;
        if u > 0 {
            out = format!("{}m{out}", u % 60);
            u /= 60;
            if u > 0 {
                out = format!("{u}h{out}");
            }
        }
        out
    };
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// Splits off the last `prec` decimal digits of `v` as `.ddd` without trailing zeros (nothing
/// when they are all zero), returning it with the remaining integer part.
fn fraction(v: u64, prec: u32) -> (String, u64) {
    let divisor = 10u64.pow(prec);
    let (whole, frac) = (v / divisor, v % divisor);
    if frac == 0 {
        return (String::new(), whole);
    }
    let digits = format!("{frac:0width$}", width = prec as usize);
    (format!(".{}", digits.trim_end_matches('0')), whole)
}

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
pub fn parse_go_duration(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(f) => {
                let n = f.bytes().take_while(u8::is_ascii_digit).count();
                f.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().ok()?
        };
        total = total.checked_add(whole.checked_mul(scale)?)?;
        let mut place = scale;
        for digit in frac_part.bytes() {
            place /= 10;
            total += u128::from(digit - b'0') * place;
        }
        rest = after;
    }
    let total = i64::try_from(total).ok()?;
    Some(if negative { -total } else { total })
}
