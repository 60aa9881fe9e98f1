//! The parking lot (ABS section 4.7, Fig. 9): links in series and routes of long flows over them.
//! Details: docs/engine.md, `topology/parking_lot.rs`.

use super::{link_limit, link_policy, link_queue, Flat, LinkSpec, Network, RouteSpec, TopologyEntry};
use crate::params::{
    int_in, non_negative, normalize, opt, positive, Check, ConfigError, Param, Value, VariantDef, MAX_FLOWS, MAX_PKTS,
};
use crate::policy::PolicyConfig;
use crate::queue::QueueConfig;
use crate::time::from_secs;

crate::params! {
    /// One link of the chain; null fields take the flat settings.
    pub struct LinkConfig as "LinkConfig" {
        /// Capacity; null = core_mbps.
        rate_mbps: Option<f64> = None, unit "Mb/s", check opt(positive(1e7));
        /// Propagation delay.
        delay_ms: f64 = 10.0, unit "ms", check non_negative(1e5);
        /// Buffer in packets; null = buffer_pkts (or buffer_bytes).
        buffer_pkts: Option<i64> = None, unit "pkts", check opt(int_in(0, MAX_PKTS));
        /// Byte-limited buffer instead of buffer_pkts; null = the flat setting.
        buffer_bytes: Option<i64> = None, unit "bytes", check opt(int_in(0, MAX_PKTS));
        /// What sets the buffer (a static rule or a controller); null = the flat buffer_policy.
        buffer_policy: Option<PolicyConfig> = None;
        /// Its queue discipline; null = the flat queue.
        queue: Option<QueueConfig> = None;
    }
}

crate::params! {
    /// A group of long flows over consecutive links.
    pub struct RouteConfig as "RouteConfig" {
        /// The links crossed, in order (consecutive ids).
        links: Vec<i64> = vec![], unit "";
        /// Long flows on the route; null = flows.
        flows: Option<i64> = None, unit "count", check opt(int_in(0, MAX_FLOWS));
    }
}

fn route(links: &[i64]) -> RouteConfig {
    RouteConfig { links: links.to_vec(), flows: None }
}

/// The most links a lot may chain: a packet counts its route's hops in one byte (packets stay 24
/// bytes), and a route also holds its access, timestamp and return hops.
const MAX_LINKS: usize = 250;

fn link_count() -> Check<Vec<LinkConfig>> {
    Check::new("1 to 250 links", |v: &Vec<LinkConfig>| {
        (v.is_empty() || v.len() > MAX_LINKS).then(|| format!("must list 1 to {MAX_LINKS} links, got {}", v.len()))
    })
}

fn route_count() -> Check<Vec<RouteConfig>> {
    Check::new("at least one route", |v: &Vec<RouteConfig>| v.is_empty().then(|| "must list at least one route".into()))
}

crate::params! {
    /// Links in series and routes of long flows over them.
    pub struct ParkingLotParams as "ParkingLot" {
        /// The links, in the order a flow crossing all of them meets them.
        links: Vec<LinkConfig> = vec![LinkConfig::default(), LinkConfig::default()], check link_count();
        /// The routes of long flows.
        routes: Vec<RouteConfig> = vec![route(&[0]), route(&[1]), route(&[0, 1])], check route_count();
    }
}

pub const ENTRY: TopologyEntry = TopologyEntry {
    def: VariantDef {
        name: "parking_lot",
        doc: "links in series (ABS section 4.7); routes of long flows over consecutive links",
        params: ParkingLotParams::specs,
        keys: ParkingLotParams::KEYS,
        normalize: normalize::<ParkingLotParams>,
    },
    build,
};

fn check_route(r: &RouteConfig, n_links: usize) -> Result<Vec<usize>, ConfigError> {
    let all = (0..n_links).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    if r.links.is_empty() {
        return Err(ConfigError::at("links", "must list at least one link"));
    }
    for &l in &r.links {
        if l < 0 || l as usize >= n_links {
            return Err(ConfigError::at("links", format!("link {l} does not exist; the links are {all}")));
        }
    }
    if r.links.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(ConfigError::at(
            "links",
            format!("must be consecutive links in order (a parking lot is a chain), got {:?}", r.links),
        ));
    }
    Ok(r.links.iter().map(|&l| l as usize).collect())
}

fn build(flat: &Flat, params: &Value) -> Result<Network, ConfigError> {
    let p = ParkingLotParams::parse(params)?;
    let links: Vec<LinkSpec> = p
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| LinkSpec {
            name: format!("link{i}"),
            rate_bps: l.rate_mbps.unwrap_or(flat.core_mbps) * 1e6,
            delay: from_secs(l.delay_ms / 1000.0),
            limit: link_limit(l.buffer_pkts, l.buffer_bytes, flat),
            policy: link_policy(l.buffer_policy.as_ref(), format!("topology.links.{i}.buffer_policy"), flat),
            queue: link_queue(l.queue.as_ref(), format!("topology.links.{i}.queue"), flat),
        })
        .collect();
    let mut routes = Vec::new();
    for (i, r) in p.routes.iter().enumerate() {
        let ids = check_route(r, links.len()).map_err(|e| e.under(&i.to_string()).under("routes"))?;
        routes.push(RouteSpec { links: ids, flows: r.flows.unwrap_or(flat.flows) as usize });
    }
    let default_route = (0..routes.len()).rev().max_by_key(|&i| routes[i].links.len()).expect("a route");
    let bottleneck = (0..links.len()).min_by(|&a, &b| links[a].rate_bps.total_cmp(&links[b].rate_bps)).expect("a link");
    Ok(Network { links, routes, default_route, bottleneck, traffic_routes: Vec::new() })
}
