//! The run configuration, declared once with `params!`, and its cross-field checks.
//! Details: docs/engine.md, `config.rs`.

use crate::params::{
    each, int_in, non_negative, opt, positive, rate_mbps, ConfigError, Param, Value, MAX_FLOWS, MAX_PKTS,
};
use crate::policy::PolicyConfig;
use crate::precision::PrecisionConfig;
use crate::queue::{Limit, QueueConfig};
use crate::tcp::TcpConfig;
use crate::time::{from_secs, to_secs};
use crate::topology::{Flat, Network, TopologyConfig};
use crate::traffic::TrafficGroup;

crate::params! {
    /// One simulation run. Defaults follow ns-2's one-way TCP agents where they apply.
    pub struct SimConfig as "SimConfig" {
        /// TCP of every flow: a preset (`python -m sweeps --help` lists them) or a mapping of the window
        /// law (cc), loss recovery, release and knobs.
        tcp: TcpConfig = TcpConfig::named("reno");
        /// Variant mix: each route's long flows split into groups with their own TCP, as
        /// "reno:10,highspeed:10" (or + between groups); counts add up to flows. Groups keep the
        /// tcp section's common settings. null = every flow uses tcp.
        tcp_mix: Option<String> = None, unit "";
        /// The network: dumbbell (set by the flat keys) or parking_lot.
        topology: TopologyConfig = TopologyConfig::named("dumbbell");
        /// Traffic groups beside the flat shorthands: bulk, http, pareto or udp, each on its route
        /// with its own settings (the keys of each kind: docs/engine.md, Traffic groups).
        traffic: Vec<TrafficGroup> = vec![];
        /// Long-lived flows (per route of the topology).
        flows: i64 = 1, unit "count", check int_in(0, MAX_FLOWS);
        /// Bottleneck buffer in packets, the one in transmission included (ns-2 DropTail queue-limit).
        buffer_pkts: i64 = 100, unit "pkts", check int_in(0, MAX_PKTS);
        /// Byte-limited bottleneck buffer instead of buffer_pkts; null = packets.
        buffer_bytes: Option<i64> = None, unit "bytes", check opt(int_in(0, MAX_PKTS));
        /// Receiver window cap: the most a flow has outstanding. The default caps nothing short of
        /// 8 Gb/s x 100 ms for one flow, so that the network, not the receiver, limits a flow
        /// (ns-2's window_ of 20 and ns-3's 128 KB cap utilization silently; docs/engine.md).
        wmax_pkts: i64 = 100_000, unit "pkts", check int_in(1, 1 << 30);
        /// Per-sender access link rate; null = senders attached straight to the topology.
        access_mbps: Option<f64> = None, unit "Mb/s", check opt(rate_mbps());
        /// Buffer of each access link.
        access_buffer_pkts: i64 = 10_000, unit "pkts", check int_in(0, MAX_PKTS);
        /// Bottleneck capacity (the dumbbell's; the default of other topologies' links).
        core_mbps: f64 = 100.0, unit "Mb/s", check rate_mbps();
        /// Two-way propagation delay of each flow (queueing excluded).
        rtt_ms: f64 = 100.0, unit "ms", check positive(1e6);
        /// Flows' RTTs are uniform in rtt_ms +/- rtt_spread_ms / 2.
        rtt_spread_ms: f64 = 0.0, unit "ms", check non_negative(2e6);
        /// Explicit per-flow RTTs (one per long flow); overrides rtt_ms and rtt_spread_ms.
        rtts_ms: Option<Vec<f64>> = None, unit "ms", check opt(each(positive(1e6)));
        /// Packet size (at most an IP packet's 65,535 bytes).
        pkt_bytes: i64 = 1000, unit "bytes", check int_in(41, 65_535);
        /// Simulated time.
        duration_s: f64 = 60.0, unit "s", check positive(1e6);
        /// Metrics cover [warmup_s, duration_s].
        warmup_s: f64 = 10.0, unit "s", check non_negative(1e6);
        /// Random seed: the same seed gives bit-identical results.
        seed: i64 = 1, unit "", check int_in(0, i64::MAX);
        /// Long flows start at uniform random times in [0, start_window_s].
        start_window_s: f64 = 1.0, unit "s", check non_negative(1e6);
        /// Open-loop Poisson traffic (on the topology's longest route).
        poisson_mbps: f64 = 0.0, unit "Mb/s", check non_negative(1e7);
        /// Open-loop constant-bit-rate traffic.
        cbr_mbps: f64 = 0.0, unit "Mb/s", check non_negative(1e7);
        /// Open-loop packet size; null = pkt_bytes.
        open_loop_bytes: Option<i64> = None, unit "bytes", check opt(int_in(1, 65_535));
        /// Offered load of short TCP flows (Poisson arrivals of short_flow_pkts-packet transfers of
        /// the same TCP, RTTs uniform in rtt_ms +/- rtt_spread_ms / 2); 0 = none.
        short_mbps: f64 = 0.0, unit "Mb/s", check non_negative(1e7);
        /// Size of each short flow (Appenzeller et al.'s 14-packet flows).
        short_flow_pkts: i64 = 14, unit "pkts", check int_in(1, 1 << 30);
        /// What sets the buffer of every topology link without its own (topology.links.N.buffer_policy):
        /// a static rule resolved before the run (bdp, stanford, ...) or an adaptive controller (abs,
        /// adt, ...); fixed = buffer_pkts as configured.
        buffer_policy: PolicyConfig = PolicyConfig::named("fixed");
        /// The queue discipline of every topology link without its own (topology.links.N.queue):
        /// droptail, or an AQM (red, codel, ...) under the hard limit buffer_pkts / buffer_bytes.
        queue: QueueConfig = QueueConfig::named("droptail");
        /// Time-series sample interval.
        sample_interval_s: f64 = 0.1, unit "s", check positive(1e6);
        /// Link event trace length; 0 = off.
        trace_max_events: i64 = 0, unit "count", check int_in(0, 100_000_000);
        /// Trace from this time on; null = warmup_s.
        trace_start_s: Option<f64> = None, unit "s", check opt(non_negative(1e6));
        /// Stop on precision: the run ends once each named metric's confidence interval meets its
        /// target (docs/precision.md); off while precision.metrics is empty.
        precision: PrecisionConfig = PrecisionConfig::default();
    }
}

