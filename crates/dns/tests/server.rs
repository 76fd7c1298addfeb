//! The real server on 127.0.0.1:0, asked over UDP and TCP with hickory-proto messages and with kdig.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use flotilla_dns::fleet::{Endpoint, Fleet, FleetService, Strategy, Verdict};
use flotilla_dns::geo::GeoTable;
use flotilla_dns::server::Server;
use flotilla_dns::snapshot::{Snapshot, SnapshotHandle, SnapshotOptions};
use hickory_proto::op::{Message, Query, ResponseCode};
use hickory_proto::rr::{Name, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ZONE: &str = "fleet.test";

fn fleet(count: usize, verdict: Verdict) -> Fleet {
    let endpoints = (1..=count)
        .map(|i| Endpoint {
            cluster: format!("m{}", i % 3),
            region: Some("eu".into()),
            address: format!("127.0.{}.{}", i / 250, i % 250 + 1)
                .parse()
                .unwrap(),
            verdict,
            cluster_ip: None,
        })
        .collect();
    Fleet {
        clusters: vec![],
        services: vec![FleetService {
            namespace: "shop".into(),
            name: "web".into(),
            ttl: 30,
            strategy: Strategy::RoundRobin,
            ports: vec![],
            endpoints,
        }],
    }
}

fn build(fleet: &Fleet) -> Snapshot {
    Snapshot::build(
        ZONE,
        fleet,
        &GeoTable::default(),
        &SnapshotOptions::default(),
    )
    .unwrap()
}

fn udp_ask(addr: SocketAddr, name: &str, rtype: RecordType) -> Message {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut query = Message::query();
    query.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    socket.send_to(&query.to_vec().unwrap(), addr).unwrap();
    let mut buf = [0u8; 4096];
    let (len, _) = socket.recv_from(&mut buf).expect("a UDP answer");
    let response = Message::from_vec(&buf[..len]).unwrap();
    assert_eq!(response.metadata.id, query.metadata.id);
    response
}

async fn tcp_ask(addr: SocketAddr, name: &str, rtype: RecordType) -> Message {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut query = Message::query();
    query.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    let bytes = query.to_vec().unwrap();
    stream
        .write_all(&(bytes.len() as u16).to_be_bytes())
        .await
        .unwrap();
    stream.write_all(&bytes).await.unwrap();
    let mut len = [0u8; 2];
    stream.read_exact(&mut len).await.unwrap();
    let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
    stream.read_exact(&mut buf).await.unwrap();
    Message::from_vec(&buf).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_udp_and_tcp_and_sees_new_snapshots() {
    let handle = SnapshotHandle::new(Snapshot::empty(ZONE).unwrap());
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), handle.clone()).unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    let metrics = server.metrics();
    let task = tokio::spawn(server.run());

    // before the first fleet: the apex answers, the service does not exist yet
    let name = "web.shop.fleet.test.";
    let soa = tokio::task::spawn_blocking(move || udp_ask(addr, "fleet.test.", RecordType::SOA));
    assert_eq!(soa.await.unwrap().answers.len(), 1);
    let missing = tokio::task::spawn_blocking(move || udp_ask(addr, name, RecordType::A));
    assert_eq!(
        missing.await.unwrap().metadata.response_code,
        ResponseCode::NXDomain
    );

    // a fleet too large for 512 bytes: UDP truncates, TCP answers whole
    handle.store(build(&fleet(40, Verdict::Healthy)));
    let udp = tokio::task::spawn_blocking(move || udp_ask(addr, name, RecordType::A))
        .await
        .unwrap();
    assert!(udp.metadata.truncation);
    let tcp = tcp_ask(addr, name, RecordType::A).await;
    assert_eq!(tcp.answers.len(), 40);
    assert!(!tcp.metadata.truncation);

    // a verdict change is in the next answer
    handle.store(build(&fleet(3, Verdict::Healthy)));
    let three = tokio::task::spawn_blocking(move || udp_ask(addr, name, RecordType::A))
        .await
        .unwrap();
    assert_eq!(three.answers.len(), 3);

    let outside = tokio::task::spawn_blocking(move || udp_ask(addr, "example.org.", RecordType::A));
    assert_eq!(
        outside.await.unwrap().metadata.response_code,
        ResponseCode::Refused
    );

    kdig(addr);

    let counts = metrics.snapshot();
    assert!(counts.udp_queries >= 5, "{counts:?}");
    assert_eq!(counts.tcp_queries, 2, "ours and kdig +tcp: {counts:?}");
    assert!(
        counts.nxdomain >= 1 && counts.refused >= 1 && counts.truncated >= 1,
        "{counts:?}"
    );
    task.abort();
}

