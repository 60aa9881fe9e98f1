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
/// 1.53x, CUBIC 1.33x, RFC 9438 CUBIC with SACK 1.48x, BBR with RACK-TLP 3.04x. A law's
/// arithmetic is cheaper than its count says (100 CUBIC flows: 172 ns a packet, Reno 150-240), BBR's rate
/// sampler and pacing dearer (16 BBR flows: 300 ns an event on a quiet core).
const SACK_COST: f64 = 0.15;
const RACK_COST: f64 = 0.3;
const LAW_COST: f64 = 0.15;
const RATE_SAMPLER_COST: f64 = 1.2;
/// BBR's packets grow dearer as its flows outgrow the caches (each touches its flow's sampler,
/// rings and model): this much more per tenfold flows beyond 1,000. Measured with another job on
/// the second core: 1.15 us a packet at 1,000 flows, 3.4 at 100,000, 4.9 at a million (issue 73).
const RATE_SAMPLER_COST_PER_DECADE: f64 = 0.6;
/// A packet's work is this much more where its route crosses an FQ-CoDel link (its flow hashed
/// to a queue of its own, CoDel's state, the round robin): per carried packet, against drop-tail
/// at the same 10 Gb/s (CPU time, beside another job): 0.26 us against 0.17 at 100 CUBIC flows,
/// 0.48 against 0.27 at 1,000, 6.2 against 4.5 at 100,000 (issue 73).
const FQ_CODEL_COST: f64 = 0.5;
/// CUBIC's C, packets / s^3 (RFC 9438): how fast a law other than AIMD regrows its window.
const CUBIC_C: f64 = 0.4;
/// A TCP packet's work, in events at ENGINE_EVENTS_PER_S, per event it takes (its hops, its ACK):
/// a quiet core ran Reno's at 215-275 ns a packet (2.5 events) from 10 to 300,000 flows at loss
/// below 3%; taken at 1.5x that, for a core shared with another job.
const TCP_EVENT_WORK: f64 = 0.4;
/// A TCP packet dropped at a topology link: its recovery, its retransmission's timers and, at
/// loss rates where windows are a few packets, the timeouts. Dearer as the flows outgrow the
/// caches (measured on a quiet core: 1.1 us a drop at 1,000 flows, 2.8 us at 30,000-300,000,
/// 3.9 us at a million): LOSS_WORK events, and LOSS_WORK_PER_DECADE more per tenfold flows
/// beyond 1,000.
const LOSS_WORK: f64 = 5.0;
const LOSS_WORK_PER_DECADE: f64 = 3.0;
/// The most a loss-based flow loses: at windows of a packet or two its timeouts hold it there
/// (measured 18-21% at 1.25 packets a flow for Reno, 34-36% at 0.83 for the `cubic` preset,
/// behind drop-tail and FQ-CoDel: 100,000 flows at 10 Gb/s).
const LOSS_MAX: f64 = 0.35;
/// An open-loop packet dropped as it arrives at a full link: one event, and a cheap one (45-75 ns
/// measured against 330 ns for an event at ENGINE_EVENTS_PER_S: CBR, Poisson and UDP into a
/// link a thousand times slower than their rate).
const DROPPED_ARRIVAL_WORK: f64 = 0.2;
/// An open-loop packet the links carry: a third of a TCP packet's time, no sender or receiver
/// to run (1,000 Mb/s of 41-byte Poisson packets through 10 Gb/s: 19 M events a second).
const OPEN_LOOP_WORK: f64 = 0.3;
/// Events' worth of time (at ENGINE_EVENTS_PER_S, 3 M a second) beyond the packets: a long flow's
/// set-up and its row of the flows table (2.7-6.7 us measured at a million and 100,000 flows;
/// 17 us before the flows table became Arrow buffers), a TCP transfer (its
/// arrival, connection and timers: 3.5 us measured for 1-packet transfers), an output row (a
/// time-series sample or a trace record: 0.3-0.7 us measured since tables reach Python as Arrow
/// buffers; 2.4 us before).
const EVENTS_PER_FLOW: f64 = 20.0;
const EVENTS_PER_TRANSFER: f64 = 12.0;
const EVENTS_PER_ROW: f64 = 2.0;
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
/// time-series row (367 B measured) and trace row (83 B), per topology link.
const BYTES_PER_FLOW: f64 = 1000.0;
const SACK_BYTES: f64 = 220.0;
const RACK_BYTES: f64 = 450.0;
const LAW_BOX_BYTES: f64 = 200.0;
const STAMPS_BYTES: f64 = 200.0;
/// The rate sampler with BBR's state (its only law): 4.9 KB a BBR flow in all, measured at
/// 20,000 and 40,000 flows of a few packets each (issue 73; 700 B was the sampler's alone).
const RATE_SAMPLER_BYTES: f64 = 3000.0;
/// A sender's per-packet rings (`seq_ring.rs`: send times, RACK's marks, rate records) hold
/// 4-8 times the span from the cumulative ACK at its largest, and never shrink: slots per packet
/// the network holds. BBR's start-up (2.89 x the rate) and the spans of its recoveries make it
/// 24: 1.6-2.2 KB per packet of BDP and buffer measured at 10 and 100 Gb/s (1,000-100,000
/// flows, 20 and 100 ms; 1.2 KB with SACK in RACK-TLP's place), against 0.2 KB for the packet.
const RING_SLOTS_PER_PKT: f64 = 3.0;
const BBR_RING_SLOTS_PER_PKT: f64 = 24.0;
const ACCESS_LINK_BYTES: f64 = 490.0;
const BYTES_PER_PKT: f64 = 200.0;
/// A first window's packet that the network cannot hold: its sequence number, queued to send.
const BYTES_PER_DROPPED_PKT: f64 = 16.0;
const BYTES_PER_ROW: f64 = 400.0;
const BYTES_PER_TRACE_ROW: f64 = 100.0;
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
    /// Long TCP flows: how many (they share `pkts_per_s`); 0 for the other sources.
    flows: f64,
}

