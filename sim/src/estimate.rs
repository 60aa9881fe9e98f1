//! A run's cost from its config alone, before it runs (issue 36): the packets its links will see,
//! the events, and the memory it will hold. A fluid model, not a simulation: TCP fills the
//! narrowest link of its route unless its windows hold it back, open-loop sources offer what they
//! are set to, and memory is the state per flow plus the packets that can be in the network.
//! Its constants are measured (docs/engine.md, "Cost estimate"), and a test holds it within 2x
//! of measured runs.

use crate::config::SimConfig;
use crate::queue::Limit;
use crate::topology::Network;
use crate::traffic::Kind;

/// Events per packet arriving at a topology link, per TCP packet for its ACK, and per packet
/// crossing an access link (measured: 2.0 a packet on Dick's dumbbell, 3.1 with access links).
const EVENTS_PER_HOP: f64 = 2.0;
const EVENTS_PER_ACK: f64 = 0.5;
const EVENTS_PER_ACCESS_HOP: f64 = 1.0;
const EVENTS_PER_PACED: f64 = 1.0;
/// A TCP packet's engine time beyond Reno's, per part of its sender. Callgrind counts, per
/// bottleneck packet on Dick's scenario against Reno (docs/performance.md): SACK 1.19x, RACK-TLP
/// 1.53x, CUBIC 1.33x, RFC 9438 CUBIC with SACK 1.48x, BBR with RACK-TLP 3.04x. Taken at half or
/// less: ENGINE_EVENTS_PER_S (3 M) is Reno's speed under load, a quiet core runs it at 5-9 M,
/// and BBR's events ran at 3.1 M a second (16 flows on 1 Gb/s): the whole ratios put BBR's
/// estimate at 4x its time.
const SACK_COST: f64 = 0.1;
const RACK_COST: f64 = 0.15;
const LAW_COST: f64 = 0.15;
const RATE_SAMPLER_COST: f64 = 0.3;
/// An open-loop packet dropped as it arrives at a full link: one event, and a cheap one (45-75 ns
/// measured against 330 ns for an event at ENGINE_EVENTS_PER_S: CBR, Poisson and UDP into a
/// link a thousand times slower than their rate).
const DROPPED_ARRIVAL_WORK: f64 = 0.2;
/// Events' worth of time (at ENGINE_EVENTS_PER_S, 3 M a second) beyond the packets: a long flow's
/// set-up and its row of the flows table (17 us measured at 100,000 flows), a TCP transfer (its
/// arrival, connection and timers: 3.5 us measured for 1-packet transfers), an output row (a
/// time-series sample or a trace record: 2.4 us measured).
const EVENTS_PER_FLOW: f64 = 50.0;
const EVENTS_PER_TRANSFER: f64 = 12.0;
const EVENTS_PER_ROW: f64 = 10.0;
/// A time-series sample visits every flow (its window, its state): 8-22 ns a flow measured at
/// 10,000 flows, so a sample of many flows costs more than its row.
const EVENTS_PER_SAMPLED_FLOW: f64 = 0.06;
/// Loss-based TCP's share of what it could send through a drop-tail link whose buffer B is
/// below the Stanford rule's BDP / sqrt(N): U0 + (1 - U0) sqrt(B sqrt(N) / BDP). Fitted on two
/// presets: ABS Fig. 1's 8-packet point (10 flows, 100 Mb/s) measures 0.35 (this gives 0.31)
/// and Enachescu Fig. 2b's 1-packet point (20 paced flows) 0.09 of their windows (0.11).
const U0: f64 = 0.05;
/// TCP-LP yields to the queueing delay it measures, even to itself: ten LP flows alone on ABS
/// Fig. 1's 100 Mb/s dumbbell held 25-47% of it (0.32 from 256 to 2,048 packets of buffer).
const LP_SHARE: f64 = 0.4;
/// Bytes per long TCP flow of Reno (sender, receiver, return path, meters and its row of the
/// flows table: 1,003 B measured at 200,000 flows, 856 at a million), and what more a flow
/// holds: a SACK scoreboard (220 measured), RACK's send times and marks beyond it (450), a boxed
/// window law (200), timestamps and their delay link (200), the rate sampler (700), an access
/// link (490). Then per packet in the network (the packet and its records at the sender), per
/// time-series row, per trace row (240 B measured), per topology link.
const BYTES_PER_FLOW: f64 = 1000.0;
const SACK_BYTES: f64 = 220.0;
const RACK_BYTES: f64 = 450.0;
const LAW_BOX_BYTES: f64 = 200.0;
const STAMPS_BYTES: f64 = 200.0;
const RATE_SAMPLER_BYTES: f64 = 700.0;
const ACCESS_LINK_BYTES: f64 = 490.0;
const BYTES_PER_PKT: f64 = 200.0;
const BYTES_PER_ROW: f64 = 600.0;
const BYTES_PER_TRACE_ROW: f64 = 250.0;
const BYTES_PER_LINK: f64 = 50_000.0;

