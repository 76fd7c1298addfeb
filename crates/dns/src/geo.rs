//! Where clients are: a CIDR → region table and the distances between regions, for the `Geo` strategy.
//!
//! The file format is line based; `#` starts a comment:
//! ```text
//! 10.0.0.0/8      eu-west          # CIDR REGION
//! 2001:db8::/32   us-east
//! distance eu-west us-east 80      # distance REGION_A REGION_B N (symmetric)
//! ```
//! A region is at distance 0 from itself; a pair without a `distance` line is far ([`UNKNOWN_DISTANCE`]).
//!
//! A MaxMind DB (GeoLite2/GeoIP2 Country or City, `.mmdb`) can place clients too, its countries and
//! continents mapped to regions (see [`maxmind`]):
//! ```text
//! maxmind  /var/lib/GeoIP/GeoLite2-Country.mmdb     # relative paths: from the geo file's folder
//! country  DE  eu-central                            # country ISO code → region
//! continent EU eu-west                               # continent code → region (after countries)
//! ```
//! Lines of the file win over the database's networks of the same prefix; longer prefixes win.

mod maxmind;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use ipnet::IpNet;

use crate::{Error, Result};

/// Distance of two different regions without a `distance` line.
pub const UNKNOWN_DISTANCE: u32 = u32::MAX / 2;

/// CIDR → region, longest prefix first, and region distances.
#[derive(Clone, Debug, Default)]
pub struct GeoTable {
    regions: Vec<String>,
    /// (prefix length, masked address as u128 with the family in the key) → region index.
    v4: PrefixMap,
    v6: PrefixMap,
    distances: HashMap<(u32, u32), u32>,
}

#[derive(Clone, Debug, Default)]
struct PrefixMap {
    /// Prefix lengths present, longest first.
    lengths: Vec<u8>,
    map: HashMap<(u8, u128), u32>,
}

impl PrefixMap {
    fn lookup(&self, bits: u128, width: u8, limit: u8) -> Option<(u32, u8)> {
        self.lengths
            .iter()
            .filter(|&&len| len <= limit)
            .find_map(|&len| {
                self.map
                    .get(&(len, mask(bits, len, width)))
                    .map(|&region| (region, len))
            })
    }
}

/// Keeps the top `len` bits of a `width`-bit address stored in the low bits of a u128.
pub(crate) fn mask(bits: u128, len: u8, width: u8) -> u128 {
    if len == 0 {
        return 0;
    }
    let keep = u128::MAX << (width - len.min(width));
    bits & (keep & (u128::MAX >> (128 - width)))
}

pub(crate) fn ip_bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u32::from(v4) as u128, 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

impl GeoTable {
    /// Reads a geo file's text; `maxmind` paths are taken from the working directory.
    pub fn parse(text: &str) -> Result<GeoTable> {
        GeoTable::parse_in(text, Path::new("."))
    }

