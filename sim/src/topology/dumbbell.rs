//! The dumbbell: one bottleneck of `core_mbps` and the flat buffer, crossed by `flows` long flows.
//! Details: docs/engine.md, `topology/dumbbell.rs`.

use super::{link_limit, link_policy, link_queue, Flat, LinkSpec, Network, RouteSpec, TopologyEntry};
use crate::params::{normalize, ConfigError, Value, VariantDef};

crate::params! {
    /// The dumbbell is set by the flat keys core_mbps, buffer_pkts, buffer_bytes and flows.
    pub struct DumbbellParams as "Dumbbell" {}
}

pub const ENTRY: TopologyEntry = TopologyEntry {
    def: VariantDef {
        name: "dumbbell",
        doc: "one bottleneck (core_mbps, buffer_pkts) shared by every flow",
        params: DumbbellParams::specs,
        keys: DumbbellParams::KEYS,
        normalize: normalize::<DumbbellParams>,
    },
    build,
};

fn build(flat: &Flat, _: &Value) -> Result<Network, ConfigError> {
    let core = LinkSpec {
        name: "bottleneck".into(),
        rate_bps: flat.core_mbps * 1e6,
        delay: 0,
        limit: link_limit(None, None, flat),
        policy: link_policy(None, String::new(), flat),
        queue: link_queue(None, String::new(), flat),
    };
    Ok(Network {
        links: vec![core],
        routes: vec![RouteSpec { links: vec![0], flows: flat.flows as usize }],
        default_route: 0,
        bottleneck: 0,
        traffic_routes: Vec::new(),
    })
}
