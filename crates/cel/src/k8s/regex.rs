//! Kubernetes' regex library: `str.find(re)` (the first match, or '') and `str.findAll(re)`,
//! `str.findAll(re, n)` (every match, or the first `n`; a negative `n` means all), with RE2
//! syntax as Go's `regexp` (Rust's `regex` is of the same family: no backreferences, linear).

use std::sync::Arc;

use cel::Value;

use super::string_arg;

fn compile(re: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(re).map_err(|e| format!("Illegal regex: {e}"))
}

/// `str.find(re)`.
pub(super) fn find(args: &[Value]) -> Result<Value, String> {
    let s = string_arg(args, 0)?;
    let re = compile(string_arg(args, 1)?)?;
    let found = re.find(s).map_or("", |m| m.as_str());
    Ok(Value::String(Arc::new(found.to_owned())))
}

/// `str.findAll(re)` and `str.findAll(re, n)`.
pub(super) fn find_all(args: &[Value]) -> Result<Value, String> {
    let s = string_arg(args, 0)?;
    let re = compile(string_arg(args, 1)?)?;
    let limit = match args.get(2) {
        Some(Value::Int(n)) if *n >= 0 => *n as usize,
        Some(Value::Int(_)) | None => usize::MAX,
        Some(other) => return Err(format!("expected an int, got {other:?}")),
    };
    let found: Vec<Value> = re
        .find_iter(s)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Ok(Value::List(Arc::new(found)))
}
