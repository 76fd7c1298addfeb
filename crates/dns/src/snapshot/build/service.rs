//! The [`Builder`]'s work: adding and removing one service's names (global, per region, per
//! cluster, SRV) with each strategy's choices computed ahead.

use std::collections::HashMap;
use std::net::IpAddr;

use tracing::warn;

use super::super::rrset::NO_CLUSTER;
use super::super::{AddrSet, Node, Pick, Rrset, ServiceNode, SnapshotOptions};
use super::{apex, Builder, Clusters, Ep, Table};
use crate::fleet::{FleetService, Strategy};
use crate::geo::{GeoTable, UNKNOWN_DISTANCE};
use crate::wire::{self, TYPE_CNAME, TYPE_SRV};
use crate::{verdict, Error, Result};

impl<'a> Builder<'a> {
    /// A builder adding to `table` with the cluster indices of `clusters`.
    pub(in crate::snapshot) fn new(
        zone: Vec<u8>,
        geo: &'a GeoTable,
        options: &SnapshotOptions,
        table: Table,
        clusters: Clusters,
    ) -> Result<Builder<'a>> {
        let suffix = match options.service_suffix.as_deref() {
            Some(suffix) => {
                let mut labels = wire::name_to_wire(suffix)?;
                labels.pop();
                labels
            }
            None => Vec::new(),
        };
        Ok(Builder {
            zone,
            table,
            clusters,
            clusters_grew: false,
            geo,
            suffix,
            scoped: options.scoped_names,
        })
    }

    pub(in crate::snapshot) fn cluster(&mut self, name: &str, region: Option<&str>) -> u16 {
        self.clusters
            .get_or_add(name, region, &mut self.clusters_grew)
    }

    /// `labels` (most specific first) followed by the zone, lowercased wire form.
    fn name(&self, labels: &[&str]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(64);
        for label in labels {
            wire::check_label(label)?;
            out.push(label.len() as u8);
            out.extend(label.bytes().map(|b| b.to_ascii_lowercase()));
        }
        out.extend_from_slice(&self.suffix);
        out.extend_from_slice(&self.zone);
        if out.len() > 255 {
            return Err(Error::InvalidName {
                name: wire::wire_to_text(&out),
                message: "name longer than 255 bytes".into(),
            });
        }
        Ok(out)
    }

    /// Adds `service`'s names; afterwards [`Table::log`] holds the data names it added.
    pub(in crate::snapshot) fn add(&mut self, service: &FleetService) {
        self.table.log.clear();
        if let Err(error) = self.service(service) {
            warn!(namespace = %service.namespace, service = %service.name, %error,
                  "service left out of the DNS snapshot");
        }
    }

    /// SOA and NS at the apex, glue for the name server; returns the SOA for negative answers.
    pub(super) fn apex(
        &mut self,
        zone: &str,
        options: &SnapshotOptions,
        serial: u32,
    ) -> Result<(Box<[u8]>, Rrset)> {
        let (apex, soa_negative, ns) = apex(zone, options, serial)?;
        self.table
            .names
            .shard_mut(&self.zone)
            .insert(self.zone.clone().into_boxed_slice(), apex);
        let mut all_glue = Vec::new();
        if wire::zone_offset(&ns, &self.zone).is_some_and(|off| off > 0) {
            let glue: Vec<(u16, Rrset)> = [wire::TYPE_A, wire::TYPE_AAAA]
                .into_iter()
                .filter_map(|rtype| {
                    let records: Vec<Vec<u8>> = options
                        .ns_addresses
                        .iter()
                        .filter(|ip| (rtype == wire::TYPE_A) == ip.is_ipv4())
                        .map(|&ip| wire::address_record(ip, options.soa_ttl))
                        .collect();
                    (!records.is_empty()).then(|| {
                        (
                            rtype,
                            Rrset::new(records.iter().map(|r| (NO_CLUSTER, r.as_slice()))),
                        )
                    })
                })
                .collect();
            for (_, set) in &glue {
                all_glue.extend(set.iter().map(|(_, r)| r.to_vec()));
            }
            self.table
                .insert(self.zone.len(), ns, Node::Static(glue.into_boxed_slice()));
        }
        let glue = Rrset::new(all_glue.iter().map(|r| (NO_CLUSTER, r.as_slice())));
        Ok((soa_negative, glue))
    }

    fn service(&mut self, service: &FleetService) -> Result<()> {
        let fail_open = verdict::fail_open(&service.endpoints);
        if fail_open {
            warn!(namespace = %service.namespace, service = %service.name,
                  "every endpoint is unhealthy: answering all of them (fail open)");
        }
        let indices: Vec<u16> = service
            .endpoints
            .iter()
            .map(|e| self.cluster(&e.cluster, e.region.as_deref()))
            .collect();
        let mut all = Vec::with_capacity(service.endpoints.len());
        let mut serving = Vec::with_capacity(service.endpoints.len());
        for (endpoint, &cluster) in service.endpoints.iter().zip(&indices) {
            let region = endpoint
                .region
                .as_deref()
                .or(self.clusters.regions[cluster as usize].as_deref());
            let ep = Ep {
                cluster,
                cluster_name: &endpoint.cluster,
                region,
                address: endpoint.address,
                cluster_ip: endpoint.cluster_ip,
            };
            if fail_open || endpoint.verdict.is_serving() {
                serving.push(all.len());
            }
            all.push(ep);
        }
        let serving: Vec<&Ep> = serving.iter().map(|&i| &all[i]).collect();
        let (svc, ns, ttl) = (
            service.name.as_str(),
            service.namespace.as_str(),
            service.ttl,
        );
        let global = self.name(&[svc, ns])?;
        let node = self.service_node(&serving, &service.strategy, ttl);
        self.table.insert(self.zone.len(), global.clone(), node);

        let mut regions: Vec<&str> = all
            .iter()
            .filter(|_| self.scoped)
            .filter_map(|e| e.region)
            .collect();
        regions.sort_unstable();
        regions.dedup();
        let mut region_names = HashMap::new();
        for region in regions {
            let name = self.name(&[svc, ns, region])?;
            let within: Vec<&Ep> = serving
                .iter()
                .copied()
                .filter(|e| e.region == Some(region))
                .collect();
            let node = if within.is_empty() {
                cname(&global, ttl)
            } else {
                self.service_node(&within, &Strategy::RoundRobin, ttl)
            };
            region_names.insert(region, name.clone());
            self.table.insert(self.zone.len(), name, node);
        }
        let mut clusters: Vec<(&str, u16, Option<&str>)> = all
            .iter()
            .filter(|_| self.scoped)
            .map(|e| (e.cluster_name, e.cluster, e.region))
            .collect();
        clusters.sort_unstable();
        clusters.dedup_by_key(|c| c.0);
        for (cluster_name, cluster, region) in clusters {
            let name = self.name(&[svc, ns, cluster_name])?;
            let within: Vec<&Ep> = serving
                .iter()
                .copied()
                .filter(|e| e.cluster == cluster)
                .collect();
            let node = if within.is_empty() {
                cname(
                    region.and_then(|r| region_names.get(r)).unwrap_or(&global),
                    ttl,
                )
            } else {
                self.service_node(&within, &Strategy::RoundRobin, ttl)
            };
            self.table.insert(self.zone.len(), name, node);
        }
        for port in service.ports.iter().filter(|p| !p.name.is_empty()) {
            let port_label = format!("_{}", port.name);
            let proto_label = format!("_{}", port.protocol.to_ascii_lowercase());
            let name = self.name(&[&port_label, &proto_label, svc, ns])?;
            let mut rdata = Vec::with_capacity(6 + global.len());
            for n in [0u16, 0, port.port] {
                rdata.extend_from_slice(&n.to_be_bytes());
            }
            rdata.extend_from_slice(&global);
            let record = wire::record(TYPE_SRV, ttl, &rdata);
            let set = Rrset::new([(NO_CLUSTER, record.as_slice())]);
            self.table.insert(
                self.zone.len(),
                name,
                Node::Static(Box::new([(TYPE_SRV, set)])),
            );
        }
        Ok(())
    }

    fn service_node(&self, eps: &[&Ep], strategy: &Strategy, ttl: u32) -> Node {
        Node::Service(ServiceNode {
            v4: self.addr_set(eps, false, strategy, ttl).map(Box::new),
            v6: self.addr_set(eps, true, strategy, ttl).map(Box::new),
        })
    }

    fn addr_set(&self, eps: &[&Ep], v6: bool, strategy: &Strategy, ttl: u32) -> Option<AddrSet> {
        let family = |ip: &IpAddr| ip.is_ipv6() == v6;
        let fam: Vec<&Ep> = eps.iter().copied().filter(|e| family(&e.address)).collect();
        if fam.is_empty() {
            return None;
        }
        let set = |members: &[&Ep]| {
            let records: Vec<(u16, Vec<u8>)> = members
                .iter()
                .map(|e| (e.cluster, wire::address_record(e.address, ttl)))
                .collect();
            Rrset::new(records.iter().map(|(c, r)| (*c, r.as_slice())))
        };
        let pick = match strategy {
            Strategy::RoundRobin => Pick::Rotate(set(&fam)),
            Strategy::Failover { primary_region } => {
                let primary: Vec<&Ep> = fam
                    .iter()
                    .copied()
                    .filter(|e| e.region == Some(primary_region.as_str()))
                    .collect();
                Pick::Rotate(set(if primary.is_empty() { &fam } else { &primary }))
            }
            Strategy::Geo => self.geo_pick(&fam, &set),
            Strategy::Weighted { weights } => {
                let mut total = 0u32;
                let mut groups = Vec::new();
                for weight in weights.iter().filter(|w| w.weight > 0) {
                    let members: Vec<&Ep> = fam
                        .iter()
                        .copied()
                        .filter(|e| {
                            (weight.region.is_some() || weight.cluster.is_some())
                                && weight.region.as_deref().is_none_or(|r| e.region == Some(r))
                                && weight
                                    .cluster
                                    .as_deref()
                                    .is_none_or(|c| e.cluster_name == c)
                        })
                        .collect();
                    if !members.is_empty() {
                        total = total.saturating_add(weight.weight);
                        groups.push((total, set(&members)));
                    }
                }
                if groups.is_empty() {
                    Pick::Rotate(set(&fam))
                } else {
                    Pick::Weighted {
                        total,
                        groups: groups.into_boxed_slice(),
                    }
                }
            }
        };
        let mut local = Vec::new();
        let mut clusters: Vec<u16> = eps.iter().map(|e| e.cluster).collect();
        clusters.sort_unstable();
        clusters.dedup();
        for cluster in clusters
            .into_iter()
            .filter(|&c| self.clusters.has_networks[c as usize])
        {
            let mut records: Vec<Vec<u8>> = Vec::new();
            for e in eps.iter().filter(|e| e.cluster == cluster) {
                let ip = e
                    .cluster_ip
                    .filter(family)
                    .or(Some(e.address).filter(family));
                if let Some(ip) = ip {
                    let record = wire::address_record(ip, ttl);
                    if !records.contains(&record) {
                        records.push(record);
                    }
                }
            }
            if !records.is_empty() {
                local.push((
                    cluster,
                    Rrset::new(records.iter().map(|r| (cluster, r.as_slice()))),
                ));
            }
        }
        Some(AddrSet {
            pick,
            local: local.into_boxed_slice(),
        })
    }

    /// For each region of the geo table, the nearest region that has endpoints here.
    fn geo_pick(&self, fam: &[&Ep], set: &dyn Fn(&[&Ep]) -> Rrset) -> Pick {
        let mut candidates: Vec<&str> = fam.iter().filter_map(|e| e.region).collect();
        candidates.sort_unstable();
        candidates.dedup();
        let sets: Vec<Rrset> = candidates
            .iter()
            .map(|r| {
                set(&fam
                    .iter()
                    .copied()
                    .filter(|e| e.region == Some(*r))
                    .collect::<Vec<_>>())
            })
            .collect();
        let by_region = self
            .geo
            .regions()
            .map(|from| {
                let nearest = self.geo.nearest(from, &candidates);
                match nearest.first() {
                    Some(first) if self.geo.distance(from, first) < UNKNOWN_DISTANCE => candidates
                        .iter()
                        .position(|c| c == first)
                        .map_or(u16::MAX, |i| i as u16),
                    _ => u16::MAX,
                }
            })
            .collect();
        Pick::Geo {
            by_region,
            sets: sets.into_boxed_slice(),
            default: set(fam),
        }
    }
}

fn cname(target: &[u8], ttl: u32) -> Node {
    Node::Cname {
        target: target.into(),
        record: wire::record(TYPE_CNAME, ttl, target).into_boxed_slice(),
    }
}
