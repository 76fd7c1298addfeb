//! Answers checked through hickory-proto: queries built and responses read by a real DNS library.

use std::net::IpAddr;

use hickory_proto::op::{Edns, Message, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::opt::{ClientSubnet, EdnsCode, EdnsOption};
use hickory_proto::rr::{Name, RData, RecordType};

use super::{rcode, respond, Answers, Worker};
use crate::fleet::{
    ClusterInfo, Endpoint, Fleet, FleetService, ServicePort, Strategy, Verdict, Weight,
};
use crate::geo::GeoTable;
use crate::snapshot::{Snapshot, SnapshotOptions};

const ZONE: &str = "fleet.example";
const OUTSIDE: &str = "203.0.113.9";

fn ep(cluster: &str, region: &str, address: &str, verdict: Verdict) -> Endpoint {
    Endpoint {
        cluster: cluster.into(),
        region: Some(region.into()),
        address: address.parse().unwrap(),
        verdict,
        cluster_ip: None,
    }
}

fn service(name: &str, strategy: Strategy, endpoints: Vec<Endpoint>) -> FleetService {
    FleetService {
        namespace: "shop".into(),
        name: name.into(),
        ttl: 30,
        strategy,
        ports: vec![
            ServicePort {
                name: "http".into(),
                protocol: "TCP".into(),
                port: 80,
            },
            ServicePort {
                name: String::new(),
                protocol: "TCP".into(),
                port: 443,
            },
        ],
        endpoints,
    }
}

fn clusters() -> Vec<ClusterInfo> {
    vec![
        ClusterInfo {
            name: "a".into(),
            region: Some("eu".into()),
            networks: vec!["10.1.0.0/16".parse().unwrap()],
        },
        ClusterInfo {
            name: "b".into(),
            region: Some("eu".into()),
            networks: vec![],
        },
        ClusterInfo {
            name: "c".into(),
            region: Some("us".into()),
            networks: vec![],
        },
    ]
}

fn three(verdicts: [Verdict; 3]) -> Vec<Endpoint> {
    let mut a = ep("a", "eu", "192.0.2.1", verdicts[0]);
    a.cluster_ip = Some("10.96.0.1".parse().unwrap());
    vec![
        a,
        ep("b", "eu", "192.0.2.2", verdicts[1]),
        ep("c", "us", "198.51.100.3", verdicts[2]),
    ]
}

const HEALTHY: [Verdict; 3] = [Verdict::Healthy, Verdict::Unknown, Verdict::Healthy];

fn snapshot(services: Vec<FleetService>, geo: &str) -> Snapshot {
    let fleet = Fleet {
        clusters: clusters(),
        services,
    };
    let options = SnapshotOptions {
        ns_addresses: vec!["192.0.2.53".parse().unwrap()],
        ..SnapshotOptions::default()
    };
    Snapshot::build(ZONE, &fleet, &GeoTable::parse(geo).unwrap(), &options).unwrap()
}

fn query(name: &str, rtype: RecordType, edns: Option<Edns>) -> Message {
    let mut message = Message::query();
    message.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    message.metadata.recursion_desired = true;
    if let Some(edns) = edns {
        message.set_edns(edns);
    }
    message
}

fn send(snapshot: &(impl Answers + ?Sized), message: &Message, source: &str, tcp: bool) -> Message {
    let packet = message.to_vec().unwrap();
    let mut worker = Worker::new();
    respond(snapshot, &packet, source.parse().unwrap(), tcp, &mut worker).expect("an answer");
    let response = Message::from_vec(&worker.out).unwrap();
    assert_eq!(response.metadata.id, message.metadata.id);
    assert!(!response.metadata.recursion_available);
    response
}

fn ask(snapshot: &(impl Answers + ?Sized), name: &str, rtype: RecordType, source: &str) -> Message {
    send(snapshot, &query(name, rtype, None), source, false)
}

fn ecs(addr: &str, prefix: u8) -> Edns {
    let mut edns = Edns::new();
    edns.set_max_payload(1232);
    let subnet = ClientSubnet::new(addr.parse().unwrap(), prefix, 0);
    edns.options_mut().insert(EdnsOption::Subnet(subnet));
    edns
}

fn addresses(message: &Message) -> Vec<String> {
    message
        .answers
        .iter()
        .filter_map(|r| r.data.ip_addr())
        .map(|ip: IpAddr| ip.to_string())
        .collect()
}

fn echoed_scope(message: &Message) -> u8 {
    match message
        .edns
        .as_ref()
        .and_then(|e| e.option(EdnsCode::Subnet))
    {
        Some(EdnsOption::Subnet(subnet)) => subnet.scope_prefix(),
        other => panic!("no ECS echoed: {other:?}"),
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

mod names;
mod strategies;
mod wire;
mod zones;
