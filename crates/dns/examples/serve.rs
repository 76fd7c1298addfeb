//! Serves a static fleet file: `cargo run --release -p flotilla-dns --example serve -- ADDR ZONE FLEET.json`
//! (handy for dnsperf/kdig by hand; the product wires the server into `flotilla serve` and `flotilla dns`).

use flotilla_dns::fleet::Fleet;
use flotilla_dns::geo::GeoTable;
use flotilla_dns::server::Server;
use flotilla_dns::snapshot::{Snapshot, SnapshotHandle, SnapshotOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, zone, file] = args.as_slice() else {
        return Err("usage: serve ADDR ZONE FLEET.json".into());
    };
    let fleet: Fleet = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    let snapshot = Snapshot::build(
        zone,
        &fleet,
        &GeoTable::default(),
        &SnapshotOptions::default(),
    )?;
    let server = Server::bind(addr.parse()?, SnapshotHandle::new(snapshot))?;
    eprintln!("serving {zone} on {}", server.local_addr());
    server.run().await?;
    Ok(())
}
