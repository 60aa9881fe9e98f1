//! The world's finite TCP transfers: the flat short flows and `pareto` groups (Poisson arrivals),
//! each on a reusable connection slot after the long flows (see `traffic::transfers`).

use super::{Event, World};
use crate::rng::{stream, Stream};
use crate::source::{OpenLoopSource, Pattern};
use crate::tcp::sender::TcpSender;
use crate::time::from_secs;
use crate::traffic::pareto::{Arrival, PoissonTransfers};
use crate::output::ClassRow;
use crate::traffic::transfers::{FctStats, Transfers};
use crate::traffic::{Class, ClassCounters, Kind, CLASSES};
use rand::Rng;

/// A source of Poisson transfer arrivals and where its transfers go.
pub(crate) struct TransferGen {
    pub arrivals: PoissonTransfers,
    pub route: usize,
    /// The TCP group (see `World::groups`).
    pub tcp_group: usize,
    pub class: Class,
}

impl World<'_> {
    /// The flat short flows (generator 0 if any), then every `pareto` group, in order.
    pub(super) fn build_transfers(&mut self) {
        let cfg = self.cfg;
        let seed = cfg.seed as u64;
        let rtt = (cfg.rtt_ms, cfg.rtt_spread_ms);
        if cfg.short_mbps > 0.0 {
            let arrivals = PoissonTransfers::flat(cfg.short_mbps, cfg.short_flow_pkts, self.pkt_bytes, cfg.rtt_ms,
                                                  cfg.rtt_spread_ms, seed);
            self.gens.push(TransferGen { arrivals, route: self.net.default_route, tcp_group: 0, class: Class::Pareto });
        }
        for (i, g) in cfg.traffic.iter().enumerate() {
            if let Kind::Pareto(p) = g.kind() {
                let arrivals = PoissonTransfers::group(&p, i, self.pkt_bytes, rtt, seed);
                let tcp_group = self.traffic_tcp_group[i];
                self.gens.push(TransferGen { arrivals, route: self.net.traffic_routes[i], tcp_group,
                                             class: Class::Pareto });
            }
        }
        if !self.gens.is_empty() {
            self.transfers = Some(Transfers::new(self.n_long, self.gens.len(), self.warm));
        }
    }

    pub(super) fn schedule_transfers(&mut self) {
        for g in 0..self.gens.len() {
            let gap = self.gens[g].arrivals.next_gap();
            self.events.push(gap, Event::TransferArrival(g as u32));
        }
    }

    /// Generator `g`'s next transfer arrives.
    pub(super) fn transfer_arrival(&mut self, g: usize) {
        let gen = &mut self.gens[g];
        let gap = gen.arrivals.next_gap();
        let arrival = gen.arrivals.arrive();
        let (route, tcp_group) = (gen.route, gen.tcp_group);
        self.events.push(self.now + gap, Event::TransferArrival(g as u32));
        self.start_transfer(g, route, tcp_group, arrival);
    }

    /// Builds a transfer's connection (or renews a free slot's) and starts it.
    fn start_transfer(&mut self, generator: usize, route: usize, tcp_group: usize, a: Arrival) {
        let one_way = from_secs(a.rtt_s / 2.0).saturating_sub(self.net.one_way(route));
        let pool = tcp_group * self.net.routes.len() + route;
        let transfers = self.transfers.as_mut().expect("transfers exist with generators");
        let placed = transfers.place(self.now, pool, generator, a.size_pkts, a.size_bytes, one_way);
        let f = placed.conn;
        let sender: TcpSender = self.new_sender(tcp_group, a.sender_rng).with_size(a.size_pkts);
        if placed.fresh {
            let conn = self.add_connection(route, a.rtt_s, sender);
            debug_assert_eq!(conn, f);
        } else {
            // The slot's old transfer has nothing left in the network (see `transfers`), and
            // crossed the same route with the same TCP.
            self.senders[f] = sender;
            self.receivers[f] = self.new_receiver();
            self.set_path_delays(f, route, a.rtt_s);
        }
        self.senders[f].start(self.now, &mut self.outbox);
        self.flush(f);
    }

    /// The open-loop sources: the flat Poisson and CBR ones (streams 0 and 1, first packet one
    /// gap after 0), then each `udp` group's streams, whose first packet comes at a uniformly
    /// random phase of their gap, so that a group's CBR streams do not all send at one instant.
    pub(super) fn build_sources(&mut self) {
        let cfg = self.cfg;
        let seed = cfg.seed as u64;
        let ol_bytes = cfg.open_loop_bytes.unwrap_or(cfg.pkt_bytes) as u16;
        let flat = [(Pattern::Poisson, cfg.poisson_mbps), (Pattern::Cbr, cfg.cbr_mbps)];
        let default_links = self.net.routes[self.net.default_route].links.clone();
        let flat_route = self.add_route(&default_links);
        for (id, (pattern, mbps)) in flat.into_iter().enumerate() {
            if mbps > 0.0 {
                let rng = stream(seed, Stream::Source, id as u64);
                self.add_source(OpenLoopSource::new(pattern, mbps, ol_bytes, rng), flat_route, 0);
            }
        }
        for (i, g) in cfg.traffic.iter().enumerate() {
            let Kind::Udp(p) = g.kind() else { continue };
            let links = self.net.routes[self.net.traffic_routes[i]].links.clone();
            let route = self.add_route(&links);
            let pattern = if p.pattern == "poisson" { Pattern::Poisson } else { Pattern::Cbr };
            let bytes = p.pkt_bytes.unwrap_or(cfg.pkt_bytes) as u16;
            for k in 0..p.flows as u64 {
                let mut rng = stream(seed, Stream::Source, ((i as u64 + 1) << 32) + k);
                let phase: f64 = rng.random();
                let src = OpenLoopSource::new(pattern, p.rate_mbps, bytes, rng);
                let start = from_secs(phase * src.mean_gap_s());
                self.add_source(src, route, start);
            }
        }
    }

    fn add_source(&mut self, src: OpenLoopSource, route: super::Route, start: crate::time::Time) {
        self.sources.push(src);
        self.source_routes.push(route);
        self.source_start.push(start);
    }

    /// Updates the class counters of transfer connection `f`.
    #[inline(always)]
    pub(super) fn count_transfer(&mut self, f: usize, update: impl FnOnce(&mut ClassCounters)) {
        let t = self.transfers.as_ref().expect("connections past the long flows are transfers");
        let class = self.gens[t.generator(f)].class;
        update(&mut self.class_ctr[class as usize]);
    }

    /// A packet or ACK of connection `f` left the network; frees a finished transfer's slot.
    #[inline(always)]
    pub(super) fn transfer_left(&mut self, f: usize) {
        if let Some(t) = self.transfers.as_mut() {
            if t.is_transfer(f) {
                t.left(f);
                t.release_if_done(f, self.senders[f].finished());
            }
        }
    }
}