/// What a run costs, and which config keys drive it (largest share first).
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    /// Packet arrivals at topology links, drops included: the sum of `links.arrivals`.
    pub packets: f64,
    pub events: f64,
    /// The engine's peak memory, its output tables included (the interpreter not).
    pub memory_bytes: f64,
    /// The engine's time, as events' worth at the speed of an average one: `events` with a
    /// dropped open-loop arrival counted DROPPED_ARRIVAL_WORK and a TCP packet by its sender's
    /// cost (`FlowCost::per_pkt`).
    pub work: f64,
    /// (key, packets it drives) and (key, bytes it drives).
    pub packet_drivers: Vec<(String, f64)>,
    pub memory_drivers: Vec<(String, f64)>,
    /// When long TCP flows cross the bottleneck and the load offered there (their windows, each
    /// a window per mean RTT, plus every other source's rate) is below its capacity: that load
    /// over the capacity, the most utilization the windows allow (`wmax_pkts`, `tcp.sndbuf_pkts`).
    pub window_cap_utilization: Option<f64>,
}

/// One source of traffic on a route: what it offers, in packets per second.
struct Source {
    route: usize,
    key: String,
    pkts_per_s: f64,
    /// TCP adapts to the route's capacity; open-loop traffic does not.
    tcp: bool,
    /// TCP transfers (short flows, pareto, http): their mean size in packets. Each is a
    /// connection; those the link cannot serve wait, in memory, until the run ends.
    transfer_pkts: Option<f64>,
}

