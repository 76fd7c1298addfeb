//! CEL's sets extension, which Kubernetes enables: `sets.contains(a, b)` (every item of `b` is
//! in `a`), `sets.equivalent(a, b)` (each contains the other), `sets.intersects(a, b)` (an
//! item in both), over lists compared by CEL equality.

use cel::Value;

fn lists(args: &[Value]) -> Result<(&[Value], &[Value]), String> {
    match (args.first(), args.get(1)) {
        (Some(Value::List(a)), Some(Value::List(b))) => Ok((a.as_slice(), b.as_slice())),
        _ => Err("expected two lists".to_owned()),
    }
}

fn has(list: &[Value], x: &Value) -> bool {
    list.iter().any(|y| super::lists::equal(x, y))
}

/// `sets.contains(a, b)`.
pub(super) fn contains(args: &[Value]) -> Result<Value, String> {
    let (a, b) = lists(args)?;
    Ok(Value::Bool(b.iter().all(|x| has(a, x))))
}

/// `sets.equivalent(a, b)`.
pub(super) fn equivalent(args: &[Value]) -> Result<Value, String> {
    let (a, b) = lists(args)?;
    Ok(Value::Bool(
        b.iter().all(|x| has(a, x)) && a.iter().all(|x| has(b, x)),
    ))
}

/// `sets.intersects(a, b)`.
pub(super) fn intersects(args: &[Value]) -> Result<Value, String> {
    let (a, b) = lists(args)?;
    Ok(Value::Bool(b.iter().any(|x| has(a, x))))
}