impl World<'_> {
    /// The fixed rates `traffic` groups offer on the routes `crosses` accepts: pareto loads and
    /// udp streams (http sessions and bulk flows are TCP and count with the long flows' peak).
    pub(crate) fn traffic_rates_mbps(&self, crosses: &dyn Fn(usize) -> bool) -> f64 {
        let mut mbps = 0.0;
        for (i, g) in self.cfg.traffic.iter().enumerate() {
            if !crosses(self.net.traffic_routes[i]) {
                continue;
            }
            match g.kind() {
                Kind::Pareto(p) => mbps += p.load_mbps,
                Kind::Udp(p) => mbps += p.rate_mbps * p.flows as f64,
                Kind::Bulk(_) | Kind::Http(_) => {}
            }
        }
        mbps
    }

    /// The `classes` table: one row per class present, over the measured window.
    pub(crate) fn class_rows(&self, window: crate::time::Time) -> Vec<ClassRow> {
        let window_s = crate::time::to_secs(window);
        let pkt_bits = self.pkt_bytes as f64 * 8.0;
        let mbps = |bits: f64| bits / window_s / 1e6;
        let loss = |dropped: u64, sent: u64| (sent > 0).then(|| dropped as f64 / sent as f64);
        let mut rows = Vec::new();
        for class in CLASSES {
            let mut row = ClassRow { class: class.name(), flows: 0, offered_mbps: 0.0, goodput_mbps: 0.0, loss_rate: None,
                                     transfers_done: 0, fct_mean_ms: None, fct_p50_ms: None, fct_p99_ms: None,
                                     fct_mean_ms_under_10kb: None, fct_mean_ms_10kb_to_100kb: None,
                                     fct_mean_ms_100kb_to_1mb: None, fct_mean_ms_over_1mb: None };
            let c = self.class_ctr[class as usize].since(&self.class_ctr_at_warm[class as usize]);
            match class {
                Class::Bulk if self.n_long > 0 => {
                    let (mut sent, mut dropped, mut delivered) = (0, 0, 0);
                    for f in 0..self.n_long {
                        let (warm_stats, warm_delivered) = self.flow_at_warm[f];
                        sent += self.senders[f].stats().sent - warm_stats.sent;
                        dropped += self.flow_dropped[f] - self.flow_dropped_at_warm[f];
                        delivered += self.receivers[f].delivered - warm_delivered;
                    }
                    row.flows = self.n_long as i64;
                    row.offered_mbps = mbps(sent as f64 * pkt_bits);
                    row.goodput_mbps = mbps(delivered as f64 * pkt_bits);
                    row.loss_rate = loss(dropped, sent);
                }
                Class::Http | Class::Pareto if self.gens.iter().any(|g| g.class == class) => {
                    let t = self.transfers.as_ref().expect("transfers exist with generators");
                    let mut st = FctStats::default();
                    for (g, gen) in self.gens.iter().enumerate() {
                        if gen.class == class {
                            st.merge(&t.stats[g]);
                        }
                    }
                    let buckets = st.bucket_mean_ms();
                    row = ClassRow { flows: st.started as i64, offered_mbps: mbps(st.started_pkts as f64 * pkt_bits),
                                     goodput_mbps: mbps(c.delivered as f64 * pkt_bits), loss_rate: loss(c.dropped, c.sent),
                                     transfers_done: st.done as i64, fct_mean_ms: st.mean_ms(),
                                     fct_p50_ms: st.quantile_ms(0.5), fct_p99_ms: st.quantile_ms(0.99),
                                     fct_mean_ms_under_10kb: buckets[0], fct_mean_ms_10kb_to_100kb: buckets[1],
                                     fct_mean_ms_100kb_to_1mb: buckets[2], fct_mean_ms_over_1mb: buckets[3], ..row };
                }
                Class::Udp if !self.sources.is_empty() => {
                    row.flows = self.sources.len() as i64;
                    row.offered_mbps = mbps(c.sent_bytes as f64 * 8.0);
                    row.goodput_mbps = mbps(c.delivered_bytes as f64 * 8.0);
                    row.loss_rate = loss(c.dropped, c.sent);
                }
                _ => continue,
            }
            rows.push(row);
        }
        rows
    }
}
