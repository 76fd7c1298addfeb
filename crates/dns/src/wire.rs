//! Hand-written DNS wire encoding shared by the snapshot builder and the responder.
//!
//! Records are stored without their owner name: `TYPE CLASS TTL RDLENGTH RDATA`. The responder writes
//! a two-byte compression pointer in front of each (to the question name, the zone apex inside it, or
//! a CNAME target), so one encoded record serves every query whatever the case of its name.

use std::net::IpAddr;

use crate::{Error, Result};

pub(crate) const TYPE_A: u16 = 1;
pub(crate) const TYPE_NS: u16 = 2;
pub(crate) const TYPE_CNAME: u16 = 5;
pub(crate) const TYPE_SOA: u16 = 6;
pub(crate) const TYPE_AAAA: u16 = 28;
pub(crate) const TYPE_SRV: u16 = 33;
pub(crate) const TYPE_OPT: u16 = 41;
pub(crate) const TYPE_ANY: u16 = 255;
pub(crate) const CLASS_IN: u16 = 1;
pub(crate) const CLASS_ANY: u16 = 255;

/// Our EDNS UDP payload size (the DNS flag day 2020 figure).
pub(crate) const EDNS_PAYLOAD: u16 = 1232;
/// EDNS option code of Client Subnet (RFC 7871).
pub(crate) const OPTION_ECS: u16 = 8;

/// Wire form of a dotted name, lowercased (`"Web.NS.example."` → `\x03web\x02ns\x07example\x00`).
pub(crate) fn name_to_wire(name: &str) -> Result<Vec<u8>> {
    let invalid = |message: &str| Error::InvalidName {
        name: name.to_string(),
        message: message.into(),
    };
    let trimmed = name.strip_suffix('.').unwrap_or(name);
    let mut out = Vec::with_capacity(trimmed.len() + 2);
    if !trimmed.is_empty() {
        for label in trimmed.split('.') {
            if label.is_empty() {
                return Err(invalid("empty label"));
            }
            if label.len() > 63 {
                return Err(invalid("label longer than 63 bytes"));
            }
            out.push(label.len() as u8);
            out.extend(label.bytes().map(|b| b.to_ascii_lowercase()));
        }
    }
    out.push(0);
    if out.len() > 255 {
        return Err(invalid("name longer than 255 bytes"));
    }
    Ok(out)
}

/// Checks one label built from the fleet (no dots, 1..=63 bytes).
pub(crate) fn check_label(label: &str) -> Result<()> {
    if label.is_empty() || label.len() > 63 || label.contains('.') {
        return Err(Error::InvalidName {
            name: label.to_string(),
            message: "not a single DNS label of 1 to 63 bytes".into(),
        });
    }
    Ok(())
}

/// A record without its owner: `TYPE CLASS TTL RDLENGTH RDATA`.
pub(crate) fn record(rtype: u16, ttl: u32, rdata: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(10 + rdata.len());
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    out.extend_from_slice(&ttl.to_be_bytes());
    out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
    out.extend_from_slice(rdata);
    out
}

/// An A or AAAA record of an address.
pub(crate) fn address_record(ip: IpAddr, ttl: u32) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => record(TYPE_A, ttl, &v4.octets()),
        IpAddr::V6(v6) => record(TYPE_AAAA, ttl, &v6.octets()),
    }
}

/// Whether the lowercased wire name `name` is `zone` or below it; the offset of the zone suffix.
#[inline]
pub(crate) fn zone_offset(name: &[u8], zone: &[u8]) -> Option<usize> {
    if name.len() < zone.len() {
        return None;
    }
    let target = name.len() - zone.len();
    let mut pos = 0;
    while pos < target {
        pos += 1 + name[pos] as usize;
    }
    (pos == target && &name[pos..] == zone).then_some(pos)
}

/// Dotted text of a wire name, for logs and errors.
pub(crate) fn wire_to_text(name: &[u8]) -> String {
    let mut out = String::new();
    let mut pos = 0;
    while pos < name.len() && name[pos] != 0 {
        let len = name[pos] as usize;
        let end = (pos + 1 + len).min(name.len());
        out.push_str(&String::from_utf8_lossy(&name[pos + 1..end]));
        out.push('.');
        pos = end;
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_encode_lowercased_and_zone_suffix_needs_a_label_boundary() {
        let zone = name_to_wire("Example.COM.").unwrap();
        assert_eq!(zone, b"\x07example\x03com\x00");
        let name = name_to_wire("web.ns.example.com").unwrap();
        assert_eq!(zone_offset(&name, &zone), Some(7));
        assert_eq!(zone_offset(&zone, &zone), Some(0));
        assert_eq!(zone_offset(b"\x03com\x00", &zone), None);
        // "xexample.com" ends with the zone's bytes but not at a label boundary
        let tricky = name_to_wire("a.xexample.com").unwrap();
        assert_eq!(zone_offset(&tricky, &zone), None);
        assert_eq!(wire_to_text(&name), "web.ns.example.com.");
        assert!(name_to_wire("a..b").is_err());
        assert!(name_to_wire(&"a".repeat(64)).is_err());
        assert_eq!(name_to_wire(".").unwrap(), b"\x00");
    }
}