impl SimConfig {
    /// A config with the library defaults.
    pub fn defaults() -> Self {
        Self::default()
    }

    /// When the run ends at the latest: duration_s, or with precision on its max_duration_s.
    pub fn end_s(&self) -> f64 {
        if self.precision.on() {
            self.precision.max_duration_s.unwrap_or(self.duration_s)
        } else {
            self.duration_s
        }
    }

    /// Parses and validates a config; returns it and its network.
    pub fn from_value(v: &Value) -> Result<(Self, Network), ConfigError> {
        let cfg = Self::parse(v)?;
        let net = cfg.validate()?;
        Ok((cfg, net))
    }

    /// Checks what involves several fields, and builds the network (which checks the topology).
    ///
    /// Time is u64 picoseconds (about 1.8e19, 213 days). The per-field bounds keep every event
    /// time below a quarter of that: runs, warm-up, start windows and sample or controller
    /// intervals of at most 1e6 s (1e18 ps), timers of at most 1e5 s, RTTs of at most 2e3 s, and
    /// a 65,535-byte packet at the slowest rate, 0.001 Mb/s, takes 524 s. The event list refuses
    /// an event in the past, which is what an overflow would produce (`EventQueue::push`).
    pub fn validate(&self) -> Result<Network, ConfigError> {
        let err = |f: &str, m: String| Err(ConfigError::at(f, m));
        if self.rtt_spread_ms >= 2.0 * self.rtt_ms {
            return err(
                "rtt_spread_ms",
                format!(
                    "must be < 2 x rtt_ms ({}) so every RTT stays positive, got {}",
                    2.0 * self.rtt_ms,
                    self.rtt_spread_ms
                ),
            );
        }
        if self.warmup_s >= self.duration_s {
            return err("warmup_s", format!("must be < duration_s ({}), got {}", self.duration_s, self.warmup_s));
        }
        if self.start_window_s >= self.duration_s {
            return err(
                "start_window_s",
                format!("must be < duration_s ({}), got {}", self.duration_s, self.start_window_s),
            );
        }
        if self.duration_s / self.sample_interval_s > 1e7 {
            return err(
                "sample_interval_s",
                format!("gives more than 1e7 samples over duration_s; got {}", self.sample_interval_s),
            );
        }
        self.precision.validate(self.duration_s, self.warmup_s)?;
        let tc = self.tcp.common();
        if tc.min_rto_ms / 1000.0 > tc.max_rto_s {
            return err(
                "tcp.min_rto_ms",
                format!("must be <= tcp.max_rto_s x 1000 ({}), got {}", tc.max_rto_s * 1000.0, tc.min_rto_ms),
            );
        }
        let recovery = crate::tcp::RECOVERIES.iter().find(|e| e.name == tc.recovery).expect("validated");
        if !recovery.releases.is_empty() && !recovery.releases.contains(&tc.release.as_str()) {
            return err(
                "tcp.release",
                format!(
                    "must be {} with tcp.recovery {} (it decides every transmission), got {}",
                    recovery.releases.join(" or "),
                    tc.recovery,
                    tc.release
                ),
            );
        }
        let jitters = recovery.jitter || (tc.release == "window" && recovery.releases.is_empty());
        if tc.send_jitter_ms > 0.0 && !jitters {
            let names = |f: fn(&crate::tcp::recovery::RecoveryEntry) -> bool| {
                crate::tcp::RECOVERIES.iter().filter(|e| f(e)).map(|e| e.name).collect::<Vec<_>>().join(", ")
            };
            return err(
                "tcp.send_jitter_ms",
                format!(
                    "applies to tcp.release window under a recovery that leaves sending to it ({}), or to recovery {}, \
                     got release {} with recovery {}",
                    names(|e| e.releases.is_empty()),
                    names(|e| e.jitter),
                    tc.release,
                    tc.recovery
                ),
            );
        }
        if tc.tso_defer && (tc.recovery != "rack_tlp" || tc.release != "window") {
            return err(
                "tcp.tso_defer",
                format!(
                    "applies to tcp.recovery rack_tlp with tcp.release window (Linux's ACK-clocked sender), got \
                     recovery {} with release {}",
                    tc.recovery, tc.release
                ),
            );
        }
        let net = self.network()?;
        for link in &net.links {
            let (policy, key) = &link.policy;
            self.check_policy(policy).map_err(|e| e.under(key))?;
        }
        let n = net.long_flows();
        if n as i64 > MAX_FLOWS {
            return err("flows", format!("the topology's routes hold {n} long flows; at most {MAX_FLOWS}"));
        }
        if let Some(mix) = &self.tcp_mix {
            for (r, route) in net.routes.iter().enumerate() {
                let per_route = if net.routes.len() > 1 { format!(" (route {r})") } else { String::new() };
                crate::tcp::mix::check(mix, &self.tcp, route.flows as i64)
                    .map_err(|m| ConfigError::at("tcp_mix", format!("{m}{per_route}")))?;
            }
        }
        for (i, g) in self.traffic.iter().enumerate() {
            g.check().map_err(|e| e.under(&i.to_string()).under("traffic"))?;
        }
        if let Some(rtts) = &self.rtts_ms {
            if rtts.len() != n {
                return err("rtts_ms", format!("must list one RTT per flow ({n}), got {}", rtts.len()));
            }
        }
        if n == 0
            && self.poisson_mbps == 0.0
            && self.cbr_mbps == 0.0
            && self.short_mbps == 0.0
            && self.traffic.is_empty()
        {
            return err(
                "flows",
                "is 0 and there is no other traffic (poisson_mbps, cbr_mbps, short_mbps, traffic): nothing to simulate"
                    .into(),
            );
        }
        Ok(net)
    }

