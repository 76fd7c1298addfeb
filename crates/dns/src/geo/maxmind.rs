//! Client regions from a MaxMind DB (GeoLite2/GeoIP2 Country or City), read with the `maxminddb`
//! crate once at load: every network of the database becomes a prefix line of the table, its
//! country (ISO code) or else its continent (code) mapped to a region. Queries then look up the
//! table as for lines of the file, so a database costs nothing per query.

use std::collections::HashMap;
use std::path::Path;

use ipnet::IpNet;
use maxminddb::{PathElement, Reader, WithinOptions};

use super::GeoTable;

/// How a database's places become regions (the `country` and `continent` lines of the file).
#[derive(Debug, Default)]
pub(super) struct RegionNames {
    /// Country ISO code (upper case) → region.
    pub(super) countries: HashMap<String, String>,
    /// Continent code (upper case) → region.
    pub(super) continents: HashMap<String, String>,
}

impl RegionNames {
    /// The region of a network: its country's, else its continent's; with no mapping lines at
    /// all, the country code itself (or the continent code) is the region.
    fn region(&self, country: Option<&str>, continent: Option<&str>) -> Option<String> {
        if self.countries.is_empty() && self.continents.is_empty() {
            return country.or(continent).map(str::to_string);
        }
        country
            .and_then(|c| self.countries.get(&c.to_ascii_uppercase()))
            .or_else(|| continent.and_then(|c| self.continents.get(&c.to_ascii_uppercase())))
            .cloned()
    }
}

/// Adds every network of the database at `path` whose place maps to a region.
pub(super) fn import(table: &mut GeoTable, path: &Path, names: &RegionNames) -> Result<(), String> {
    let reader = Reader::open_readfile(path).map_err(|e| e.to_string())?;
    let country_path = [PathElement::Key("country"), PathElement::Key("iso_code")];
    let continent_path = [PathElement::Key("continent"), PathElement::Key("code")];
    let networks = reader
        .networks(WithinOptions::default())
        .map_err(|e| e.to_string())?;
    for item in networks {
        let item = item.map_err(|e| e.to_string())?;
        let network = item.network().map_err(|e| e.to_string())?;
        let country: Option<String> = item.decode_path(&country_path).map_err(|e| e.to_string())?;
        let continent: Option<String> = item
            .decode_path(&continent_path)
            .map_err(|e| e.to_string())?;
        let Some(region) = names.region(country.as_deref(), continent.as_deref()) else {
            continue;
        };
        let net = IpNet::new(network.ip(), network.prefix()).map_err(|e| e.to_string())?;
        table.insert_absent(net, &region);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;
    use std::path::PathBuf;

    use super::*;

    /// A GeoIP2-Country-shaped database: 10.1/16 DE (EU), 10.2/16 FR (EU), 10.3/16 JP (AS),
    /// 2001:db8:1::/48 US (NA). Written with the `mmdb-writer` Python package.
    fn testdata() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn countries_then_continents_name_regions_and_file_lines_win() {
        let text = "maxmind geo-test.mmdb\n\
                    country DE eu-central\n\
                    continent EU eu-west\n\
                    continent AS ap\n\
                    10.3.7.0/24 ap-special\n\
                    10.3.0.0/16 ap-file\n\
                    distance eu-central eu-west 5\n";
        let geo = GeoTable::parse_in(text, &testdata()).unwrap();
        assert_eq!(geo.region_of(ip("10.1.2.3")), Some("eu-central"));
        assert_eq!(geo.region_of(ip("10.2.2.3")), Some("eu-west"));
        // the file's line for the same prefix wins over the database; a longer one too
        assert_eq!(geo.region_of(ip("10.3.2.3")), Some("ap-file"));
        assert_eq!(geo.region_of(ip("10.3.7.9")), Some("ap-special"));
        // no mapping line for US or NA: not placed
        assert_eq!(geo.region_of(ip("2001:db8:1::5")), None);
        assert_eq!(geo.region_of(ip("192.0.2.1")), None);
        assert_eq!(geo.distance("eu-west", "eu-central"), 5);
    }

    #[test]
    fn without_mapping_lines_the_country_is_the_region() {
        let geo = GeoTable::parse_in("maxmind geo-test.mmdb\n", &testdata()).unwrap();
        assert_eq!(geo.region_of(ip("10.1.0.1")), Some("DE"));
        assert_eq!(geo.region_of(ip("10.3.0.1")), Some("JP"));
        assert_eq!(geo.region_of(ip("2001:db8:1:2::1")), Some("US"));
        assert_eq!(geo.lookup(ip("10.2.0.0"), 24), Some(("FR", 16)));
    }

    #[test]
    fn a_missing_or_bad_database_names_its_line() {
        let err = GeoTable::parse_in("10.0.0.0/8 eu\nmaxmind nothere.mmdb\n", &testdata())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("nothere.mmdb"),
            "{err}"
        );
        let bad = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(bad.path(), b"not a maxmind database").unwrap();
        let text = format!("maxmind {}\n", bad.path().display());
        let err = GeoTable::parse(&text).unwrap_err().to_string();
        assert!(
            err.contains("line 1") && err.contains("MaxMind DB"),
            "{err}"
        );
    }
}