pub fn estimate(cfg: &SimConfig, net: &Network) -> Estimate {
    let pkt_bits = cfg.pkt_bytes as f64 * 8.0;
    let cap: Vec<f64> = net.links.iter().map(|l| l.rate_bps / pkt_bits).collect();
    let rtt_s = mean_rtt_s(cfg);
    let sources = sources(cfg, net, rtt_s);
    let mut est = Estimate::default();
    let mut tcp_on_link = vec![0.0; cap.len()];
    for s in sources.iter().filter(|s| s.tcp) {
        for &l in &net.routes[s.route].links {
            tcp_on_link[l] += s.pkts_per_s;
        }
    }
    // TCP shares each link: scale every TCP source down to its most loaded link's capacity, and
    // to what a small buffer lets loss-based TCP use of it.
    let duration = cfg.duration_s;
    let flows_on_link = tcp_flows_on_links(cfg, net);
    let mut waiting = Vec::new();
    let lp = cfg.tcp.0.variant == "lp";
    let share: Vec<f64> = (0..cap.len())
        .map(|l| utilization(cfg, net, l, flows_on_link[l], rtt_s).min(if lp { LP_SHARE } else { 1.0 }))
        .collect();
    let tcp_cost = tcp_flow_cost(cfg);
    for s in &sources {
        let links = &net.routes[s.route].links;
        let squeeze =
            if s.tcp { links.iter().map(|&l| (cap[l] / tcp_on_link[l]).min(1.0)).fold(1.0, f64::min) } else { 1.0 };
        let rate = if s.tcp {
            s.pkts_per_s * squeeze * links.iter().map(|&l| share[l]).fold(1.0, f64::min)
        } else {
            s.pkts_per_s
        };
        // An open-loop source's packets all reach its first link; each later one sees at most
        // what the link before it carried, and what a link cannot carry it drops as it arrives.
        let (mut through, mut pkts, mut dropped) = (rate, 0.0, 0.0);
        for &l in links {
            pkts += through * duration;
            dropped += (through - cap[l]).max(0.0) * duration;
            through = through.min(cap[l]);
        }
        est.packets += pkts;
        // TCP held back by its links costs what they carry: their rate drives it.
        let key = if squeeze < 1.0 && s.key == "flows" { "core_mbps" } else { s.key.as_str() };
        let acks = if s.tcp { through * duration * EVENTS_PER_ACK } else { 0.0 };
        let access = if s.tcp && cfg.access_mbps.is_some() { through * duration * EVENTS_PER_ACCESS_HOP } else { 0.0 };
        let paced = if s.tcp && paced(cfg) { through * duration * EVENTS_PER_PACED } else { 0.0 };
        let carried = (pkts - dropped) * EVENTS_PER_HOP + acks + access + paced;
        est.events += carried + dropped;
        est.work += carried * if s.tcp { tcp_cost.per_pkt } else { 1.0 } + dropped * DROPPED_ARRIVAL_WORK;
        if let Some(size) = s.transfer_pkts {
            // Every transfer starts; those beyond what the links serve send their first window
            // (dropped) and stay open, their timers backing off, to the end.
            let (arriving, served) = (s.pkts_per_s / size, rate / size);
            let first = (arriving - served) * duration * size.min(first_window(cfg));
            est.packets += first;
            let events = arriving * duration * EVENTS_PER_TRANSFER + first * EVENTS_PER_HOP;
            est.events += events;
            est.work += events;
            let open = ((arriving - served) * duration + served * 2.0 * rtt_s).min(arriving * duration);
            waiting.push((s.key.clone(), open));
            add(&mut est.packet_drivers, &s.key, first);
        }
        add(&mut est.packet_drivers, key, pkts);
    }
    let flows = net.long_flows() as f64 + bulk_flows(cfg);
    est.window_cap_utilization = window_cap_utilization(net, &sources, &cap);
    let burst = flows * first_window(cfg);
    est.packets += burst;
    est.events += burst * EVENTS_PER_HOP;
    est.work += burst * EVENTS_PER_HOP * tcp_cost.per_pkt;
    add(&mut est.packet_drivers, "tcp.init_cwnd_pkts", burst);
    let rows = samples(cfg, net) + (cfg.trace_max_events as f64).min(est.events);
    let intervals = (cfg.duration_s / cfg.sample_interval_s).ceil();
    // A sample visits every connection, and those transfers left open pile up through the run.
    let open: f64 = waiting.iter().map(|(_, n)| n).sum();
    let sampled = intervals * (flows + open / 2.0) * EVENTS_PER_SAMPLED_FLOW;
    let fixed = rows * EVENTS_PER_ROW + flows * EVENTS_PER_FLOW + sampled;
    est.events += fixed;
    est.work += fixed;
    memory(cfg, net, &cap, rtt_s, (flows, tcp_cost.bytes), burst, &mut est);
    for (key, open) in waiting {
        est.memory_bytes += open * tcp_cost.bytes;
        add(&mut est.memory_drivers, &key, open * tcp_cost.bytes);
    }
    est.packet_drivers.sort_by(|a, b| b.1.total_cmp(&a.1));
    est.memory_drivers.sort_by(|a, b| b.1.total_cmp(&a.1));
    est
}

/// What a TCP flow costs: the bytes it holds and its packets' engine time relative to Reno's.
struct FlowCost {
    bytes: f64,
    per_pkt: f64,
}

/// The cost of a flow of `t`, from what its components keep and do (their own flags).
fn flow_cost(t: &crate::tcp::TcpConfig, access: bool) -> FlowCost {
    use crate::tcp::{Recovery, WindowLaw};
    let (law, recovery) = ((t.law_factory())(), t.make_recovery());
    let sack = recovery.uses_sack();
    let rack = recovery.wants_send_times();
    let boxed = !matches!(t.0.variant, "newreno" | "highspeed" | "scalable" | "dctcp");
    let (stamps, rate) = (law.wants_timestamps(), law.wants_rate_samples());
    let has = |on: bool, v: f64| if on { v } else { 0.0 };
    FlowCost {
        bytes: BYTES_PER_FLOW
            + has(sack, SACK_BYTES)
            + has(rack, RACK_BYTES)
            + has(boxed, LAW_BOX_BYTES)
            + has(stamps, STAMPS_BYTES)
            + has(rate, RATE_SAMPLER_BYTES)
            + has(access, ACCESS_LINK_BYTES),
        per_pkt: 1.0
            + has(sack, SACK_COST)
            + has(rack, RACK_COST)
            + has(t.0.variant != "newreno", LAW_COST)
            + has(rate, RATE_SAMPLER_COST),
    }
}

