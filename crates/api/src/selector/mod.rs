//! Label and field selectors (interim implementation; the full library with Kubernetes'
//! validation rules replaces it).
#![allow(missing_docs)]

fn split_top(s: &str) -> Vec<String> {
    // Split on commas outside parentheses.
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c)
            }
            ')' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear()
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string())
    }
    out
}

pub mod label {
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum Req {
        Eq(String, String),
        Ne(String, String),
        In(String, Vec<String>),
        NotIn(String, Vec<String>),
        Exists(String),
        NotExists(String),
    }

    #[derive(Debug, Clone)]
    pub struct LabelSelector(Vec<Req>);

    impl LabelSelector {
        pub fn parse(s: &str) -> Result<Self, String> {
            let mut reqs = Vec::new();
            for part in super::split_top(s) {
                let p = part.as_str();
                let bad = || format!("unable to parse requirement: {p:?}");
                let r = if let Some((k, v)) = p.split_once("!=") {
                    Req::Ne(k.trim().into(), v.trim().into())
                } else if let Some((k, v)) = p.split_once("==") {
                    Req::Eq(k.trim().into(), v.trim().into())
                } else if let Some((k, v)) = p.split_once('=') {
                    Req::Eq(k.trim().into(), v.trim().into())
                } else if let Some(i) = p.find(" notin ") {
                    Req::NotIn(p[..i].trim().into(), set(&p[i + 7..]).ok_or_else(bad)?)
                } else if let Some(i) = p.find(" in ") {
                    Req::In(p[..i].trim().into(), set(&p[i + 4..]).ok_or_else(bad)?)
                } else if let Some(k) = p.strip_prefix('!') {
                    Req::NotExists(k.trim().into())
                } else if !p.is_empty() && !p.contains(' ') {
                    Req::Exists(p.into())
                } else {
                    return Err(bad());
                };
                reqs.push(r);
            }
            Ok(LabelSelector(reqs))
        }

        pub fn matches(&self, l: &BTreeMap<String, String>) -> bool {
            self.0.iter().all(|r| match r {
                Req::Eq(k, v) => l.get(k) == Some(v),
                Req::Ne(k, v) => l.get(k) != Some(v),
                Req::In(k, vs) => l.get(k).is_some_and(|x| vs.contains(x)),
                Req::NotIn(k, vs) => !l.get(k).is_some_and(|x| vs.contains(x)),
                Req::Exists(k) => l.contains_key(k),
                Req::NotExists(k) => !l.contains_key(k),
            })
        }
    }

    fn set(s: &str) -> Option<Vec<String>> {
        let s = s.trim().strip_prefix('(')?.strip_suffix(')')?;
        Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        )
    }
}

pub mod field {
    #[derive(Debug, Clone)]
    pub struct FieldSelector(Vec<(String, bool, String)>);

    impl FieldSelector {
        pub fn parse(s: &str) -> Result<Self, String> {
            let mut reqs = Vec::new();
            for p in super::split_top(s) {
                let (k, eq, v) = if let Some((k, v)) = p.split_once("!=") {
                    (k, false, v)
                } else if let Some((k, v)) = p.split_once("==") {
                    (k, true, v)
                } else if let Some((k, v)) = p.split_once('=') {
                    (k, true, v)
                } else {
                    return Err(format!("invalid selector: '{p}'; can't understand '{p}'"));
                };
                reqs.push((k.trim().to_string(), eq, v.trim().to_string()));
            }
            Ok(FieldSelector(reqs))
        }
        pub fn fields(&self) -> Vec<&str> {
            self.0.iter().map(|(k, _, _)| k.as_str()).collect()
        }
        pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
            self.0
                .iter()
                .all(|(k, eq, v)| (get(k).unwrap_or_default() == *v) == *eq)
        }
    }

    pub fn supported_fields(group: &str, kind: &str) -> &'static [&'static str] {
        match (group, kind) {
            ("", "Event") => &[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ],
            ("", "Secret") => &["type"],
            ("", "Namespace") => &["status.phase"],
            _ => &[],
        }
    }

    pub fn extract(v: &serde_json::Value, f: &str) -> Option<String> {
        let mut cur = v;
        for seg in f.split('.') {
            cur = cur.get(seg)?;
        }
        Some(match cur {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }
}
