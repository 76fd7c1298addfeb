//! Kubernetes' list library: `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf` over a
//! list of comparable (or summable) items, all of one type as CEL's lists are.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::Value;

fn items(args: &[Value]) -> Result<&[Value], String> {
    match args.first() {
        Some(Value::List(l)) => Ok(l.as_slice()),
        other => Err(format!("expected a list, got {other:?}")),
    }
}

/// CEL's ordering of two values of one comparable type.
fn compare(a: &Value, b: &Value) -> Result<Ordering, String> {
    let order = match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.partial_cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.partial_cmp(y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).partial_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Value::String(x), Value::String(y)) => x.partial_cmp(y),
        (Value::Bytes(x), Value::Bytes(y)) => x.partial_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.partial_cmp(y),
        _ => None,
    };
    order.ok_or_else(|| "no such overload".to_owned())
}

/// `list.isSorted()`: every item is no less than the one before.
pub(super) fn is_sorted(args: &[Value]) -> Result<Value, String> {
    let l = items(args)?;
    for pair in l.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// `list.sum()`: the items added up; 0 (of the list's type) when empty.
pub(super) fn sum(args: &[Value]) -> Result<Value, String> {
    let l = items(args)?;
    let Some(first) = l.first() else {
        return Ok(Value::Int(0));
    };
    let mut acc = first.clone();
    for v in &l[1..] {
        acc = match (&acc, v) {
            (Value::Int(a), Value::Int(b)) => {
                Value::Int(a.checked_add(*b).ok_or("integer overflow")?)
            }
            (Value::UInt(a), Value::UInt(b)) => {
                Value::UInt(a.checked_add(*b).ok_or("unsigned integer overflow")?)
            }
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::String(a), Value::String(b)) => Value::String(Arc::new(format!("{a}{b}"))),
            _ => return Err("no such overload".to_owned()),
        };
    }
    Ok(acc)
}

fn extreme(args: &[Value], name: &str, keep: Ordering) -> Result<Value, String> {
    let l = items(args)?;
    let mut best = l
        .first()
        .ok_or_else(|| format!("{name} called on empty list"))?;
    for v in &l[1..] {
        if compare(v, best)? == keep {
            best = v;
        }
    }
    Ok(best.clone())
}

/// `list.min()`: the least item; an error on an empty list.
pub(super) fn min(args: &[Value]) -> Result<Value, String> {
    extreme(args, "min", Ordering::Less)
}

/// `list.max()`: the greatest item; an error on an empty list.
pub(super) fn max(args: &[Value]) -> Result<Value, String> {
    extreme(args, "max", Ordering::Greater)
}

/// CEL equality: numbers of different types compare by value (`1 == 1.0 == 1u`).
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
        ) => compare(a, b).is_ok_and(|o| o == Ordering::Equal) || num(a) == num(b),
        _ => a == b,
    }
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// `list.indexOf(x)`: the first index of an item equal to `x`, or -1.
pub(super) fn index_of(args: &[Value]) -> Result<Value, String> {
    let l = items(args)?;
    let x = args.get(1).ok_or("indexOf needs an argument")?;
    Ok(Value::Int(
        l.iter().position(|v| equal(v, x)).map_or(-1, |i| i as i64),
    ))
}

/// `list.lastIndexOf(x)`: the last index of an item equal to `x`, or -1.
pub(super) fn last_index_of(args: &[Value]) -> Result<Value, String> {
    let l = items(args)?;
    let x = args.get(1).ok_or("lastIndexOf needs an argument")?;
    Ok(Value::Int(
        l.iter().rposition(|v| equal(v, x)).map_or(-1, |i| i as i64),
    ))
}
