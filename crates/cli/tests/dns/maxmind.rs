//! Without members: `flotilla dns --geo-file` with a MaxMind DB places clients by their EDNS
//! Client Subnet for the Geo strategy, its countries and continents mapped to regions.

use std::net::IpAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::fleet_file::{dns_args, start_dns};
use crate::kdig::ask;
use flotilla_dns::fleet::{ClusterInfo, Endpoint, Fleet, FleetService, Strategy, Verdict};

/// Clusters, their regions and their endpoints' addresses.
const CLUSTERS: [(&str, &str, &str); 3] = [
    ("de-1", "eu-central", "192.0.2.1"),
    ("fr-1", "eu-west", "192.0.2.2"),
    ("jp-1", "ap", "192.0.2.3"),
];

/// The database (10.1/16 DE, 10.2/16 FR, 10.3/16 JP, 2001:db8:1::/48 US) by a relative path,
/// countries and continents mapped to the clusters' regions.
const GEO: &str = "maxmind geo-test.mmdb\n\
                   country DE eu-central\n\
                   continent EU eu-west\n\
                   continent AS ap\n\
                   country US us\n\
                   distance us eu-west 3\n\
                   distance us eu-central 5\n\
                   distance us ap 9\n";

fn fleet() -> Fleet {
    Fleet {
        clusters: CLUSTERS
            .iter()
            .map(|(name, region, _)| ClusterInfo {
                name: name.to_string(),
                region: Some(region.to_string()),
                networks: Vec::new(),
            })
            .collect(),
        services: vec![FleetService {
            namespace: "shop".into(),
            name: "cart".into(),
            ttl: 30,
            strategy: Strategy::Geo,
            ports: Vec::new(),
            endpoints: CLUSTERS
                .iter()
                .map(|(name, region, ip)| Endpoint {
                    cluster: name.to_string(),
                    region: Some(region.to_string()),
                    address: ip.parse::<IpAddr>().expect("ip"),
                    verdict: Verdict::Healthy,
                    cluster_ip: None,
                })
                .collect(),
        }],
    }
}

fn from(port: u16, subnet: &str) -> Vec<String> {
    ask(
        port,
        "cart.shop.geo.test",
        "A",
        &[&format!("+subnet={subnet}")],
    )
    .map(|r| r.ips())
    .unwrap_or_default()
}

#[test]
fn a_maxmind_geo_file_places_clients() {
    crate::kdig::require_kdig();
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dns/testdata/geo-test.mmdb");
    std::fs::copy(&db, dir.path().join("geo-test.mmdb")).expect("copy the test database");
    let geo = dir.path().join("geo.txt");
    std::fs::write(&geo, GEO).expect("write the geo file");
    let file = dir.path().join("fleet.json");
    std::fs::write(&file, serde_json::to_vec(&fleet()).expect("JSON")).expect("write fleet");
    let port = crate::backends::free_dns_port();
    let args = dns_args(
        &file,
        port,
        "geo.test",
        &["--geo-file".as_ref(), geo.as_os_str()],
    );
    let mut dns = start_dns(dir.path(), &args);
    let deadline = Instant::now() + Duration::from_secs(10);
    while from(port, "10.1.0.0/24").is_empty() {
        dns.check_alive().expect("flotilla dns running");
        assert!(Instant::now() < deadline, "flotilla dns never answered");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Germany → eu-central by its country; France → eu-west by its continent; Japan → ap.
    assert_eq!(from(port, "10.1.0.0/24"), ["192.0.2.1"]);
    assert_eq!(from(port, "10.2.0.0/24"), ["192.0.2.2"]);
    assert_eq!(from(port, "10.3.0.0/24"), ["192.0.2.3"]);
    // The US has no cluster: the nearest region by the file's distances.
    assert_eq!(from(port, "2001:db8:1::/56"), ["192.0.2.2"]);
    dns.stop().expect("stops on SIGTERM");

    // A database that cannot be read stops the start with one line naming it.
    std::fs::write(&geo, "maxmind missing.mmdb\n").expect("write the geo file");
    let out = std::process::Command::new(crate::common::FLOTILLA)
        .args(&args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("run flotilla dns");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.mmdb"), "{err}");
}