    /// The topology's network, with a route for each traffic group; checks every flow's RTT
    /// against its route.
    fn network(&self) -> Result<Network, ConfigError> {
        let limit = match self.buffer_bytes {
            Some(b) => Limit::Bytes(b as u64),
            None => Limit::Packets(self.buffer_pkts as u64),
        };
        let flat = Flat {
            core_mbps: self.core_mbps,
            flows: self.flows,
            limit,
            policy: self.buffer_policy.clone(),
            queue: self.queue.clone(),
        };
        let mut net = self.topology.build(&flat)?;
        for (i, g) in self.traffic.iter().enumerate() {
            let route = match &g.0.common.route {
                None => net.default_route,
                Some(links) => {
                    net.route_over(links).map_err(|e| e.under("route").under(&i.to_string()).under("traffic"))?
                }
            };
            net.traffic_routes.push(route);
        }
        self.check_delays(&net)?;
        self.check_marking(&net)?;
        self.check_law_needs()?;
        Ok(net)
    }

    /// Every TCP of the run: the `tcp` section, its mix groups, the TCP traffic groups'.
    fn all_tcp(&self) -> Vec<TcpConfig> {
        let mixed = self.tcp_mix.as_deref().map(crate::tcp::mix::parse).and_then(Result::ok).unwrap_or_default();
        std::iter::once(self.tcp.clone())
            .chain(mixed.iter().filter_map(|g| self.tcp.group(&g.name).ok()))
            .chain(self.traffic.iter().map(|g| g.tcp_or(&self.tcp).clone()))
            .collect()
    }

