//! An update's custom resource against its CRD's schema, with kube-apiserver's validation
//! ratcheting (`CRDValidationRatcheting`, on by default since 1.30): a value that breaks the
//! schema or a rule is refused only where the update changes it, so an object stored before its
//! CRD grew stricter can still be updated elsewhere. Transition rules (`oldSelf`) never
//! ratchet. The object judged is the update's merged new object, so what a subresource write
//! does not change (the spec on `/status`, the status on the main resource) is the stored one.

use serde_json::Value;

use super::keywords::Causes;
use super::{rules, values};

/// The causes of `new` against `schema`, an update from `old`; `ruled` says whether the schema
/// has rules ([`rules::ruled`]). The defaults of what the update changes were filled in on
/// the request's body; the walk fills in any still missing.
pub fn causes(schema: &Value, ruled: bool, old: &Value, new: &mut Value) -> Causes {
    let mut causes = values::changed_causes(schema, new, old);
    let new = &*new;
    causes.extend(rules::check_if(
        ruled,
        schema,
        new,
        None,
        rules::Rules::Plain,
    ));
    causes.retain(|(field, _)| at(new, field) != at(old, field));
    causes.extend(rules::check_if(
        ruled,
        schema,
        new,
        Some(old),
        rules::Rules::Transitions,
    ));
    causes
}

/// The value at a cause's field path (`spec.items[1].name`, `spec.labels[key]`, `<nil>` for
/// the root), if there is one.
pub fn at<'a>(v: &'a Value, field: &str) -> Option<&'a Value> {
    if field == "<nil>" || field.is_empty() {
        return Some(v);
    }
    let mut cur = v;
    let mut rest = field;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']')?;
            let key = &inner[..end];
            cur = match cur {
                Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
                other => other.get(key)?,
            };
            rest = &inner[end + 1..];
        } else {
            let name = rest.strip_prefix('.').unwrap_or(rest);
            let end = name.find(['.', '[']).unwrap_or(name.len());
            cur = cur.get(&name[..end])?;
            rest = &name[end..];
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests;
