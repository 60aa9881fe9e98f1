//! Topologies: a builder turns its parameters and the flat settings into a `Network` of links and
//! routes; one file each, one line in `TOPOLOGIES`. Details: docs/engine.md, `topology/mod.rs`.

use crate::params::{ConfigError, UnionDef, Value, VariantDef};
use crate::policy::PolicyConfig;
use crate::queue::{Limit, QueueConfig};
use crate::time::Time;

/// The flat settings a builder may read: what a link or route without its own takes. `config`
/// fills it from the run's keys.
#[derive(Clone, Debug)]
pub struct Flat {
    pub core_mbps: f64,
    pub flows: i64,
    pub limit: Limit,
    pub policy: PolicyConfig,
    pub queue: QueueConfig,
}

/// A link of the topology (reported in the `links` table; `topology.links.N`).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    pub rate_bps: f64,
    pub delay: Time,
    pub limit: Limit,
    /// What sets its buffer, and the config key it came from (for errors).
    pub policy: (PolicyConfig, String),
    /// Its queue discipline, and the config key it came from.
    pub queue: (QueueConfig, String),
}

/// A route of long flows: the topology links it crosses, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteSpec {
    pub links: Vec<usize>,
    pub flows: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub links: Vec<LinkSpec>,
    pub routes: Vec<RouteSpec>,
    /// The route of short flows and open-loop traffic.
    pub default_route: usize,
    /// The link the run summary describes.
    pub bottleneck: usize,
    /// The route of each `traffic` group (routes the topology did not list are appended, with
    /// no flat long flows).
    pub traffic_routes: Vec<usize>,
}

impl Network {
    pub fn long_flows(&self) -> usize {
        self.routes.iter().map(|r| r.flows).sum()
    }

    /// The route over `links` (topology link ids, in order): an existing route, or a new one with
    /// no flat long flows. Every topology here is a chain, so a route is consecutive links.
    pub fn route_over(&mut self, links: &[i64]) -> Result<usize, ConfigError> {
        let all = (0..self.links.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        if links.is_empty() {
            return Err(ConfigError::new(format!("must list at least one link; the links are {all}")));
        }
        if let Some(&l) = links.iter().find(|&&l| l < 0 || l as usize >= self.links.len()) {
            return Err(ConfigError::new(format!("link {l} does not exist; the links are {all}")));
        }
        if links.windows(2).any(|w| w[1] != w[0] + 1) {
            return Err(ConfigError::new(format!("must be consecutive links in order, got {links:?}")));
        }
        let ids: Vec<usize> = links.iter().map(|&l| l as usize).collect();
        if let Some(r) = self.routes.iter().position(|r| r.links == ids) {
            return Ok(r);
        }
        self.routes.push(RouteSpec { links: ids, flows: 0 });
        Ok(self.routes.len() - 1)
    }

    /// One-way propagation delay of a route's links.
    pub fn one_way(&self, route: usize) -> Time {
        self.routes[route].links.iter().map(|&l| self.links[l].delay).sum()
    }
}

/// A registered topology: its parameters (the union variant) and its builder.
pub struct TopologyEntry {
    pub def: VariantDef,
    pub build: fn(&Flat, &Value) -> Result<Network, ConfigError>,
}

crate::registry! {
    /// The topologies (`topology.name`): one line each.
    TOPOLOGIES: TopologyEntry = [dumbbell, parking_lot]
}

crate::params! {
    /// Parameters common to every topology (none yet).
    pub struct TopologyCommon as "TopologyCommon" {}
}

pub static TOPOLOGY: UnionDef = UnionDef {
    name: "topology",
    tag: "name",
    default_tag: "dumbbell",
    variants: || TOPOLOGIES.iter().map(|e| &e.def).collect(),
    presets: &[],
    renamed: &[],
};

/// The `topology` section of a run config.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyConfig(pub crate::params::Tagged<TopologyCommon>);

crate::union_param!(TopologyConfig, TOPOLOGY, TopologyCommon);

impl TopologyConfig {
    /// Builds the network; errors name `topology.*`.
    pub fn build(&self, flat: &Flat) -> Result<Network, ConfigError> {
        let entry = TOPOLOGIES.iter().find(|e| e.def.name == self.0.variant).expect("validated topology");
        (entry.build)(flat, &self.0.params).map_err(|e| e.under("topology"))
    }
}

/// The buffer of a link: its own setting if any (bytes over packets), else the flat one.
pub fn link_limit(buffer_pkts: Option<i64>, buffer_bytes: Option<i64>, flat: &Flat) -> Limit {
    match (buffer_bytes, buffer_pkts) {
        (Some(b), _) => Limit::Bytes(b as u64),
        (None, Some(p)) => Limit::Packets(p as u64),
        (None, None) => flat.limit,
    }
}

/// The policy of a link: its own (at `key`) if set, else the flat `buffer_policy`.
pub fn link_policy(own: Option<&PolicyConfig>, key: String, flat: &Flat) -> (PolicyConfig, String) {
    match own {
        Some(p) => (p.clone(), key),
        None => (flat.policy.clone(), "buffer_policy".to_string()),
    }
}

/// The queue discipline of a link: its own (at `key`) if set, else the flat `queue`.
pub fn link_queue(own: Option<&QueueConfig>, key: String, flat: &Flat) -> (QueueConfig, String) {
    match own {
        Some(q) => (q.clone(), key),
        None => (flat.queue.clone(), "queue".to_string()),
    }
}
