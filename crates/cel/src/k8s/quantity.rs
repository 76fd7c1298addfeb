//! Kubernetes' quantity library: `quantity('1.5Gi')`, `isQuantity(s)`, and on a quantity
//! `sign()`, `isInteger()`, `asInteger()`, `asApproximateFloat()`, `isGreaterThan(q)`,
//! `isLessThan(q)`, `compareTo(q)`, `add(q|int)`, `sub(q|int)`.
//!
//! A quantity is held exactly, in billionths (the finest unit a Kubernetes quantity keeps,
//! `n`): the suffixes are decimal SI (`n u m k M G T P E`), binary SI (`Ki … Ei`) or a decimal
//! exponent (`e3`, `E-2`), as `resource.ParseQuantity` reads them.

use cel::Value;

use super::{opaque, opaque_arg, string_arg};

const NANO: i128 = 1_000_000_000;
const FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A quantity, in billionths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantity(i128);

impl cel::objects::Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

fn pow(base: i128, exp: u32) -> Option<i128> {
    base.checked_pow(exp)
}

/// Parse a quantity as `resource.ParseQuantity` does.
pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_len);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(FORMAT.to_owned());
    }
    let digits = format!("{int}{frac}");
    let overflow = || "quantity is too large".to_owned();
    let mantissa: i128 = digits.parse().map_err(|_| overflow())?;
    let frac_digits = frac.len() as i64;
    // value = mantissa * 10^(exp10 - frac_digits) * 2^exp2
    let (exp10, exp2): (i64, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        s if s.starts_with(['e', 'E']) => {
            let e: i64 = s[1..].parse().map_err(|_| FORMAT.to_owned())?;
            (e, 0)
        }
        _ => return Err("unable to parse quantity's suffix".to_owned()),
    };
    let scaled = mantissa
        .checked_mul(pow(2, exp2).ok_or_else(overflow)?)
        .ok_or_else(overflow)?;
    // Billionths: shift the decimal exponent by 9.
    let shift = exp10 - frac_digits + 9;
    let nanos = if shift >= 0 {
        let m = pow(10, u32::try_from(shift).map_err(|_| overflow())?).ok_or_else(overflow)?;
        scaled.checked_mul(m).ok_or_else(overflow)?
    } else {
        // Finer than a billionth: Kubernetes rounds up to the unit it keeps.
        let d = pow(10, u32::try_from(-shift).map_err(|_| overflow())?).unwrap_or(i128::MAX);
        (scaled + d - 1) / d
    };
    Ok(Quantity(if negative { -nanos } else { nanos }))
}

fn q(args: &[Value], i: usize) -> Result<Quantity, String> {
    opaque_arg::<Quantity>(args, i, "quantity").copied()
}

/// The other operand of `add`/`sub`: a quantity or an int.
fn operand(args: &[Value]) -> Result<i128, String> {
    match args.get(1) {
        Some(Value::Int(i)) => Ok(i128::from(*i) * NANO),
        _ => Ok(q(args, 1)?.0),
    }
}

/// `quantity(s)`.
pub(super) fn parse(args: &[Value]) -> Result<Value, String> {
    Ok(opaque(parse_quantity(string_arg(args, 0)?)?))
}

/// `isQuantity(s)`.
pub(super) fn is_quantity(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(parse_quantity(string_arg(args, 0)?).is_ok()))
}

/// `q.sign()`: -1, 0 or 1.
pub(super) fn sign(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Int(q(args, 0)?.0.signum() as i64))
}

/// `q.isInteger()`: a whole number that fits an int.
pub(super) fn is_integer(args: &[Value]) -> Result<Value, String> {
    let v = q(args, 0)?.0;
    Ok(Value::Bool(
        v % NANO == 0 && i64::try_from(v / NANO).is_ok(),
    ))
}

/// `q.asInteger()`.
pub(super) fn as_integer(args: &[Value]) -> Result<Value, String> {
    let v = q(args, 0)?.0;
    match i64::try_from(v / NANO) {
        Ok(i) if v % NANO == 0 => Ok(Value::Int(i)),
        _ => Err("cannot convert value to integer".to_owned()),
    }
}

/// `q.asApproximateFloat()`.
pub(super) fn as_float(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Float(q(args, 0)?.0 as f64 / NANO as f64))
}

/// `q.add(other)`.
pub(super) fn add(args: &[Value]) -> Result<Value, String> {
    let sum = q(args, 0)?
        .0
        .checked_add(operand(args)?)
        .ok_or("quantity overflow")?;
    Ok(opaque(Quantity(sum)))
}

/// `q.sub(other)`.
pub(super) fn sub(args: &[Value]) -> Result<Value, String> {
    let diff = q(args, 0)?
        .0
        .checked_sub(operand(args)?)
        .ok_or("quantity overflow")?;
    Ok(opaque(Quantity(diff)))
}