/// The cost of the run's long flows: the `tcp` section's, or its mix's groups' weighted by flows.
fn tcp_flow_cost(cfg: &SimConfig) -> FlowCost {
    let access = cfg.access_mbps.is_some();
    let Some(groups) = cfg.tcp_mix.as_deref().and_then(|m| crate::tcp::mix::parse(m).ok()) else {
        return flow_cost(&cfg.tcp, access);
    };
    let total: f64 = groups.iter().map(|g| g.flows as f64).sum::<f64>().max(1.0);
    let mut out = FlowCost { bytes: 0.0, per_pkt: 0.0 };
    for g in &groups {
        let c = cfg.tcp.group(&g.name).map_or_else(|_| flow_cost(&cfg.tcp, access), |t| flow_cost(&t, access));
        out.bytes += c.bytes * g.flows as f64 / total;
        out.per_pkt += c.per_pkt * g.flows as f64 / total;
    }
    out
}

/// The load offered at the bottleneck over its capacity, when long TCP flows cross it and that is
/// below 1 (see `Estimate::window_cap_utilization`).
fn window_cap_utilization(net: &Network, sources: &[Source], cap: &[f64]) -> Option<f64> {
    let b = net.bottleneck;
    let crossing: Vec<&Source> = sources.iter().filter(|s| net.routes[s.route].links.contains(&b)).collect();
    let long_tcp = crossing.iter().any(|s| s.tcp && s.transfer_pkts.is_none());
    let offered = crossing.iter().map(|s| s.pkts_per_s).sum::<f64>() / cap[b];
    (long_tcp && offered < 1.0).then_some(offered)
}

/// Long TCP flows (flat and bulk groups) crossing each topology link.
fn tcp_flows_on_links(cfg: &SimConfig, net: &Network) -> Vec<f64> {
    let mut n = vec![0.0; net.links.len()];
    for r in &net.routes {
        r.links.iter().for_each(|&l| n[l] += r.flows as f64);
    }
    for (i, g) in cfg.traffic.iter().enumerate() {
        if let Kind::Bulk(b) = g.kind() {
            net.routes[net.traffic_routes[i]].links.iter().for_each(|&l| n[l] += b.flows as f64);
        }
    }
    n
}

/// The share of what it could send that loss-based TCP gets through link `l` (see U0): 1 unless the link is a fixed drop-tail
/// buffer below BDP / sqrt(N); an AQM or a buffer policy is taken to keep it busy.
fn utilization(cfg: &SimConfig, net: &Network, l: usize, flows: f64, rtt_s: f64) -> f64 {
    let link = &net.links[l];
    let loss_based = !cfg.tcp.0.variant.starts_with("bbr"); // BBR paces at the rate it measures
    if link.policy.0 .0.variant != "fixed" || link.queue.0.name() != "droptail" || flows < 1.0 || !loss_based {
        return 1.0;
    }
    let buffer = match link.limit {
        Limit::Packets(n) => n as f64,
        Limit::Bytes(b) => b as f64 / cfg.pkt_bytes as f64,
    };
    let windows = flows * window_cap(cfg) as f64;
    if windows <= buffer {
        return 1.0; // the windows fit in the buffer: nothing to lose
    }
    let bdp = link.rate_bps / (cfg.pkt_bytes as f64 * 8.0) * rtt_s;
    if windows <= bdp && window_cap(cfg) as f64 <= buffer {
        // The windows cannot fill the link and each flow's burst fits in the buffer: 7 flows of
        // 64 packets on 1 Gb/s got all their windows through 100 packets (the rule below said
        // 8%), where one Reno flow of 32 packets into 1 packet got a twentieth of its window.
        return 1.0;
    }
    (U0 + (1.0 - U0) * (buffer * flows / bdp.max(1.0)).sqrt()).min(1.0)
}

