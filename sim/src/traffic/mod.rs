//! Traffic groups (`traffic`): bulk, http, pareto and udp, each on its route; one file each, one
//! line in `KINDS`, its build in `world/traffic.rs`. Details: docs/engine.md, `traffic/mod.rs`.

pub mod sizes;
pub mod transfers;

use crate::params::{ConfigError, Param, UnionDef, VariantDef};
use crate::tcp::TcpConfig;

/// A registered traffic kind: its parameters (the union variant) and whether it is TCP.
pub struct TrafficEntry {
    pub def: VariantDef,
    /// The kind's flows are TCP connections (a group `tcp` section applies).
    pub tcp: bool,
}

crate::registry! {
    /// The traffic kinds (`traffic.N.kind`).
    KINDS: TrafficEntry = [bulk, http, pareto, udp]
}

crate::params! {
    /// Settings every traffic group has.
    pub struct TrafficCommon as "TrafficCommon" {
        /// The topology links the group's traffic crosses, in order; null = the route of the
        /// flat short flows and open-loop traffic (the dumbbell's link; the parking lot's longest
        /// route).
        route: Option<Vec<i64>> = None, unit "";
        /// TCP of the group's flows (bulk, http, pareto): a preset or a mapping, as the top-level
        /// tcp; null = the top-level tcp.
        tcp: Option<TcpConfig> = None;
    }
}

pub static TRAFFIC: UnionDef = UnionDef {
    name: "traffic",
    tag: "kind",
    default_tag: "bulk",
    variants: || KINDS.iter().map(|e| &e.def).collect(),
    presets: &[],
    renamed: &[],
};

/// One group of the `traffic` list.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficGroup(pub crate::params::Tagged<TrafficCommon>);

crate::union_param!(TrafficGroup, TRAFFIC, TrafficCommon);

/// What a group is, parsed (the world builds each from this).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Bulk(bulk::BulkParams),
    Http(http::HttpParams),
    Pareto(pareto::ParetoParams),
    Udp(udp::UdpParams),
}

impl TrafficGroup {
    pub fn kind_name(&self) -> &'static str {
        self.0.variant
    }

    pub fn kind(&self) -> Kind {
        let p = &self.0.params;
        match self.0.variant {
            "bulk" => Kind::Bulk(bulk::BulkParams::parse(p).expect("validated")),
            "http" => Kind::Http(http::HttpParams::parse(p).expect("validated")),
            "pareto" => Kind::Pareto(pareto::ParetoParams::parse(p).expect("validated")),
            "udp" => Kind::Udp(udp::UdpParams::parse(p).expect("validated")),
            other => unreachable!("unregistered traffic kind {other}"),
        }
    }

    fn is_tcp(&self) -> bool {
        KINDS.iter().any(|e| e.def.name == self.0.variant && e.tcp)
    }

    /// Checks what the group's own parameters cannot: a tcp section only where it applies, and
    /// the kind's cross-field rules. Errors are relative to the group (the caller prefixes
    /// `traffic.N`).
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.0.common.tcp.is_some() && !self.is_tcp() {
            return Err(ConfigError::at(
                "tcp",
                format!("does not apply to {} traffic (not TCP); remove it", self.0.variant),
            ));
        }
        match self.kind() {
            Kind::Bulk(p) => p.check(),
            Kind::Http(p) => p.check(),
            Kind::Pareto(p) => p.check(),
            Kind::Udp(_) => Ok(()),
        }
    }

    /// The group's TCP: its own section, else the run's.
    pub fn tcp_or<'a>(&'a self, run_tcp: &'a TcpConfig) -> &'a TcpConfig {
        self.0.common.tcp.as_ref().unwrap_or(run_tcp)
    }
}

/// The traffic classes of the `classes` table (the flat long flows are bulk, the flat short
/// flows pareto, the flat open-loop sources udp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Bulk = 0,
    Http = 1,
    Pareto = 2,
    Udp = 3,
}

pub const CLASSES: [Class; 4] = [Class::Bulk, Class::Http, Class::Pareto, Class::Udp];

impl Class {
    pub fn name(self) -> &'static str {
        ["bulk", "http", "pareto", "udp"][self as usize]
    }
}

/// Packets of a class sent, dropped on any link, and delivered (new, in order) at the receiver.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClassCounters {
    pub sent: u64,
    pub dropped: u64,
    pub delivered: u64,
    /// Bytes sent and delivered (open-loop packets have their own size).
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
}

impl ClassCounters {
    pub fn since(&self, earlier: &ClassCounters) -> ClassCounters {
        ClassCounters {
            sent: self.sent - earlier.sent,
            dropped: self.dropped - earlier.dropped,
            delivered: self.delivered - earlier.delivered,
            sent_bytes: self.sent_bytes - earlier.sent_bytes,
            delivered_bytes: self.delivered_bytes - earlier.delivered_bytes,
        }
    }
}

/// Long flows the `bulk` groups add (after the flat ones).
pub fn bulk_flows(traffic: &[TrafficGroup]) -> usize {
    traffic
        .iter()
        .map(|g| match g.kind() {
            Kind::Bulk(p) => p.flows as usize,
            _ => 0,
        })
        .sum()
}

/// Parses a kind's value from a group mapping (for tests).
#[cfg(test)]
pub fn group(v: crate::params::Value) -> Result<TrafficGroup, ConfigError> {
    TrafficGroup::parse(&v)
}
