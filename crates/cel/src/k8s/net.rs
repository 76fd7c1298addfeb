//! Kubernetes' URL, IP and CIDR libraries: `url(s)` (an absolute URI or an absolute path, as
//! Go's `url.ParseRequestURI` accepts) with its `getScheme`/`getHost`/`getHostname`/`getPort`/
//! `getEscapedPath`/`getQuery` accessors; `ip(s)`, `cidr(s)` (no zones, no IPv4-mapped IPv6)
//! with `family`, the `is…` address classes, `prefixLength`, `masked`, `containsIP` and
//! `containsCIDR` (of a value or a string).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use cel::objects::{Key, Map};
use cel::Value;

use super::{opaque, opaque_arg, string_arg};

/// A parsed URL's parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl cel::objects::Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

fn parse_url(s: &str) -> Result<Url, String> {
    let bad =
        |why: &str| format!("URL parse error during conversion from string: parse {s:?}: {why}");
    let no_fragment = s.split_once('#').map_or(s, |(u, _)| u);
    let (rest, query) = no_fragment.split_once('?').unwrap_or((no_fragment, ""));
    if rest.starts_with('/') {
        return Ok(Url {
            scheme: String::new(),
            host: String::new(),
            path: rest.to_owned(),
            query: query.to_owned(),
        });
    }
    let (scheme, after) = rest
        .split_once(':')
        .ok_or_else(|| bad("invalid URI for request"))?;
    let valid_scheme = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid_scheme {
        return Err(bad("missing protocol scheme"));
    }
    let (host, path) = match after.strip_prefix("//") {
        Some(authority) => {
            let (host, path) = match authority.find('/') {
                Some(i) => authority.split_at(i),
                None => (authority, ""),
            };
            // Userinfo is not part of the host.
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            (host.to_owned(), path.to_owned())
        }
        None => (String::new(), after.to_owned()),
    };
    Ok(Url {
        scheme: scheme.to_owned(),
        host,
        path,
        query: query.to_owned(),
    })
}

impl Url {
    fn hostname(&self) -> &str {
        if let Some(v6) = self.host.strip_prefix('[') {
            return v6.split_once(']').map_or(v6, |(h, _)| h);
        }
        self.host.rsplit_once(':').map_or(&self.host, |(h, _)| h)
    }

    fn port(&self) -> &str {
        let after = match self.host.rfind(']') {
            Some(i) => &self.host[i + 1..],
            None => &self.host,
        };
        after.rsplit_once(':').map_or("", |(_, p)| p)
    }
}

fn string(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}

fn url_arg(args: &[Value]) -> Result<&Url, String> {
    opaque_arg::<Url>(args, 0, "URL")
}

/// `url(s)`.
pub(super) fn url(args: &[Value]) -> Result<Value, String> {
    Ok(opaque(parse_url(string_arg(args, 0)?)?))
}

/// `isURL(s)`.
pub(super) fn is_url(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(parse_url(string_arg(args, 0)?).is_ok()))
}

/// `u.getScheme()`.
pub(super) fn get_scheme(args: &[Value]) -> Result<Value, String> {
    Ok(string(&url_arg(args)?.scheme))
}

/// `u.getHost()`: host and port, IPv6 in brackets.
pub(super) fn get_host(args: &[Value]) -> Result<Value, String> {
    Ok(string(&url_arg(args)?.host))
}

/// `u.getHostname()`: the host without port or brackets.
pub(super) fn get_hostname(args: &[Value]) -> Result<Value, String> {
    Ok(string(url_arg(args)?.hostname()))
}

/// `u.getPort()`.
pub(super) fn get_port(args: &[Value]) -> Result<Value, String> {
    Ok(string(url_arg(args)?.port()))
}

/// `u.getEscapedPath()`.
pub(super) fn get_escaped_path(args: &[Value]) -> Result<Value, String> {
    Ok(string(&url_arg(args)?.path))
}

/// `u.getQuery()`: each key's values, in order.
pub(super) fn get_query(args: &[Value]) -> Result<Value, String> {
    let mut map: HashMap<Key, Vec<Value>> = HashMap::new();
    for pair in url_arg(args)?
        .query
        .split(['&', ';'])
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        map.entry(Key::String(Arc::new(k.to_owned())))
            .or_default()
            .push(string(v));
    }
    let map: HashMap<Key, Value> = map
        .into_iter()
        .map(|(k, v)| (k, Value::List(Arc::new(v))))
        .collect();
    Ok(Value::Map(Map { map: Arc::new(map) }))
}

/// An IP address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ip(IpAddr);

impl cel::objects::Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

/// A network: an address and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr(IpAddr, u8);

impl cel::objects::Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        "net.CIDR"
    }
}

fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if s.contains('%') {
        return Err(format!("IP address {s:?} with zone value is not allowed"));
    }
    let addr: IpAddr = s
        .parse()
        .map_err(|e| format!("IP Address {s:?} parse error during conversion from string: {e}"))?;
    if let IpAddr::V6(v6) = addr {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
        }
    }
    Ok(addr)
}

fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let bad = || {
        format!("network address parse error during conversion from string: netip.ParsePrefix({s:?}): bad prefix")
    };
    let (addr, bits) = s.split_once('/').ok_or_else(bad)?;
    let addr = parse_ip(addr).map_err(|_| bad())?;
    let bits: u8 = bits.parse().map_err(|_| bad())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if bits > max {
        return Err(bad());
    }
    Ok(Cidr(addr, bits))
}

fn bits_of(a: IpAddr) -> (u128, u32) {
    match a {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

fn mask(a: IpAddr, prefix: u8) -> IpAddr {
    let (v, width) = bits_of(a);
    let keep = u32::from(prefix);
    let m = if keep == 0 {
        0
    } else {
        u128::MAX << (width - keep)
    };
    let masked = v
        & m
        & if width == 32 {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
    match a {
        IpAddr::V4(_) => IpAddr::V4((masked as u32).into()),
        IpAddr::V6(_) => IpAddr::V6(masked.into()),
    }
}

fn ip_of(args: &[Value], i: usize) -> Result<IpAddr, String> {
    match args.get(i) {
        Some(Value::String(s)) => parse_ip(s),
        _ => Ok(opaque_arg::<Ip>(args, i, "IP")?.0),
    }
}

fn cidr_of(args: &[Value], i: usize) -> Result<Cidr, String> {
    match args.get(i) {
        Some(Value::String(s)) => parse_cidr(s),
        _ => opaque_arg::<Cidr>(args, i, "CIDR").copied(),
    }
}

/// `ip(s)`.
pub(super) fn ip(args: &[Value]) -> Result<Value, String> {
    Ok(opaque(Ip(parse_ip(string_arg(args, 0)?)?)))
}

/// `isIP(s)`.
pub(super) fn is_ip(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(parse_ip(string_arg(args, 0)?).is_ok()))
}

/// `ip.isCanonical(s)`: `s` is the address as it is written canonically.
pub(super) fn is_canonical(args: &[Value]) -> Result<Value, String> {
    let s = string_arg(args, 0)?;
    Ok(Value::Bool(parse_ip(s)?.to_string() == s))
}

/// `cidr(s)`.
pub(super) fn cidr(args: &[Value]) -> Result<Value, String> {
    Ok(opaque(parse_cidr(string_arg(args, 0)?)?))
}

/// `isCIDR(s)`.
pub(super) fn is_cidr(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(parse_cidr(string_arg(args, 0)?).is_ok()))
}

/// `ip.family()`: 4 or 6.
pub(super) fn family(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Int(if ip_of(args, 0)?.is_ipv4() { 4 } else { 6 }))
}

/// `ip.isUnspecified()`.
pub(super) fn is_unspecified(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(ip_of(args, 0)?.is_unspecified()))
}

/// `ip.isLoopback()`.
pub(super) fn is_loopback(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(ip_of(args, 0)?.is_loopback()))
}

/// `ip.isLinkLocalMulticast()`: 224.0.0.0/24, ff02::/16.
pub(super) fn is_link_local_multicast(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(match ip_of(args, 0)? {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }))
}

/// `ip.isLinkLocalUnicast()`: 169.254.0.0/16, fe80::/10.
pub(super) fn is_link_local_unicast(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(match ip_of(args, 0)? {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }))
}

/// `ip.isGlobalUnicast()`: as Go's `netip.Addr.IsGlobalUnicast`.
pub(super) fn is_global_unicast(args: &[Value]) -> Result<Value, String> {
    let a = ip_of(args, 0)?;
    let link_local = is_link_local_unicast(args)? == Value::Bool(true);
    let special = match a {
        IpAddr::V4(v4) => v4.is_broadcast() || v4.is_multicast(),
        IpAddr::V6(v6) => v6.is_multicast(),
    };
    Ok(Value::Bool(
        !(a.is_unspecified() || a.is_loopback() || link_local || special),
    ))
}

/// `cidr.prefixLength()`.
pub(super) fn prefix_length(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Int(i64::from(cidr_of(args, 0)?.1)))
}

/// `cidr.masked()`: the network with its host bits cleared.
pub(super) fn masked(args: &[Value]) -> Result<Value, String> {
    let Cidr(a, p) = cidr_of(args, 0)?;
    Ok(opaque(Cidr(mask(a, p), p)))
}

/// `cidr.ip()`: its address.
pub(super) fn cidr_ip(args: &[Value]) -> Result<Value, String> {
    Ok(opaque(Ip(cidr_of(args, 0)?.0)))
}

/// `cidr.containsIP(ip or string)`.
pub(super) fn contains_ip(args: &[Value]) -> Result<Value, String> {
    let Cidr(net, p) = cidr_of(args, 0)?;
    let a = ip_of(args, 1)?;
    Ok(Value::Bool(
        net.is_ipv4() == a.is_ipv4() && mask(net, p) == mask(a, p),
    ))
}

/// `cidr.containsCIDR(cidr or string)`.
pub(super) fn contains_cidr(args: &[Value]) -> Result<Value, String> {
    let Cidr(net, p) = cidr_of(args, 0)?;
    let Cidr(other, q) = cidr_of(args, 1)?;
    Ok(Value::Bool(
        net.is_ipv4() == other.is_ipv4() && p <= q && mask(net, p) == mask(other, p),
    ))
}
