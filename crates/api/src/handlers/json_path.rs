//! The JSONPath subset printer columns use: `.a.b`, `.a[0].b`, `.a[*].b`, and filters
//! `.a[?(@.k=="v")].b` (as in `.status.conditions[?(@.type=="Ready")].status`, the usual
//! condition column of CRDs).

use serde_json::Value;

/// Evaluate `path` on `obj`; every match, in order.
pub fn json_path(obj: &Value, path: &str) -> Vec<Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut cur = vec![obj.clone()];
    for seg in segments(path.trim_start_matches('.')) {
        let (name, index) = match seg.find('[') {
            Some(i) => (
                &seg[..i],
                Some(seg[i + 1..].strip_suffix(']').unwrap_or(&seg[i + 1..])),
            ),
            None => (seg, None),
        };
        let mut next = Vec::new();
        for v in cur {
            let v = if name.is_empty() {
                v
            } else {
                match v.get(name) {
                    Some(x) => x.clone(),
                    None => continue,
                }
            };
            match index {
                None => next.push(v),
                Some("*") => next.extend(v.as_array().cloned().unwrap_or_default()),
                Some(f) if f.starts_with("?(") => {
                    let items = v.as_array().cloned().unwrap_or_default();
                    next.extend(items.into_iter().filter(|x| matches(x, f)));
                }
                Some(i) => {
                    if let (Some(a), Ok(i)) = (v.as_array(), i.parse::<usize>()) {
                        if let Some(x) = a.get(i) {
                            next.push(x.clone());
                        }
                    }
                }
            }
        }
        cur = next;
    }
    cur
}

/// Split at the dots outside brackets (a filter's `@.type` stays in its segment).
fn segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in path.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => {
                if i > start {
                    out.push(&path[start..i]);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < path.len() {
        out.push(&path[start..]);
    }
    out
}

/// Does `item` pass the filter `?(@.a.b==value)` (also `!=`; value quoted, a number, or a
/// boolean)? A filter without an operator (`?(@.a)`) asks that the field exists.
fn matches(item: &Value, filter: &str) -> bool {
    let expr = filter.trim_start_matches("?(").trim_end_matches(')').trim();
    let (lhs, op, rhs) = match (expr.find("!="), expr.find("==")) {
        (Some(i), _) => (&expr[..i], "!=", &expr[i + 2..]),
        (None, Some(i)) => (&expr[..i], "==", &expr[i + 2..]),
        (None, None) => (expr, "", ""),
    };
    let Some(field) = lhs.trim().strip_prefix('@') else {
        return false;
    };
    let got = json_path(item, field).into_iter().next();
    if op.is_empty() {
        return got.is_some();
    }
    let rhs = rhs.trim();
    let want = match rhs.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(s) => Value::String(s.to_owned()),
        None => match rhs.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            Some(s) => Value::String(s.to_owned()),
            None => serde_json::from_str(rhs).unwrap_or(Value::String(rhs.to_owned())),
        },
    };
    (got.as_ref() == Some(&want)) == (op == "==")
}

#[cfg(test)]
mod tests;