/// kdig (knot-dnsutils) as an independent client: plain UDP, EDNS with Client Subnet, and TCP.
fn kdig(addr: SocketAddr) {
    let run = |args: &[&str]| {
        let output = std::process::Command::new("kdig")
            .arg(format!("@{}", addr.ip()))
            .arg("-p")
            .arg(addr.port().to_string())
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("kdig not runnable ({e}): apt-get install knot-dnsutils"));
        assert!(output.status.success(), "kdig {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let plain = run(&["+short", "WEB.shop.fleet.test", "A"]);
    let mut got: Vec<&str> = plain.lines().collect();
    got.sort();
    assert_eq!(got, ["127.0.0.2", "127.0.0.3", "127.0.0.4"], "{plain}");
    let ecs = run(&["+subnet=192.0.2.0/24", "web.shop.fleet.test", "A"]);
    assert!(ecs.contains("CLIENT-SUBNET: 192.0.2.0/24/0"), "{ecs}");
    assert!(
        ecs.contains("status: NOERROR") && ecs.contains("Flags: qr aa"),
        "{ecs}"
    );
    let tcp = run(&["+tcp", "nope.shop.fleet.test", "A"]);
    assert!(tcp.contains("status: NXDOMAIN"), "{tcp}");
    let nodata = run(&["shop.fleet.test", "A"]);
    assert!(
        nodata.contains("status: NOERROR") && nodata.contains("AUTHORITY SECTION"),
        "{nodata}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_several_zones_on_the_same_sockets() {
    use flotilla_dns::zones::Zones;
    let fleet_zone = SnapshotHandle::new(build(&fleet(3, Verdict::Healthy)));
    let clusterset = SnapshotHandle::new(Snapshot::empty("clusterset.local").unwrap());
    let zones = Zones::new([fleet_zone, clusterset.clone()]).unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), zones).unwrap();
    let addr = server.local_addr();
    let task = tokio::spawn(server.run());

    for zone in ["fleet.test.", "clusterset.local."] {
        let soa = tokio::task::spawn_blocking(move || udp_ask(addr, zone, RecordType::SOA))
            .await
            .unwrap();
        assert_eq!(soa.answers.len(), 1, "{zone}");
        assert_eq!(soa.answers[0].name.to_ascii(), zone);
    }
    let name = "db.shop.svc.clusterset.local.";
    assert_eq!(
        tcp_ask(addr, name, RecordType::A)
            .await
            .metadata
            .response_code,
        ResponseCode::NXDomain
    );
    // a snapshot swapped into one zone's handle is answered; the other zone is untouched
    let options = SnapshotOptions {
        service_suffix: Some("svc".into()),
        scoped_names: false,
        ..SnapshotOptions::default()
    };
    let mut db = fleet(2, Verdict::Healthy);
    db.services[0].name = "db".into();
    clusterset
        .store(Snapshot::build("clusterset.local", &db, &GeoTable::default(), &options).unwrap());
    assert_eq!(tcp_ask(addr, name, RecordType::A).await.answers.len(), 2);
    let web =
        tokio::task::spawn_blocking(move || udp_ask(addr, "web.shop.fleet.test.", RecordType::A));
    assert_eq!(web.await.unwrap().answers.len(), 3);
    let outside = tokio::task::spawn_blocking(move || udp_ask(addr, "local.", RecordType::SOA));
    assert_eq!(
        outside.await.unwrap().metadata.response_code,
        ResponseCode::Refused
    );
    task.abort();
}
