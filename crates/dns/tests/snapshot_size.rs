//! The snapshot of 10,000 services × 3 endpoints stays small (the target is ≤ 50 MB for the
//! whole DNS process): heap bytes counted by a wrapping allocator around the build.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use flotilla_dns::fleet::{
    ClusterInfo, Endpoint, Fleet, FleetService, ServicePort, Strategy, Verdict,
};
use flotilla_dns::geo::GeoTable;
use flotilla_dns::snapshot::{Snapshot, SnapshotOptions};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn ten_thousand_services_fit_under_thirty_mebibytes() {
    let regions = ["eu-west", "us-east", "ap-south"];
    let clusters: Vec<ClusterInfo> = (0..3)
        .map(|i| ClusterInfo {
            name: format!("member-{i}"),
            region: Some(regions[i].into()),
            networks: vec![format!("10.{i}.0.0/16").parse().unwrap()],
        })
        .collect();
    let services = (0..10_000u32)
        .map(|s| FleetService {
            namespace: format!("team-{}", s % 50),
            name: format!("service-{s}"),
            ttl: 30,
            strategy: if s % 2 == 0 {
                Strategy::RoundRobin
            } else {
                Strategy::Geo
            },
            ports: vec![ServicePort {
                name: "http".into(),
                protocol: "TCP".into(),
                port: 80,
            }],
            endpoints: (0..3)
                .map(|i| Endpoint {
                    cluster: format!("member-{i}"),
                    region: Some(regions[i].into()),
                    address: format!("100.{}.{}.{}", 64 + i, s / 250, s % 250)
                        .parse()
                        .unwrap(),
                    verdict: Verdict::Healthy,
                    cluster_ip: Some(format!("10.96.{}.{}", s / 250, s % 250).parse().unwrap()),
                })
                .collect(),
        })
        .collect();
    let fleet = Fleet { clusters, services };
    let geo = GeoTable::parse(
        "100.64.0.0/16 eu-west\n100.65.0.0/16 us-east\n100.66.0.0/16 ap-south\n\
         distance eu-west us-east 80\ndistance us-east ap-south 120\ndistance eu-west ap-south 90\n",
    )
    .unwrap();
    let before = LIVE.load(Ordering::Relaxed);
    let snapshot =
        Snapshot::build("fleet.example", &fleet, &geo, &SnapshotOptions::default()).unwrap();
    let bytes = LIVE.load(Ordering::Relaxed) - before;
    // global, 3 regional, 3 cluster and 1 SRV name per service, and their empty non-terminals
    assert!(
        snapshot.name_count() > 80_000,
        "{} names",
        snapshot.name_count()
    );
    let mb = bytes as f64 / (1024.0 * 1024.0);
    println!(
        "snapshot of 10,000 services × 3 endpoints: {mb:.1} MiB, {} names",
        snapshot.name_count()
    );
    assert!(mb < 30.0, "snapshot takes {mb:.1} MiB");
    drop(snapshot);
}