/// Memory: state per flow and link, the packets that can be in the network (in flight on every
/// route, in every buffer, and a first window that overshoots both), and the output tables.
fn memory(cfg: &SimConfig, net: &Network, cap: &[f64], rtt_s: f64, flows: (f64, f64), burst: f64, est: &mut Estimate) {
    let (flows, bytes_per_flow) = flows;
    let bdp: f64 =
        net.routes.iter().map(|r| r.links.iter().map(|&l| cap[l]).fold(f64::INFINITY, f64::min)).sum::<f64>() * rtt_s;
    let buffers: f64 = net
        .links
        .iter()
        .zip(cap)
        .map(|(l, c)| {
            match l.limit {
                Limit::Packets(n) => n as f64,
                Limit::Bytes(b) => b as f64 / cfg.pkt_bytes as f64,
            }
            .max(if l.policy.0 .0.variant == "fixed" { 0.0 } else { c * rtt_s })
        })
        .sum();
    // TCP's packets are at most its windows; open-loop packets at most the buffers.
    let tcp = (bdp + buffers).min(flows.max(1.0) * window_cap(cfg) as f64).max(burst);
    let open_loop =
        cfg.poisson_mbps + cfg.cbr_mbps > 0.0 || cfg.traffic.iter().any(|g| matches!(g.kind(), Kind::Udp(_)));
    let in_flight = tcp + if open_loop { buffers } else { 0.0 };
    let samples = samples(cfg, net);
    let parts = [
        ("flows", flows * bytes_per_flow),
        (if burst >= bdp + buffers { "tcp.init_cwnd_pkts" } else { "core_mbps" }, in_flight * BYTES_PER_PKT),
        ("sample_interval_s", samples * BYTES_PER_ROW),
        ("trace_max_events", (cfg.trace_max_events as f64).min(est.events) * BYTES_PER_TRACE_ROW),
        ("topology", net.links.len() as f64 * BYTES_PER_LINK),
    ];
    for (key, bytes) in parts {
        est.memory_bytes += bytes;
        add(&mut est.memory_drivers, key, bytes);
    }
}

/// Time-series rows: a sample per interval and link.
fn samples(cfg: &SimConfig, net: &Network) -> f64 {
    (cfg.duration_s / cfg.sample_interval_s).ceil() * net.links.len() as f64
}

fn add(drivers: &mut Vec<(String, f64)>, key: &str, v: f64) {
    match drivers.iter_mut().find(|(k, _)| k == key) {
        Some((_, total)) => *total += v,
        None => drivers.push((key.to_string(), v)),
    }
}

/// The senders release on a timer: a paced release, or a law that sets a pacing rate (BBR).
fn paced(cfg: &SimConfig) -> bool {
    cfg.tcp.common().release != "window" || cfg.tcp.0.variant == "bbr"
}

/// The most a TCP flow can have outstanding: the receiver's window or the send buffer.
fn window_cap(cfg: &SimConfig) -> i64 {
    cfg.wmax_pkts.min(cfg.tcp.common().sndbuf_pkts)
}

/// A flow's first window, sent at once: what a huge initial window puts in the network.
fn first_window(cfg: &SimConfig) -> f64 {
    cfg.tcp.common().init_cwnd_pkts.min(window_cap(cfg) as f64)
}

fn mean_rtt_s(cfg: &SimConfig) -> f64 {
    match &cfg.rtts_ms {
        Some(v) if !v.is_empty() => v.iter().sum::<f64>() / v.len() as f64 / 1e3,
        _ => cfg.rtt_ms / 1e3,
    }
}

fn bulk_flows(cfg: &SimConfig) -> f64 {
    cfg.traffic.iter().map(|g| if let Kind::Bulk(b) = g.kind() { b.flows as f64 } else { 0.0 }).sum()
}

/// Every source of the run: long flows per route (window-limited at window_cap / RTT each),
/// the flat open-loop and short-flow loads, and the traffic groups.
fn sources(cfg: &SimConfig, net: &Network, rtt_s: f64) -> Vec<Source> {
    let pkt_bits = cfg.pkt_bytes as f64 * 8.0;
    let per_flow = window_cap(cfg) as f64 / rtt_s;
    let access = cfg.access_mbps.map_or(f64::INFINITY, |m| m * 1e6 / pkt_bits);
    let tcp_flows = |n: f64| n * per_flow.min(access);
    let mut out: Vec<Source> = net
        .routes
        .iter()
        .enumerate()
        .filter(|(_, r)| r.flows > 0)
        .map(|(i, r)| Source {
            route: i,
            key: "flows".into(),
            pkts_per_s: tcp_flows(r.flows as f64),
            tcp: true,
            transfer_pkts: None,
        })
        .collect();
    let open_bits = cfg.open_loop_bytes.unwrap_or(cfg.pkt_bytes) as f64 * 8.0;
    let route = net.default_route;
    let short = Some(cfg.short_flow_pkts as f64);
    for (key, mbps, bits, tcp, transfer_pkts) in [
        ("poisson_mbps", cfg.poisson_mbps, open_bits, false, None),
        ("cbr_mbps", cfg.cbr_mbps, open_bits, false, None),
        ("short_mbps", cfg.short_mbps, pkt_bits, true, short),
    ] {
        if mbps > 0.0 {
            out.push(Source { route, key: key.into(), pkts_per_s: mbps * 1e6 / bits, tcp, transfer_pkts });
        }
    }
    for (i, g) in cfg.traffic.iter().enumerate() {
        let route = net.traffic_routes[i];
        let pkts_of = |bytes: f64| (bytes / cfg.pkt_bytes as f64).ceil().max(1.0);
        let (key, pkts_per_s, tcp, transfer_pkts) = match g.kind() {
            Kind::Bulk(b) => ("flows", tcp_flows(b.flows as f64), true, None),
            Kind::Pareto(p) => {
                let size = if p.size == "fixed" { p.size_pkts as f64 } else { pkts_of(p.mean_bytes) };
                ("load_mbps", p.load_mbps * 1e6 / pkt_bits, true, Some(size))
            }
            Kind::Udp(u) => {
                let bits = u.pkt_bytes.unwrap_or(cfg.pkt_bytes) as f64 * 8.0;
                ("rate_mbps", u.flows as f64 * u.rate_mbps * 1e6 / bits, false, None)
            }
            Kind::Http(h) => {
                let rate = http_pkts_per_s(&h, cfg.duration_s) * 8.0 / pkt_bits;
                ("sessions", rate, true, Some(pkts_of(h.object_mean_bytes)))
            }
        };
        out.push(Source { route, key: format!("traffic.{i}.{key}"), pkts_per_s, tcp, transfer_pkts });
    }
    out
}

