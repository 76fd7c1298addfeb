//! `kdig` (knot-dnsutils), the DNS client the suite asks with, and its answers parsed.

use std::process::Command;

/// One DNS answer as kdig printed it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Reply {
    /// NOERROR, NXDOMAIN, REFUSED, …
    pub(crate) status: String,
    /// The answer section: (owner, type, data), owners lower case without the final dot.
    pub(crate) answer: Vec<Record>,
    /// The authority section.
    pub(crate) authority: Vec<Record>,
    /// Whether the reply came over TCP.
    pub(crate) tcp: bool,
    /// kdig's whole output, for failure messages.
    pub(crate) text: String,
}

/// One resource record of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) owner: String,
    pub(crate) ttl: u32,
    pub(crate) rtype: String,
    pub(crate) data: String,
}

impl Reply {
    /// The data of the answer's records of type `rtype`, in answer order.
    pub(crate) fn data(&self, rtype: &str) -> Vec<String> {
        self.answer
            .iter()
            .filter(|r| r.rtype == rtype)
            .map(|r| r.data.clone())
            .collect()
    }

    /// The A records, sorted.
    pub(crate) fn ips(&self) -> Vec<String> {
        let mut ips = self.data("A");
        ips.sort();
        ips
    }
}

/// Fails the test with the way to install kdig when it is absent.
pub(crate) fn require_kdig() {
    let found = Command::new("kdig").arg("-V").output().is_ok();
    assert!(
        found,
        "kdig is not installed: apt-get install knot-dnsutils (scripts/test does it when absent)"
    );
}

/// Asks `name` of type `rtype` at 127.0.0.1:`port`, with more kdig options (`+tcp`,
/// `+subnet=10.1.0.0/24`, `-b 127.0.0.5`); None when no reply came.
pub(crate) fn ask(port: u16, name: &str, rtype: &str, options: &[&str]) -> Option<Reply> {
    let out = Command::new("kdig")
        .arg("@127.0.0.1")
        .args(["-p", &port.to_string()])
        .args(["+time=1", "+retry=0", "+noidn"])
        .args(options)
        .args([name, rtype])
        .output()
        .expect("run kdig (apt-get install knot-dnsutils)");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    parse(&text)
}

/// Like [`ask`], but a missing reply fails the test.
pub(crate) fn must(port: u16, name: &str, rtype: &str, options: &[&str]) -> Reply {
    ask(port, name, rtype, options)
        .unwrap_or_else(|| panic!("no DNS reply from 127.0.0.1:{port} for {name} {rtype}"))
}

fn parse(text: &str) -> Option<Reply> {
    let status = text
        .lines()
        .find_map(|l| l.split_once("status: "))
        .map(|(_, rest)| rest.split(';').next().unwrap_or("").trim().to_owned())?;
    let mut reply = Reply {
        status,
        text: text.to_owned(),
        tcp: text
            .lines()
            .any(|l| l.starts_with(";; From") && l.contains("(TCP)")),
        ..Reply::default()
    };
    let mut section = "";
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix(";; ")
            .and_then(|l| l.strip_suffix(" SECTION:"))
        {
            section = if name == "ANSWER" {
                "answer"
            } else if name == "AUTHORITY" {
                "authority"
            } else {
                ""
            };
            continue;
        }
        if line.trim().is_empty() || line.starts_with(';') {
            if line.trim().is_empty() {
                section = "";
            }
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 5 {
            continue;
        }
        let record = Record {
            owner: fields[0].trim_end_matches('.').to_ascii_lowercase(),
            ttl: fields[1].parse().unwrap_or(0),
            rtype: fields[3].to_owned(),
            data: fields[4..].join(" ").trim_end_matches('.').to_owned(),
        };
        match section {
            "answer" => reply.answer.push(record),
            "authority" => reply.authority.push(record),
            _ => {}
        }
    }
    Some(reply)
}