pub fn estimate(cfg: &SimConfig, net: &Network) -> Estimate {
    let cfg = &capped(cfg);
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
    // A drop's recovery, and BBR's packets, dearer as the flows outgrow the caches (LOSS_WORK).
    let flows_total = net.long_flows() as f64 + bulk_flows(cfg);
    let decades = (flows_total / 1000.0).max(1.0).log10();
    let mut tcp_cost = tcp_flow_cost(cfg);
    tcp_cost.per_pkt *= 1.0 + tcp_cost.per_pkt_per_decade * decades;
    let per_drop = LOSS_WORK + LOSS_WORK_PER_DECADE * decades;
    let loss: Vec<f64> = (0..cap.len()).map(|l| loss_rate(cfg, net, l, flows_on_link[l], rtt_s)).collect();
    let mut dropped_at_links = 0.0;
    let mut tcp_flight = 0.0; // TCP's packets in flight at its rates: a round trip's worth
    for s in &sources {
        let links = &net.routes[s.route].links;
        let squeeze =
            if s.tcp { links.iter().map(|&l| (cap[l] / tcp_on_link[l]).min(1.0)).fold(1.0, f64::min) } else { 1.0 };
        let mut rate = if s.tcp {
            s.pkts_per_s * squeeze * links.iter().map(|&l| share[l]).fold(1.0, f64::min)
        } else {
            s.pkts_per_s
        };
        if s.flows > 0.0 {
            let window = rate / s.flows * rtt_s;
            rate *= ramp(cfg, rate / s.flows, rtt_s, slow_start_exit(cfg, net, links, &cap, window));
        }
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
        dropped_at_links += dropped;
        if s.tcp {
            tcp_flight += through * rtt_s;
        }
        let queues =
            1.0 + links.iter().filter(|&&l| net.links[l].queue.0.name() == "fq_codel").count() as f64 * FQ_CODEL_COST;
        est.work +=
            carried * queues * if s.tcp { tcp_cost.per_pkt } else { OPEN_LOOP_WORK } + dropped * DROPPED_ARRIVAL_WORK;
        if s.tcp && s.transfer_pkts.is_none() {
            // Long flows lose at their most congested link (those their own windows hold below
            // it lose nothing there).
            let saturated = |l: &usize| tcp_on_link[*l] * share[*l] >= cap[*l];
            let p = links.iter().filter(|l| saturated(l)).map(|&l| loss[l]).fold(0.0, f64::max);
            est.work += through * duration * p * per_drop;
        }
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
    let flows = flows_total;
    est.window_cap_utilization = window_cap_utilization(net, &sources, &cap);
    // A first window goes out at once: what the network cannot hold is dropped as it arrives.
    let burst = flows * first_window(cfg);
    let held = burst.min(holding_pkts(cfg, net, &cap, rtt_s, flows));
    est.packets += burst;
    est.events += held * EVENTS_PER_HOP + (burst - held);
    est.work += held * EVENTS_PER_HOP * tcp_cost.per_pkt + (burst - held) * DROPPED_ARRIVAL_WORK;
    add(&mut est.packet_drivers, "tcp.init_cwnd_pkts", burst);
    // A trace records each packet's arrival at a topology link, and its departure if carried.
    let traced = (cfg.trace_max_events as f64).min(2.0 * est.packets - dropped_at_links);
    let rows = samples(cfg, net) + traced;
    let intervals = (cfg.duration_s / cfg.sample_interval_s).ceil();
    // A sample visits every connection, and those transfers left open pile up through the run.
    let open: f64 = waiting.iter().map(|(_, n)| n).sum();
    let sampled = intervals * (flows + open / 2.0) * EVENTS_PER_SAMPLED_FLOW;
    let fixed = rows * EVENTS_PER_ROW + flows * EVENTS_PER_FLOW + sampled;
    est.events += fixed;
    est.work += fixed;
    memory(cfg, net, &cap, (rtt_s, tcp_flight), (flows, &tcp_cost), (held, burst - held), &mut est);
    est.memory_bytes += traced * BYTES_PER_TRACE_ROW;
    add(&mut est.memory_drivers, "trace_max_events", traced * BYTES_PER_TRACE_ROW);
    for (key, open) in waiting {
        est.memory_bytes += open * tcp_cost.bytes;
        add(&mut est.memory_drivers, &key, open * tcp_cost.bytes);
    }
    est.packet_drivers.sort_by(|a, b| b.1.total_cmp(&a.1));
    est.memory_drivers.sort_by(|a, b| b.1.total_cmp(&a.1));
    est
}

/// What a TCP flow costs: the bytes it holds, those its rings keep per packet it has in the
/// network, and its packets' engine time relative to Reno's.
struct FlowCost {
    bytes: f64,
    ring_bytes_per_pkt: f64,
    per_pkt: f64,
    /// The share `per_pkt` grows by per tenfold flows beyond 1,000.
    per_pkt_per_decade: f64,
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
    use crate::tcp::{rate::RECORD_BYTES, recovery::rack_marks::SLOT_BYTES};
    let slot_bytes = has(stamps || rack, 8.0) + has(rack, SLOT_BYTES as f64) + has(rate, RECORD_BYTES as f64);
    let slots = if t.0.variant == "bbr" { BBR_RING_SLOTS_PER_PKT } else { RING_SLOTS_PER_PKT };
    FlowCost {
        ring_bytes_per_pkt: slot_bytes * slots,
        bytes: BYTES_PER_FLOW
            + has(sack, SACK_BYTES)
            + has(rack, RACK_BYTES)
            + has(boxed, LAW_BOX_BYTES)
            + has(stamps, STAMPS_BYTES)
            + has(rate, RATE_SAMPLER_BYTES)
            + has(access, ACCESS_LINK_BYTES),
        per_pkt: TCP_EVENT_WORK
            * (1.0
                + has(sack, SACK_COST)
                + has(rack, RACK_COST)
                + has(t.0.variant != "newreno", LAW_COST)
                + has(rate, RATE_SAMPLER_COST)),
        per_pkt_per_decade: has(rate, RATE_SAMPLER_COST_PER_DECADE),
    }
}

/// The cost of the run's long flows: the `tcp` section's, or its mix's groups' weighted by flows.
fn tcp_flow_cost(cfg: &SimConfig) -> FlowCost {
    let access = cfg.access_mbps.is_some();
    let Some(groups) = cfg.tcp_mix.as_deref().and_then(|m| crate::tcp::mix::parse(m).ok()) else {
        return flow_cost(&cfg.tcp, access);
    };
    let total: f64 = groups.iter().map(|g| g.flows as f64).sum::<f64>().max(1.0);
    let mut out = FlowCost { bytes: 0.0, ring_bytes_per_pkt: 0.0, per_pkt: 0.0, per_pkt_per_decade: 0.0 };
    for g in &groups {
        let c = cfg.tcp.group(&g.name).map_or_else(|_| flow_cost(&cfg.tcp, access), |t| flow_cost(&t, access));
        out.bytes += c.bytes * g.flows as f64 / total;
        out.ring_bytes_per_pkt += c.ring_bytes_per_pkt * g.flows as f64 / total;
        out.per_pkt += c.per_pkt * g.flows as f64 / total;
        out.per_pkt_per_decade += c.per_pkt_per_decade * g.flows as f64 / total;
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

/// The loss rate of the long TCP flows that fill link `l`: AIMD's sawtooth, a drop per 3 W^2 / 8
/// packets, W the window a flow holds when its link drops (the link's BDP and buffer shared by
/// its `flows`). CUBIC, BBR and the AQMs are taken alike: it prices recoveries, it is not a
/// metric (measured within 2.5x of it from 0.2% to 8%). At most LOSS_MAX.
fn loss_rate(cfg: &SimConfig, net: &Network, l: usize, flows: f64, rtt_s: f64) -> f64 {
    let link = &net.links[l];
    let bdp = link.rate_bps / (cfg.pkt_bytes as f64 * 8.0) * rtt_s;
    if flows < 1.0 {
        return 0.0;
    }
    let window = (bdp + buffer_pkts(cfg, link, bdp)) / flows;
    (8.0 / (3.0 * window * window)).min(LOSS_MAX)
}

/// The share of what it could send that loss-based TCP gets through link `l` (see U0): 1 unless the link is a fixed drop-tail
/// buffer below BDP / sqrt(N); an AQM or a buffer policy is taken to keep it busy.
fn utilization(cfg: &SimConfig, net: &Network, l: usize, flows: f64, rtt_s: f64) -> f64 {
    let link = &net.links[l];
    if link.policy.0 .0.variant != "fixed" || link.queue.0.name() != "droptail" || flows < 1.0 || has_bbr(cfg) {
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

/// The config as it costs: a run that stops on precision runs at most to its cap.
fn capped(cfg: &SimConfig) -> std::borrow::Cow<'_, SimConfig> {
    if cfg.precision.on() {
        std::borrow::Cow::Owned(SimConfig { duration_s: cfg.end_s(), ..cfg.clone() })
    } else {
        std::borrow::Cow::Borrowed(cfg)
    }
}

/// Packets the network can hold at once: every route's bandwidth-delay product and every
/// buffer (an adaptive one at its link's BDP), and the access buffers of `flows` flows (0: none).
fn holding_pkts(cfg: &SimConfig, net: &Network, cap: &[f64], rtt_s: f64, flows: f64) -> f64 {
    let bdp: f64 =
        net.routes.iter().map(|r| r.links.iter().map(|&l| cap[l]).fold(f64::INFINITY, f64::min)).sum::<f64>() * rtt_s;
    let buffers: f64 = net.links.iter().zip(cap).map(|(l, c)| buffer_pkts(cfg, l, c * rtt_s)).sum();
    let access = if cfg.access_mbps.is_some() { flows * cfg.access_buffer_pkts as f64 } else { 0.0 };
    bdp + buffers + access
}

fn buffer_pkts(cfg: &SimConfig, l: &crate::topology::LinkSpec, bdp: f64) -> f64 {
    match l.limit {
        Limit::Packets(n) => n as f64,
        Limit::Bytes(b) => b as f64 / cfg.pkt_bytes as f64,
    }
    .max(if l.policy.0 .0.variant == "fixed" { 0.0 } else { bdp })
}

/// Memory: state per flow (`flows`: how many, bytes each) and link, the packets that can be in
/// the network (`flight`: the mean RTT and TCP's packets in flight at its rates; in every buffer,
/// and the first windows it holds), those
/// of the first windows it drops (their sequence numbers, queued to send), and the output tables.
fn memory(
    cfg: &SimConfig,
    net: &Network,
    cap: &[f64],
    flight: (f64, f64),
    flows: (f64, &FlowCost),
    burst: (f64, f64),
    est: &mut Estimate,
) {
    let ((rtt_s, tcp_flight), (flows, cost), (held, dropped)) = (flight, flows, burst);
    let buffers: f64 = net.links.iter().zip(cap).map(|(l, c)| buffer_pkts(cfg, l, c * rtt_s)).sum();
    // TCP's packets are at most its windows, beyond a first window; open-loop packets at most the
    // buffers. (A full access buffer is a first window's: flows pace themselves to the route.)
    // At most twice their rates' round trip in flight: a flow still growing ends at about
    // twice its average (`ramp`).
    let hold = holding_pkts(cfg, net, cap, rtt_s, 0.0).min(2.0 * tcp_flight + buffers);
    let tcp = hold.min(flows.max(1.0) * window_cap(cfg) as f64).max(held);
    let open_loop =
        cfg.poisson_mbps + cfg.cbr_mbps > 0.0 || cfg.traffic.iter().any(|g| matches!(g.kind(), Kind::Udp(_)));
    let in_flight = tcp + if open_loop { buffers } else { 0.0 };
    let rings = tcp * cost.ring_bytes_per_pkt;
    let samples = samples(cfg, net);
    let first = if held >= hold { "tcp.init_cwnd_pkts" } else { "core_mbps" };
    let parts = [
        ("flows", flows * cost.bytes),
        (first, in_flight * BYTES_PER_PKT + rings + dropped * BYTES_PER_DROPPED_PKT),
        ("sample_interval_s", samples * BYTES_PER_ROW),
        ("topology", net.links.len() as f64 * BYTES_PER_LINK),
    ];
    for (key, bytes) in parts {
        est.memory_bytes += bytes;
        add(&mut est.memory_drivers, key, bytes);
    }
}

/// The part of its rate a long TCP flow of `rate` packets a second sends over the run. It starts on
/// average half the start window in; its slow start doubles its first window each round trip
/// (about twice the window sent meanwhile) up to `exit` (see `slow_start_exit`); from there AIMD
/// adds a packet a round trip, and the other laws grow as CUBIC's C t^3, up to its share. At a
/// large BDP behind a small buffer that growth takes longer than most runs.
fn ramp(cfg: &SimConfig, rate: f64, rtt_s: f64, exit: f64) -> f64 {
    let (window, first) = (rate * rtt_s, first_window(cfg).max(1.0));
    if first >= window || has_bbr(cfg) {
        return 1.0; // the first window reaches the flow's share at once
    }
    let exit = exit.clamp(first, window);
    let reno = matches!(cfg.tcp.0.variant, "newreno" | "dctcp");
    let after_ss = (cfg.duration_s - cfg.start_window_s / 2.0 - rtt_s * (exit / first).log2()).max(0.0);
    let grow_s = if reno { (window - exit) * rtt_s } else { ((window - exit) / CUBIC_C).cbrt() };
    let g = after_ss.min(grow_s);
    let growing = if reno { exit * g + g * g / (2.0 * rtt_s) } else { exit * g + CUBIC_C * g.powi(4) / 4.0 } / rtt_s;
    ((2.0 * exit + growing + (after_ss - g) * rate) / (rate * cfg.duration_s)).min(1.0)
}

/// The window at which a flow's slow start ends: its share, unless it sends its doubled window in
/// a burst (no pacing, and no access link slower than the route) into a smaller buffer.
fn slow_start_exit(cfg: &SimConfig, net: &Network, links: &[usize], cap: &[f64], window: f64) -> f64 {
    let slowest = links.iter().map(|&l| cap[l]).fold(f64::INFINITY, f64::min) * cfg.pkt_bytes as f64 * 8.0;
    if paced(cfg) || cfg.access_mbps.is_some_and(|a| a * 1e6 <= slowest) {
        return window;
    }
    let buffer = links.iter().map(|&l| buffer_pkts(cfg, &net.links[l], window)).fold(f64::INFINITY, f64::min);
    window.min(buffer.max(2.0))
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

/// BBR sends, in the `tcp` section or a mix's group: it paces at the rate it measures, filling
/// a link whatever its buffer, and its start-up is no loss-based slow start.
fn has_bbr(cfg: &SimConfig) -> bool {
    let mix = cfg.tcp_mix.as_deref().and_then(|m| crate::tcp::mix::parse(m).ok()).unwrap_or_default();
    cfg.tcp.0.variant == "bbr" || mix.iter().any(|g| cfg.tcp.group(&g.name).is_ok_and(|t| t.0.variant == "bbr"))
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
            flows: r.flows as f64,
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
            out.push(Source { route, key: key.into(), pkts_per_s: mbps * 1e6 / bits, tcp, transfer_pkts, flows: 0.0 });
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
        let flows = if let Kind::Bulk(b) = g.kind() { b.flows as f64 } else { 0.0 };
        out.push(Source { route, key: format!("traffic.{i}.{key}"), pkts_per_s, tcp, transfer_pkts, flows });
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
        // 10 Mb/s of 1000-byte packets for 60 s, less the start and slow start's 2% (see `ramp`),
        // and a first window of 2 packets a flow.
        let full = 1250.0 * 60.0;
        assert!(tcp.packets < full + 20.0 && tcp.packets > 0.98 * full, "{}", tcp.packets);
        let mut open = base();
        open.push(("poisson_mbps", Value::Float(1e4)));
        let open = est(open);
        assert!(open.packets > 1e3 * tcp.packets);
        assert_eq!(open.packet_drivers[0].0, "poisson_mbps");
    }

    #[test]
    fn window_limited_flows_send_a_window_a_round_trip() {
        let e = est(vec![("flows", Value::Int(2)), ("wmax_pkts", Value::Int(10)), ("rtt_ms", Value::Float(100.0))]);
        let full = 2.0 * 100.0 * 60.0; // less the start and slow start's 2% (`ramp`)
        assert!(e.packets < full + 4.0 && e.packets > 0.98 * full, "{}", e.packets);
    }

    #[test]
    fn a_huge_first_window_costs_the_send_buffer_not_the_window() {
        let tcp = Value::map(vec![("cc", Value::str("cubic_2622")), ("init_cwnd_pkts", Value::Float(1e9))]);
        let e = est(vec![("flows", Value::Int(9)), ("wmax_pkts", Value::Int(1 << 30)), ("tcp", tcp)]);
        assert_eq!(first_window_of(&e), 9.0 * 65536.0);
        assert!(e.memory_bytes < 9.0 * 65536.0 * BYTES_PER_PKT * 1.5);
    }

    /// A slow start longer than the run: a short run at a large BDP costs its ramp, not the link.
    #[test]
    fn a_run_shorter_than_its_slow_start_costs_its_ramp() {
        let short = est(vec![
            ("flows", Value::Int(2)),
            ("core_mbps", Value::Float(1e5)),
            ("duration_s", Value::Float(2.0)),
            ("warmup_s", Value::Float(1.0)),
        ]);
        let full = 1e5 * 1e6 / 8000.0 * 2.0;
        assert!(short.packets < 0.5 * full, "{} of {full}", short.packets);
    }

    fn first_window_of(e: &Estimate) -> f64 {
        e.packet_drivers.iter().find(|(k, _)| k == "tcp.init_cwnd_pkts").map(|d| d.1).unwrap_or(0.0)
    }
}
