//! Parsers of command-line values the benchmarks share.

use std::time::Duration;

/// `10s`, `1500ms`, `2m` or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is no duration: write e.g. 10s or 500ms"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("{s:?}: the unit must be ms, s or m")),
    };
    if !(secs > 0.0 && secs < 86_400.0) {
        return Err(format!("{s:?} must be above zero and below a day"));
    }
    Ok(Duration::from_secs_f64(secs))
}
