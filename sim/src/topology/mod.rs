//! Topologies: a builder turns its parameters and the run's flat settings into a `Network` (the
//! links that can congest, and routes of long flows over them). The world then gives every
//! connection its own edge: an access link before the first hop when `access_mbps` is set, and a
//! pure-delay return path. One file per topology, one line in `TOPOLOGIES`.
//!
//! Where delay sits. A flow's RTT (`rtt_ms`, its two-way propagation delay) is split between the
//! links it crosses, whose delays are physical (the delay between two bottlenecks shapes the
//! arrivals at the second), and its return path, which gets the rest: RTT minus the one-way delay
//! of its route's links. Delay before the first link, after the last one, and on the way back
//! can all sit on the return path: a queue sees only the loop delay from a departure to the
//! packets it clocks out, which this split keeps exact. So a flow's RTT must be at least twice
//! its route's one-way link delay (the reverse direction crosses the same links).

pub mod dumbbell;
pub mod parking_lot;

use crate::config::SimConfig;
use crate::params::{ConfigError, UnionDef, Value, VariantDef};
use crate::policy::PolicyConfig;
use crate::queue::Limit;
use crate::time::{from_secs, Time};

/// A link of the topology (reported in the `links` table; `topology.links.N`).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    pub rate_bps: f64,
    pub delay: Time,
    pub limit: Limit,
    /// What sets its buffer, and the config key it came from (for errors).
    pub policy: (PolicyConfig, String),
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
    pub build: fn(&SimConfig, &Value) -> Result<Network, ConfigError>,
}

pub const TOPOLOGIES: &[TopologyEntry] = &[dumbbell::ENTRY, parking_lot::ENTRY];

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
};

/// The `topology` section of a run config.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyConfig(pub crate::params::Tagged<TopologyCommon>);

crate::union_param!(TopologyConfig, TOPOLOGY, TopologyCommon);

impl TopologyConfig {
    /// Builds the network and checks it against the run's traffic; errors name `topology.*`
    /// or the flat key at fault.
    pub fn build(&self, cfg: &SimConfig) -> Result<Network, ConfigError> {
        let entry = TOPOLOGIES.iter().find(|e| e.def.name == self.0.variant).expect("validated topology");
        let mut net = (entry.build)(cfg, &self.0.params).map_err(|e| e.under("topology"))?;
        for (i, g) in cfg.traffic.iter().enumerate() {
            let route = match &g.0.common.route {
                None => net.default_route,
                Some(links) => {
                    net.route_over(links).map_err(|e| e.under("route").under(&i.to_string()).under("traffic"))?
                }
            };
            net.traffic_routes.push(route);
        }
        check_delays(&net, cfg)?;
        Ok(net)
    }
}

/// The buffer of a link: its own setting if any (bytes over packets), else the flat one.
pub fn link_limit(buffer_pkts: Option<i64>, buffer_bytes: Option<i64>, cfg: &SimConfig) -> Limit {
    match (buffer_bytes, buffer_pkts) {
        (Some(b), _) => Limit::Bytes(b as u64),
        (None, Some(p)) => Limit::Packets(p as u64),
        (None, None) => match cfg.buffer_bytes {
            Some(b) => Limit::Bytes(b as u64),
            None => Limit::Packets(cfg.buffer_pkts as u64),
        },
    }
}

/// The policy of a link: its own (at `key`) if set, else the flat `buffer_policy`.
pub fn link_policy(own: Option<&PolicyConfig>, key: String, cfg: &SimConfig) -> (PolicyConfig, String) {
    match own {
        Some(p) => (p.clone(), key),
        None => (cfg.buffer_policy.clone(), "buffer_policy".to_string()),
    }
}

/// Every flow's RTT covers twice its route's one-way link delay.
fn check_delays(net: &Network, cfg: &SimConfig) -> Result<(), ConfigError> {
    let other_traffic = cfg.short_mbps > 0.0 || cfg.poisson_mbps > 0.0 || cfg.cbr_mbps > 0.0;
    let need = (0..net.routes.len())
        .filter(|&r| {
            net.routes[r].flows > 0 || (r == net.default_route && other_traffic) || net.traffic_routes.contains(&r)
        })
        .map(|r| 2 * net.one_way(r))
        .max()
        .unwrap_or(0);
    let min_rtt_s = match &cfg.rtts_ms {
        Some(list) => list.iter().copied().fold(f64::INFINITY, f64::min) / 1000.0,
        None => (cfg.rtt_ms - cfg.rtt_spread_ms / 2.0) / 1000.0,
    };
    if need > 0 && from_secs(min_rtt_s) < need {
        let key = if cfg.rtts_ms.is_some() { "rtts_ms" } else { "rtt_ms" };
        return Err(ConfigError::at(
            key,
            format!(
                "flows' RTTs (from {:.3} ms) must be at least twice the one-way delay of the topology links on \
                 their route ({:.3} ms)",
                min_rtt_s * 1e3,
                crate::time::to_secs(need) * 1e3
            ),
        ));
    }
    Ok(())
}
