//! A minimal DNS client over UDP (wire format by hickory-proto): ask a server for the A records
//! of a name. The benchmark uses it to check that both servers answer the same records before
//! it measures them, and to watch flotilla's answers change after a verdict does.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use hickory_proto::op::{Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RData, RecordType};
use tokio::net::UdpSocket;

/// A server's answer to an A query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The response code, e.g. `No Error`.
    pub rcode: String,
    /// The addresses of the answer section's A records.
    pub addresses: BTreeSet<IpAddr>,
}

/// A UDP socket to ask from, reused across questions.
pub struct Prober {
    socket: UdpSocket,
    next_id: u16,
}

impl Prober {
    /// A socket on 127.0.0.1.
    pub async fn new() -> Result<Prober> {
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .context("cannot bind a UDP socket to ask from")?;
        Ok(Prober {
            socket,
            next_id: rand::random(),
        })
    }

    /// Ask `server` for the A records of `name` (recursion not desired, no EDNS); an error if
    /// no answer to this question arrives within `timeout`.
    pub async fn ask(
        &mut self,
        server: SocketAddr,
        name: &str,
        timeout: Duration,
    ) -> Result<Answer> {
        self.next_id = self.next_id.wrapping_add(1);
        let id = self.next_id;
        let qname = Name::from_ascii(name).with_context(|| format!("{name:?} is no DNS name"))?;
        let mut query = Message::new(id, MessageType::Query, OpCode::Query);
        query.add_query(Query::query(qname, RecordType::A));
        let bytes = query.to_vec().context("cannot encode a DNS query")?;
        self.socket
            .send_to(&bytes, server)
            .await
            .with_context(|| format!("cannot send a DNS query to {server}"))?;
        let mut buf = vec![0u8; 65_535];
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let (n, from) = tokio::time::timeout_at(deadline, self.socket.recv_from(&mut buf))
                .await
                .map_err(|_| anyhow::anyhow!("{server} did not answer {name} within {timeout:?}"))?
                .context("cannot receive a DNS answer")?;
            if from != server {
                continue;
            }
            let answer = Message::from_vec(&buf[..n])
                .with_context(|| format!("{server} sent an answer that does not decode"))?;
            // A late answer to an earlier question: wait for this one's.
            if answer.metadata.id != id {
                continue;
            }
            if answer.metadata.message_type != MessageType::Response {
                bail!("{server} sent a query instead of an answer");
            }
            let addresses = answer
                .answers
                .iter()
                .filter_map(|r| match &r.data {
                    RData::A(a) => Some(IpAddr::V4(a.0)),
                    RData::AAAA(a) => Some(IpAddr::V6(a.0)),
                    _ => None,
                })
                .collect();
            return Ok(Answer {
                rcode: answer.metadata.response_code.to_string(),
                addresses,
            });
        }
    }
}

/// Ask `server` once, from a new socket.
pub async fn ask(server: SocketAddr, name: &str, timeout: Duration) -> Result<Answer> {
    Prober::new().await?.ask(server, name, timeout).await
}
