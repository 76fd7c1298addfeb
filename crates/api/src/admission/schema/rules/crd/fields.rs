//! The fields of an `x-kubernetes-validations` entry other than its expressions, checked as
//! kube-apiserver checks them before compiling anything: a rule is required, a message is not
//! blank nor over several lines (and is required when the rule is), a reason is one of the
//! four kube knows, and a `fieldPath` names a field the schema has.

use serde_json::Value;

use super::super::super::keywords::Causes;

const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

fn lines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The causes of `rule` (at `path`, in the schema node `s`); empty when its fields are fine.
pub(super) fn causes(s: &Value, rule: &Value, path: &str) -> Causes {
    let text = |k: &str| rule.get(k).and_then(Value::as_str).unwrap_or("");
    let mut out = Vec::new();
    let (r, msg) = (text("rule").trim(), text("message"));
    if r.is_empty() {
        out.push((
            format!("{path}.rule"),
            "Required value: rule is not specified".into(),
        ));
    } else if !msg.is_empty() && msg.trim().is_empty() {
        out.push((
            format!("{path}.message"),
            format!("Invalid value: {msg:?}: message must be non-empty if specified"),
        ));
    } else if lines(msg.trim()) {
        out.push((
            format!("{path}.message"),
            format!("Invalid value: {msg:?}: message must not contain line breaks"),
        ));
    } else if lines(r) && msg.trim().is_empty() {
        out.push((
            format!("{path}.message"),
            "Required value: message must be specified if rule contains line breaks".into(),
        ));
    }
    let expr = text("messageExpression");
    if !expr.is_empty() && expr.trim().is_empty() {
        out.push((
            format!("{path}.messageExpression"),
            "Required value: messageExpression must be non-empty if specified".into(),
        ));
    }
    if let Some(reason) = rule.get("reason").and_then(Value::as_str) {
        if !REASONS.contains(&reason) {
            let supported: Vec<String> = REASONS.iter().map(|r| format!("{r:?}")).collect();
            out.push((
                format!("{path}.reason"),
                format!(
                    "Unsupported value: {reason:?}: supported values: {}",
                    supported.join(", ")
                ),
            ));
        }
    }
    let fp = text("fieldPath");
    if !fp.is_empty() {
        let bad = |why: &str| {
            (
                format!("{path}.fieldPath"),
                format!("Invalid value: {fp:?}: {why}"),
            )
        };
        if fp.trim().is_empty() {
            out.push(bad("fieldPath must be non-empty if specified"));
        } else if lines(fp) {
            out.push(bad("fieldPath must not contain line breaks"));
        } else if !valid_path(s, fp.trim()) {
            out.push(bad("fieldPath must be a valid path"));
        }
    }
    out
}

/// One step of a field path: `.name`, `['name']` or `[index]`.
enum Step {
    Field(String),
    Index,
}

fn steps(path: &str) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out.push(Step::Field(r[..end].to_owned()));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            r[..end].parse::<usize>().ok()?;
            out.push(Step::Index);
            rest = &r[end + 1..];
        } else {
            let r = rest.strip_prefix('.').unwrap_or(rest);
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            out.push(Step::Field(r[..end].to_owned()));
            rest = &r[end..];
        }
    }
    Some(out)
}

/// Does `path` (`.spec.items[0].name`, `spec['a.b']`) lead to a field of `schema`?
fn valid_path(schema: &Value, path: &str) -> bool {
    let Some(steps) = steps(path) else {
        return false;
    };
    let mut node = schema;
    for step in steps {
        node = match step {
            Step::Field(f) => {
                let declared = node.get("properties").and_then(|p| p.get(&f));
                match declared
                    .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
                {
                    Some(n) => n,
                    None => return false,
                }
            }
            Step::Index => match node.get("items") {
                Some(n) => n,
                None => return false,
            },
        };
    }
    true
}