    /// A law that needs ECN marks (DCTCP) needs ECN senders: without them it would be Reno. A law
    /// that paces (BBR) needs the paced release: without it, it would burst its window.
    fn check_law_needs(&self) -> Result<(), ConfigError> {
        let entry = |t: &TcpConfig| crate::tcp::LAWS.iter().find(|e| e.def.name == t.0.variant).expect("validated");
        for t in self.all_tcp() {
            let law = entry(&t);
            if law.needs_ecn && !self.tcp.common().ecn {
                return Err(ConfigError::at(
                    "tcp.ecn",
                    format!(
                        "{} reacts to ECN marks: set tcp.ecn=true (with a marking queue, e.g. queue=step)",
                        law.def.name
                    ),
                ));
            }
            if law.needs_pacing && t.common().release != "paced" {
                return Err(ConfigError::at(
                    "tcp.release",
                    format!(
                        "{} paces its packets (as Linux does): set tcp.release=paced (tcp={} has it), got {}",
                        law.def.name,
                        law.def.name,
                        t.common().release
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A queue that marks ECN needs ECN senders: refused rather than warned, since it would
    /// silently turn into a dropping queue (an `ecn` AQM) or a drop-tail one (`step`).
    fn check_marking(&self, net: &Network) -> Result<(), ConfigError> {
        if self.tcp.common().ecn {
            return Ok(());
        }
        match net.links.iter().find(|l| l.queue.0.marks()) {
            None => Ok(()),
            Some(l) => {
                let (q, key) = &l.queue;
                // Name `ecn` where it is the discipline's choice, else the discipline (`step`).
                let field = if q.has_param("ecn") { format!("{key}.ecn") } else { key.clone() };
                Err(ConfigError::at(
                    &field,
                    format!("{} marks ECN, but the senders are not ECN-capable: set tcp.ecn=true", q.name()),
                ))
            }
        }
    }

    /// Every flow's RTT covers twice its route's one-way link delay.
    fn check_delays(&self, net: &Network) -> Result<(), ConfigError> {
        let other_traffic = self.short_mbps > 0.0 || self.poisson_mbps > 0.0 || self.cbr_mbps > 0.0;
        let need = (0..net.routes.len())
            .filter(|&r| {
                net.routes[r].flows > 0 || (r == net.default_route && other_traffic) || net.traffic_routes.contains(&r)
            })
            .map(|r| 2 * net.one_way(r))
            .max()
            .unwrap_or(0);
        let min_rtt_s = match &self.rtts_ms {
            Some(list) => list.iter().copied().fold(f64::INFINITY, f64::min) / 1000.0,
            None => (self.rtt_ms - self.rtt_spread_ms / 2.0) / 1000.0,
        };
        if need > 0 && from_secs(min_rtt_s) < need {
            let key = if self.rtts_ms.is_some() { "rtts_ms" } else { "rtt_ms" };
            return Err(ConfigError::at(
                key,
                format!(
                    "flows' RTTs (from {:.3} ms) must be at least twice the one-way delay of the topology links on \
                     their route ({:.3} ms)",
                    min_rtt_s * 1e3,
                    to_secs(need) * 1e3
                ),
            ));
        }
        Ok(())
    }

    /// An adaptive policy's interval: at least the sample interval, and at most 1e7 calls.
    fn check_policy(&self, policy: &PolicyConfig) -> Result<(), ConfigError> {
        let t_ms = policy.interval_ms();
        if !policy.adaptive() {
            return Ok(());
        }
        if t_ms < self.sample_interval_s * 1000.0 {
            return Err(ConfigError::at(
                "interval_ms",
                format!(
                    "must be >= sample_interval_s ({} ms; lower sample_interval_s to control faster), got {t_ms}",
                    self.sample_interval_s * 1000.0
                ),
            ));
        }
        if self.duration_s / (t_ms / 1000.0) > 1e7 {
            return Err(ConfigError::at(
                "interval_ms",
                format!("gives more than 1e7 calls over duration_s; got {t_ms}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(key: &str, v: Value) -> Result<(SimConfig, Network), ConfigError> {
        SimConfig::from_value(&Value::map(vec![(key, v)]))
    }

    #[test]
    fn defaults_are_valid_and_round_trip() {
        let d = SimConfig::defaults();
        d.validate().unwrap();
        assert_eq!(SimConfig::parse(&d.value()).unwrap(), d);
        assert_eq!(d.tcp.0.label, "reno");
        assert_eq!(d.topology.0.variant, "dumbbell");
    }

    #[test]
    fn errors_name_the_field() {
        let field = |k: &str, v: Value| with(k, v).unwrap_err().field;
        assert_eq!(field("tcp", Value::str("vegas")), "tcp");
        assert_eq!(field("buffer_pkts", Value::Int(-1)), "buffer_pkts");
        assert_eq!(field("core_mbps", Value::Float(0.0)), "core_mbps");
        assert_eq!(field("warmup_s", Value::Float(60.0)), "warmup_s");
        assert_eq!(field("rtt_ms", Value::Float(f64::NAN)), "rtt_ms");
        assert_eq!(field("short_flow_pkts", Value::Int(0)), "short_flow_pkts");
        assert_eq!(field("short_mbps", Value::Float(-1.0)), "short_mbps");
        assert_eq!(field("bufer_pkts", Value::Int(5)), "bufer_pkts");
        let e = with("topology", Value::map(vec![("name", Value::str("ring"))])).unwrap_err();
        assert_eq!(e.to_string(), "topology.name: unknown topology \"ring\"; allowed: dumbbell, parking_lot");
        let e = with("buffer_policy", Value::map(vec![("name", Value::str("schedule"))])).unwrap_err();
        assert_eq!(e.field, "buffer_policy.steps");
        // Found by `python -m sim.fuzz`: a clamp with min > max panicked; 1 ps ticks never ended.
        let tcp = Value::map(vec![("cc", Value::str("newreno")), ("min_rto_ms", Value::Float(1e6))]);
        assert_eq!(with("tcp", tcp).unwrap_err().field, "tcp.min_rto_ms");
        let steps = Value::List(vec![Value::List(vec![Value::Float(0.0), Value::Int(5)])]);
        let ctl =
            Value::map(vec![("name", Value::str("schedule")), ("interval_ms", Value::Float(1e-9)), ("steps", steps)]);
        assert_eq!(with("buffer_policy", ctl).unwrap_err().field, "buffer_policy.interval_ms");
    }

    #[test]
    fn traffic_groups_are_checked_with_their_dotted_key() {
        let one = |g: Vec<(&str, Value)>| with("traffic", Value::List(vec![Value::map(g)]));
        let err = |g: Vec<(&str, Value)>| one(g).unwrap_err().to_string();
        let (cfg, net) = one(vec![("kind", Value::str("udp")), ("flows", Value::Int(20))]).unwrap();
        assert_eq!((cfg.traffic.len(), net.traffic_routes.clone()), (1, vec![0]));
        assert_eq!(
            err(vec![("kind", Value::str("pareto")), ("shape", Value::Float(1.0))]),
            "traffic.0.shape: must be > 1 (a Pareto law of shape <= 1 has an infinite mean), got 1"
        );
        assert_eq!(
            err(vec![("kind", Value::str("udp")), ("rate_mbps", Value::Float(-1.0))]),
            "traffic.0.rate_mbps: must be > 0, got -1"
        );
        assert_eq!(
            err(vec![("kind", Value::str("bulk")), ("schedule", Value::List(vec![]))]),
            "traffic.0.schedule: must list at least one (time_s, active_flows) step, or be null"
        );
        assert!(err(vec![("kind", Value::str("udp")), ("route", Value::List(vec![Value::Int(0), Value::Int(1)]))])
            .starts_with("traffic.0.route: link 1 does not exist; the links are 0"));
        assert_eq!(
            one(vec![("kind", Value::str("udp")), ("flows", Value::Int(0))]).unwrap_err().field,
            "traffic.0.flows"
        );
        assert_eq!(
            one(vec![("kind", Value::str("http")), ("sessions", Value::Int(0))]).unwrap_err().field,
            "traffic.0.sessions"
        );
        assert!(err(vec![("kind", Value::str("web"))]).starts_with(
            "traffic.0.kind: unknown traffic \"web\"; allowed: \
                                                                  bulk, http, pareto, udp"
        ));
        assert_eq!(
            err(vec![("kind", Value::str("udp")), ("tcp", Value::str("cubic"))]),
            "traffic.0.tcp: does not apply to udp traffic (not TCP); remove it"
        );
        let steps = Value::List(vec![Value::List(vec![Value::Float(5.0), Value::Int(3)])]);
        assert_eq!(
            err(vec![("kind", Value::str("bulk")), ("flows", Value::Int(2)), ("schedule", steps)]),
            "traffic.0.schedule.0.active_flows: must be <= flows (2), got 3"
        );
    }

    #[test]
    fn parking_lot_routes_and_links_are_checked() {
        let pl = |params: Vec<(&str, Value)>| {
            let mut t = vec![("name", Value::str("parking_lot"))];
            t.extend(params);
            with("topology", Value::map(t))
        };
        let (_, net) = pl(vec![]).unwrap();
        assert_eq!(net.links.len(), 2);
        assert_eq!(net.routes.iter().map(|r| r.links.clone()).collect::<Vec<_>>(), vec![vec![0], vec![1], vec![0, 1]]);
        assert_eq!((net.default_route, net.bottleneck), (2, 0));
        let routes = Value::List(vec![Value::map(vec![("links", Value::List(vec![Value::Int(1), Value::Int(2)]))])]);
        let e = pl(vec![("routes", routes)]).unwrap_err();
        assert_eq!(e.field, "topology.routes.0.links");
        assert!(e.message.contains("link 2 does not exist"), "{e}");
        let link = |k: &str, v: Value| Value::List(vec![Value::map(vec![(k, v)])]);
        let e = pl(vec![("links", link("rate_mbps", Value::Float(0.0)))]).unwrap_err();
        assert_eq!(e.field, "topology.links.0.rate_mbps");
        let e = pl(vec![("links", link("buffer_pkts", Value::Int(-3)))]).unwrap_err();
        assert_eq!(e.field, "topology.links.0.buffer_pkts");
        let one_route = Value::List(vec![Value::map(vec![("links", Value::List(vec![Value::Int(0)]))])]);
        let e = pl(vec![("links", link("delay_ms", Value::Float(60.0))), ("routes", one_route)]).unwrap_err();
        assert_eq!(e.field, "rtt_ms", "a 60 ms link needs RTTs of 120 ms: {e}");
    }
}