/// An http group's offered load in bytes per second: its sessions in progress (all of them, or
/// arrivals over a session's life) times a session's pages of objects.
fn http_pkts_per_s(h: &crate::traffic::http::HttpParams, duration_s: f64) -> f64 {
    let objects = (h.objects_min + h.objects_max) as f64 / 2.0;
    let page_s = h.inter_page_s + objects * h.inter_object_s;
    let session_bytes_per_s = objects * h.object_mean_bytes / page_s;
    let life_s = (h.pages_min + h.pages_max) as f64 / 2.0 * page_s;
    let concurrent = match h.arrival.as_str() {
        "all" => h.sessions as f64,
        _ => (h.arrival_rate_per_s * life_s.min(duration_s)).min(h.sessions as f64),
    };
    concurrent * session_bytes_per_s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Value;

    fn est(pairs: Vec<(&str, Value)>) -> Estimate {
        let (cfg, net) = SimConfig::from_value(&Value::map(pairs)).expect("valid");
        estimate(&cfg, &net)
    }

    #[test]
    fn tcp_fills_the_link_and_open_loop_offers_its_load() {
        let base =
            || vec![("flows", Value::Int(10)), ("core_mbps", Value::Float(10.0)), ("wmax_pkts", Value::Int(1000))];
        let tcp = est(base());
        // 10 Mb/s of 1000-byte packets for 60 s, and a first window of 2 packets a flow.
        assert!((tcp.packets - (1250.0 * 60.0 + 20.0)).abs() < 1.0, "{}", tcp.packets);
        let mut open = base();
        open.push(("poisson_mbps", Value::Float(1e4)));
        let open = est(open);
        assert!(open.packets > 1e3 * tcp.packets);
        assert_eq!(open.packet_drivers[0].0, "poisson_mbps");
    }

    #[test]
    fn window_limited_flows_send_a_window_a_round_trip() {
        let e = est(vec![("flows", Value::Int(2)), ("wmax_pkts", Value::Int(10)), ("rtt_ms", Value::Float(100.0))]);
        assert!((e.packets - (2.0 * 100.0 * 60.0 + 4.0)).abs() < 1.0, "{}", e.packets);
    }

    #[test]
    fn a_huge_first_window_costs_the_send_buffer_not_the_window() {
        let tcp = Value::map(vec![("cc", Value::str("cubic")), ("init_cwnd_pkts", Value::Float(1e9))]);
        let e = est(vec![("flows", Value::Int(9)), ("wmax_pkts", Value::Int(1 << 30)), ("tcp", tcp)]);
        assert_eq!(first_window_of(&e), 9.0 * 65536.0);
        assert!(e.memory_bytes < 9.0 * 65536.0 * BYTES_PER_PKT * 1.5);
    }

    fn first_window_of(e: &Estimate) -> f64 {
        e.packet_drivers.iter().find(|(k, _)| k == "tcp.init_cwnd_pkts").map(|d| d.1).unwrap_or(0.0)
    }
}
