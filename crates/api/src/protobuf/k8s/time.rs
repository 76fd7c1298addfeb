//! Timestamps and durations as Kubernetes writes them in JSON.
//!
//! `metav1.Time` is RFC 3339 in UTC to the second (`2006-01-02T15:04:05Z`), `metav1.MicroTime` to
//! the microsecond (`2006-01-02T15:04:05.000000Z`), and `metav1.Duration` is Go's
//! `time.Duration.String()` (`1h0m0s`, `1.5s`, `300ms`). Both directions are here so the decoder
//! and the encoder agree.

pub(crate) use flotilla_apis::duration::{format_go_duration, parse_go_duration};

/// Formats a Unix time as RFC 3339 UTC; with `micros`, with exactly six fractional digits.
pub(crate) fn format_rfc3339(seconds: i64, nanos: i32, micros: bool) -> String {
    let days = seconds.div_euclid(86_400);
    let secs_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let (h, m, s) = (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60);
    let mut out = format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}");
    if micros {
        out.push_str(&format!(".{:06}", nanos.clamp(0, 999_999_999) / 1000));
    }
    out.push('Z');
    out
}

/// Parses RFC 3339 (`2024-05-06T07:08:09Z`, `...09.123456+02:00`) into Unix seconds and nanos.
pub(crate) fn parse_rfc3339(text: &str) -> Option<(i64, i32)> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for (i, c) in frac.bytes().take(digits).enumerate() {
            if i < 9 {
                nanos += i64::from(c - b'0') * 10i64.pow(8 - i as u32);
            }
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':' =>
        {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            let (oh, om) = (
                rest[1..3].parse::<i64>().ok()?,
                rest[4..6].parse::<i64>().ok()?,
            );
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some((seconds, i32::try_from(nanos).ok()?))
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_both_ways() {
        let cases = [
            (0, 0, false, "1970-01-01T00:00:00Z"),
            (1_700_000_000, 123_456_789, false, "2023-11-14T22:13:20Z"),
            (
                1_700_000_000,
                123_456_789,
                true,
                "2023-11-14T22:13:20.123456Z",
            ),
            (951_782_400, 0, false, "2000-02-29T00:00:00Z"),
            (-1, 0, false, "1969-12-31T23:59:59Z"),
        ];
        for (secs, nanos, micros, text) in cases {
            assert_eq!(format_rfc3339(secs, nanos, micros), text);
            let want_nanos = if micros { nanos / 1000 * 1000 } else { 0 };
            assert_eq!(parse_rfc3339(text), Some((secs, want_nanos)), "{text}");
        }
        assert_eq!(
            parse_rfc3339("2023-11-15T00:13:20+02:00"),
            Some((1_700_000_000, 0))
        );
        assert_eq!(parse_rfc3339("2023-11-14 22:13:20Z"), None);
        assert_eq!(parse_rfc3339("2023-13-14T22:13:20Z"), None);
    }

    #[test]
    fn go_durations_both_ways() {
        let cases = [
            (0, "0s"),
            (3_600_000_000_000, "1h0m0s"),
            (90_000_000_000, "1m30s"),
            (1_500_000_000, "1.5s"),
            (300_000_000, "300ms"),
            (1_500, "1.5µs"),
            (7, "7ns"),
            (-61_000_000_000, "-1m1s"),
            (100 * 3_600_000_000_000 + 1, "100h0m0.000000001s"),
        ];
        for (nanos, text) in cases {
            assert_eq!(format_go_duration(nanos), text);
            assert_eq!(parse_go_duration(text), Some(nanos), "{text}");
        }
        assert_eq!(parse_go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_go_duration(".5s"), Some(500_000_000));
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration("5d"), None);
    }
}