    /// Reads a geo file's text; relative `maxmind` paths are taken from `dir` (the file's folder).
    pub fn parse_in(text: &str, dir: &Path) -> Result<GeoTable> {
        let mut table = GeoTable::default();
        let mut databases: Vec<(usize, PathBuf)> = Vec::new();
        let mut names = maxmind::RegionNames::default();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = |message: String| Error::ParseGeo {
                line: index + 1,
                message,
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                ["maxmind", path] => databases.push((index + 1, dir.join(path))),
                ["country", code, region] => {
                    names
                        .countries
                        .insert(code.to_ascii_uppercase(), region.to_string());
                }
                ["continent", code, region] => {
                    names
                        .continents
                        .insert(code.to_ascii_uppercase(), region.to_string());
                }
                ["distance", a, b, n] => {
                    let n: u32 = n.parse().map_err(|e| err(format!("distance {n:?}: {e}")))?;
                    let (a, b) = (table.intern(a), table.intern(b));
                    table.distances.insert((a.min(b), a.max(b)), n);
                }
                [cidr, region] => {
                    let net: IpNet = cidr
                        .parse()
                        .or_else(|_| cidr.parse::<IpAddr>().map(IpNet::from))
                        .map_err(|e| err(format!("CIDR {cidr:?}: {e}")))?;
                    let region = table.intern(region);
                    let (bits, _) = ip_bits(net.network());
                    let map = if net.network().is_ipv4() {
                        &mut table.v4
                    } else {
                        &mut table.v6
                    };
                    let width = if net.network().is_ipv4() { 32 } else { 128 };
                    map.insert_width(net.prefix_len(), bits, region, width);
                }
                _ => {
                    return Err(err(format!(
                        "expected `CIDR REGION`, `distance REGION_A REGION_B N`, `maxmind FILE`, \
                         `country CODE REGION` or `continent CODE REGION`, got {line:?}"
                    )))
                }
            }
        }
        for (line, path) in databases {
            maxmind::import(&mut table, &path, &names).map_err(|message| Error::ParseGeo {
                line,
                message: format!("MaxMind DB {}: {message}", path.display()),
            })?;
        }
        Ok(table)
    }

    /// Adds `net` → `region` unless the table already has a line for exactly that prefix.
    fn insert_absent(&mut self, net: IpNet, region: &str) {
        let (bits, width) = ip_bits(net.network());
        let len = net.prefix_len();
        let map = if width == 32 { &self.v4 } else { &self.v6 };
        if map.map.contains_key(&(len, mask(bits, len, width))) {
            return;
        }
        let region = self.intern(region);
        let map = if width == 32 {
            &mut self.v4
        } else {
            &mut self.v6
        };
        map.insert_width(len, bits, region, width);
    }

    fn intern(&mut self, region: &str) -> u32 {
        match self.regions.iter().position(|r| r == region) {
            Some(i) => i as u32,
            None => {
                self.regions.push(region.to_string());
                (self.regions.len() - 1) as u32
            }
        }
    }

    /// Whether the table has no CIDR lines.
    pub fn is_empty(&self) -> bool {
        self.v4.map.is_empty() && self.v6.map.is_empty()
    }

    /// Region of an address: the longest matching prefix.
    pub fn region_of(&self, ip: IpAddr) -> Option<&str> {
        self.lookup(ip, 128).map(|(region, _)| region)
    }

    /// Region of a client subnet and the prefix length of the line that matched; only lines no
    /// longer than `limit` (the client subnet's own length) count.
    pub fn lookup(&self, ip: IpAddr, limit: u8) -> Option<(&str, u8)> {
        let (bits, width) = ip_bits(ip);
        let map = if width == 32 { &self.v4 } else { &self.v6 };
        map.lookup(bits, width, limit)
            .map(|(r, len)| (self.regions[r as usize].as_str(), len))
    }

    /// Region index (as in [`GeoTable::regions`]) and matched prefix length of a client subnet.
    pub(crate) fn lookup_index(&self, bits: u128, width: u8, limit: u8) -> Option<(u32, u8)> {
        let map = if width == 32 { &self.v4 } else { &self.v6 };
        map.lookup(bits, width, limit)
    }

    /// Distance between two regions: 0 for the same, the table's figure, else [`UNKNOWN_DISTANCE`].
    pub fn distance(&self, a: &str, b: &str) -> u32 {
        if a == b {
            return 0;
        }
        let index = |r: &str| self.regions.iter().position(|x| x == r).map(|i| i as u32);
        match (index(a), index(b)) {
            (Some(a), Some(b)) => self
                .distances
                .get(&(a.min(b), a.max(b)))
                .copied()
                .unwrap_or(UNKNOWN_DISTANCE),
            _ => UNKNOWN_DISTANCE,
        }
    }

    /// `candidates` ordered nearest first from `from` (ties by name, so the order is stable).
    pub fn nearest<'a>(&self, from: &str, candidates: &[&'a str]) -> Vec<&'a str> {
        let mut out = candidates.to_vec();
        out.sort_by(|a, b| (self.distance(from, a), *a).cmp(&(self.distance(from, b), *b)));
        out.dedup();
        out
    }

    /// Every region the table names.
    pub fn regions(&self) -> impl Iterator<Item = &str> {
        self.regions.iter().map(String::as_str)
    }
}

impl PrefixMap {
    fn insert_width(&mut self, len: u8, bits: u128, region: u32, width: u8) {
        if !self.lengths.contains(&len) {
            self.lengths.push(len);
            self.lengths.sort_unstable_by(|a, b| b.cmp(a));
        }
        self.map.insert((len, mask(bits, len, width)), region);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "
        # regions
        10.0.0.0/8        eu-west
        10.20.0.0/16      us-east   # more specific wins
        192.0.2.7         ap-south
        2001:db8::/32     us-east
        distance eu-west us-east 80
        distance us-east ap-south 120
        distance eu-west ap-south 60
    ";

    #[test]
    fn longest_prefix_wins() {
        let geo = GeoTable::parse(TABLE).unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(geo.region_of(ip("10.1.2.3")), Some("eu-west"));
        assert_eq!(geo.region_of(ip("10.20.2.3")), Some("us-east"));
        assert_eq!(geo.region_of(ip("192.0.2.7")), Some("ap-south"));
        assert_eq!(geo.region_of(ip("192.0.2.8")), None);
        assert_eq!(geo.region_of(ip("2001:db8::1")), Some("us-east"));
        assert_eq!(geo.region_of(ip("2001:db9::1")), None);
        // a /12 client subnet cannot be placed by the /16 line
        assert_eq!(geo.lookup(ip("10.20.0.0"), 12), Some(("eu-west", 8)));
        assert_eq!(geo.lookup(ip("10.20.0.0"), 24), Some(("us-east", 16)));
    }

    #[test]
    fn distances_are_symmetric_and_order_nearest_first() {
        let geo = GeoTable::parse(TABLE).unwrap();
        assert_eq!(geo.distance("us-east", "eu-west"), 80);
        assert_eq!(geo.distance("eu-west", "us-east"), 80);
        assert_eq!(geo.distance("eu-west", "eu-west"), 0);
        assert_eq!(geo.distance("eu-west", "mars"), UNKNOWN_DISTANCE);
        assert_eq!(
            geo.nearest("us-east", &["ap-south", "mars", "eu-west", "us-east"]),
            vec!["us-east", "eu-west", "ap-south", "mars"]
        );
    }

    #[test]
    fn bad_lines_name_their_number() {
        let err = GeoTable::parse("10.0.0.0/8 eu\nnot-a-cidr eu\n").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        let err = GeoTable::parse("distance a b far").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        assert!(GeoTable::parse("a b c").is_err());
        assert!(GeoTable::parse("").unwrap().is_empty());
    }
}
