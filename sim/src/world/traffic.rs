//! The world's traffic beyond the flat long flows: bulk schedules, transfers, web sessions and
//! open-loop sources. Details: docs/engine.md, `world/traffic.rs`.

use super::{Event, World};
use crate::output::ClassRow;
use crate::rng::{stream, Stream};
use crate::source::{OpenLoopSource, Pattern};
use crate::tcp::sender::TcpSender;
use crate::time::{from_secs, Time};
use crate::traffic::http::HttpGroup;
use crate::traffic::pareto::{Arrival, PoissonTransfers};
use crate::traffic::transfers::{FctStats, Transfers};
use crate::traffic::{Class, ClassCounters, Kind, CLASSES};
use rand::Rng;

/// An http group's sessions and where their objects go.
pub(crate) struct HttpSource {
    pub group: HttpGroup,
    pub route: usize,
    pub tcp_group: usize,
    /// Its generator index in `Transfers` (for completion times).
    pub generator: usize,
}

/// A source of Poisson transfer arrivals and where its transfers go.
pub(crate) struct TransferGen {
    pub arrivals: PoissonTransfers,
    pub route: usize,
    /// The TCP group (see `World::groups`).
    pub tcp_group: usize,
    pub class: Class,
}

/// Traffic beside the long flows: finite transfers and their generators, web sessions, bulk
/// schedules and open-loop sources.
#[derive(Default)]
pub(crate) struct Traffic {
    /// Finite TCP transfers' slots and completion times, and their arrival generators.
    pub transfers: Option<Transfers>,
    pub gens: Vec<TransferGen>,
    /// Each transfer generator's class: the Poisson ones (`gens`), then the http groups.
    pub gen_class: Vec<Class>,
    /// The TCP group of each `traffic` group (see `Conns::groups`).
    pub traffic_tcp_group: Vec<usize>,
    /// Bulk groups with a schedule: (traffic group index, first flow id, params, next step).
    pub bulk_schedules: Vec<(usize, usize, crate::traffic::bulk::BulkParams, usize)>,
    /// The http groups, and the web sessions in progress (slots reused when a session ends),
    /// each with its index in `http`.
    pub http: Vec<HttpSource>,
    pub sessions: Vec<Option<(usize, crate::traffic::http::Session)>>,
    pub free_sessions: Vec<usize>,
    /// Open-loop sources (flat Poisson, flat CBR, then `udp` groups' streams), each with its
    /// route and first-emission offset; counters are in `Meters::class_ctr`.
    pub sources: Vec<OpenLoopSource>,
    pub source_routes: Vec<super::Route>,
    pub source_start: Vec<Time>,
}

impl World<'_> {
    /// Each `bulk` group's flows, after the flat long flows (ids from `first`): start time and
    /// RTT drawn as the flat flows' (from their flow id's stream), the group's TCP and route.
    pub(super) fn add_bulk_flows(&mut self, first: usize) {
        let cfg = self.cfg;
        let mut f = first;
        for (i, g) in cfg.traffic.iter().enumerate() {
            let Kind::Bulk(p) = g.kind() else { continue };
            if p.schedule.is_some() {
                self.traffic.bulk_schedules.push((i, f, p.clone(), 0));
            }
            for _ in 0..p.flows {
                self.add_long_flow(f, self.traffic.traffic_tcp_group[i], self.net.traffic_routes[i], None);
                f += 1;
            }
        }
    }

    pub(super) fn schedule_bulk_steps(&mut self) {
        for k in 0..self.traffic.bulk_schedules.len() {
            let (_, _, p, _) = &self.traffic.bulk_schedules[k];
            let t = p.schedule.as_ref().expect("scheduled groups")[0].time_s;
            self.events.push(from_secs(t), Event::BulkStep(k as u32));
        }
    }

    /// A bulk group's schedule step: its first `active_flows` flows send, the others stop taking
    /// new data (see `traffic::bulk`).
    pub(super) fn bulk_step(&mut self, k: usize) {
        let (_, first, p, step) = &mut self.traffic.bulk_schedules[k];
        let steps = p.schedule.as_ref().expect("scheduled groups");
        let active = steps[*step].active_flows as usize;
        *step += 1;
        let next = steps.get(*step).map(|s| s.time_s);
        let (first, flows) = (*first, p.flows as usize);
        if let Some(t) = next {
            self.events.push(from_secs(t).max(self.now), Event::BulkStep(k as u32));
        }
        for f in first..first + flows {
            let on = f - first < active;
            if on && self.conns.senders[f].paused() {
                self.conns.senders[f].resume(self.now, &mut self.conns.outbox);
                self.flush(f);
            } else if !on && !self.conns.senders[f].paused() {
                self.conns.senders[f].pause();
            }
        }
    }

    /// The flat short flows (generator 0 if any), then every `pareto` group, in order.
    pub(super) fn build_transfers(&mut self) {
        let cfg = self.cfg;
        let seed = cfg.seed as u64;
        let rtt = (cfg.rtt_ms, cfg.rtt_spread_ms);
        if cfg.short_mbps > 0.0 {
            let arrivals = PoissonTransfers::flat(
                cfg.short_mbps,
                cfg.short_flow_pkts,
                self.pkt_bytes,
                cfg.rtt_ms,
                cfg.rtt_spread_ms,
                seed,
            );
            self.traffic.gens.push(TransferGen {
                arrivals,
                route: self.net.default_route,
                tcp_group: 0,
                class: Class::Pareto,
            });
        }
        for (i, g) in cfg.traffic.iter().enumerate() {
            if let Kind::Pareto(p) = g.kind() {
                let arrivals = PoissonTransfers::group(&p, i, self.pkt_bytes, rtt, seed);
                let tcp_group = self.traffic.traffic_tcp_group[i];
                self.traffic.gens.push(TransferGen {
                    arrivals,
                    route: self.net.traffic_routes[i],
                    tcp_group,
                    class: Class::Pareto,
                });
            }
        }
        self.traffic.gen_class = self.traffic.gens.iter().map(|g| g.class).collect();
        for (i, g) in cfg.traffic.iter().enumerate() {
            if let Kind::Http(p) = g.kind() {
                let group = HttpGroup::new(p, i, seed, cfg.start_window_s, self.warm);
                self.traffic.http.push(HttpSource {
                    group,
                    route: self.net.traffic_routes[i],
                    tcp_group: self.traffic.traffic_tcp_group[i],
                    generator: self.traffic.gen_class.len(),
                });
                self.traffic.gen_class.push(Class::Http);
            }
        }
        if !self.traffic.gen_class.is_empty() {
            self.traffic.transfers = Some(Transfers::new(self.conns.n_long, self.traffic.gen_class.len(), self.warm));
        }
    }

    pub(super) fn schedule_sessions(&mut self) {
        for h in 0..self.traffic.http.len() {
            if let Some(t) = self.traffic.http[h].group.next_start() {
                self.events.push(t, Event::SessionArrival(h as u32));
            }
        }
    }

    /// An http group's next session starts: it takes a free session slot and launches its first
    /// object now.
    pub(super) fn session_arrival(&mut self, h: usize) {
        let rtt = (self.cfg.rtt_ms, self.cfg.rtt_spread_ms);
        let session = self.traffic.http[h].group.start_session(self.now, rtt);
        if let Some(t) = self.traffic.http[h].group.next_start() {
            self.events.push(t.max(self.now), Event::SessionArrival(h as u32));
        }
        let k = match self.traffic.free_sessions.pop() {
            Some(k) => k,
            None => {
                self.traffic.sessions.push(None);
                self.traffic.sessions.len() - 1
            }
        };
        self.traffic.sessions[k] = Some((h, session));
        self.session_step(k);
    }

    /// Session slot `k`'s next object starts (and its next event is scheduled, or it ends).
    pub(super) fn session_step(&mut self, k: usize) {
        let (h, mut s) = self.traffic.sessions[k].take().expect("a live session");
        let step = self.traffic.http[h].group.step(&mut s, self.now, self.pkt_bytes);
        let (route, tcp_group, generator) =
            (self.traffic.http[h].route, self.traffic.http[h].tcp_group, self.traffic.http[h].generator);
        let sender_rng = stream(self.cfg.seed as u64, Stream::TrafficSender, step.sender_id);
        let arrival = Arrival { rtt_s: s.rtt_s, size_pkts: step.size_pkts, size_bytes: step.size_bytes, sender_rng };
        match step.next {
            Some(t) => {
                self.traffic.sessions[k] = Some((h, s));
                self.events.push(t, Event::SessionStep(k as u32));
            }
            None => self.traffic.free_sessions.push(k),
        }
        self.start_transfer(generator, route, tcp_group, arrival);
    }

    pub(super) fn schedule_transfers(&mut self) {
        for g in 0..self.traffic.gens.len() {
            let gap = self.traffic.gens[g].arrivals.next_gap();
            self.events.push(gap, Event::TransferArrival(g as u32));
        }
    }

    /// Generator `g`'s next transfer arrives.
    pub(super) fn transfer_arrival(&mut self, g: usize) {
        let gen = &mut self.traffic.gens[g];
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
        let transfers = self.traffic.transfers.as_mut().expect("transfers exist with generators");
        let placed = transfers.place(self.now, pool, generator, a.size_pkts, a.size_bytes, one_way);
        let f = placed.conn;
        let sender: TcpSender = self.new_sender(tcp_group, a.sender_rng).with_size(a.size_pkts);
        if placed.fresh {
            let conn = self.add_connection(route, a.rtt_s, sender);
            debug_assert_eq!(conn, f);
        } else {
            // The slot's old transfer has nothing left in the network (see `transfers`), and
            // crossed the same route with the same TCP.
            self.conns.receivers[f] = self.new_receiver(&sender);
            self.conns.senders[f] = sender;
            self.set_path_delays(f, route, a.rtt_s);
        }
        self.open(f);
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
        self.traffic.sources.push(src);
        self.traffic.source_routes.push(route);
        self.traffic.source_start.push(start);
    }

    /// Per topology link, the TCP flows crossing it that are active (a long flow that started and
    /// is not paused or still has data in flight; a transfer in progress), and those of them in
    /// congestion avoidance (cwnd >= ssthresh, not recovering a loss): ABS's and Appenzeller's "n".
    pub(super) fn flows_by_link(&self) -> (Vec<usize>, Vec<usize>) {
        let n_net = self.net.links.len();
        let (mut active, mut in_ca) = (vec![0usize; n_net], vec![0usize; n_net]);
        for f in 0..self.conns.senders.len() {
            let s = &self.conns.senders[f];
            let st = s.st();
            let is_active = match &self.traffic.transfers {
                Some(t) if t.is_transfer(f) => t.in_progress(f),
                _ => st.maxseq >= 0 && (!s.paused() || st.highest_ack < st.maxseq),
            };
            if !is_active {
                continue;
            }
            let ca = st.cwnd >= st.ssthresh && st.ca_open();
            for &l in &self.net.routes[self.conns.conn[f].route as usize].links {
                active[l] += 1;
                in_ca[l] += ca as usize;
            }
        }
        (active, in_ca)
    }

    /// Updates the class counters of transfer connection `f`.
    #[inline(always)]
    pub(super) fn count_transfer(&mut self, f: usize, update: impl FnOnce(&mut ClassCounters)) {
        let t = self.traffic.transfers.as_ref().expect("connections past the long flows are transfers");
        let class = self.traffic.gen_class[t.generator(f)];
        update(&mut self.meters.class_ctr[class as usize]);
    }

    /// A packet or ACK of connection `f` entered the network (counted for its transfer, if any).
    #[inline(always)]
    pub(super) fn transfer_entered(&mut self, f: usize) {
        if let Some(t) = self.traffic.transfers.as_mut() {
            t.entered(f);
        }
    }

    /// A packet or ACK of connection `f` left the network; frees a finished transfer's slot.
    #[inline(always)]
    pub(super) fn transfer_left(&mut self, f: usize) {
        if let Some(t) = self.traffic.transfers.as_mut() {
            if t.is_transfer(f) {
                t.left(f);
                t.release_if_done(f, self.conns.senders[f].finished());
            }
        }
    }
}

impl World<'_> {
    /// The fixed rates `traffic` groups offer on the routes `crosses` accepts: pareto loads and
    /// udp streams (bulk flows count with the long flows' peak rates; http sessions, whose load
    /// has no set rate, are not counted).
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
            let mut row = ClassRow {
                class: class.name(),
                flows: 0,
                offered_mbps: 0.0,
                goodput_mbps: 0.0,
                loss_rate: None,
                size_mean_pkts: None,
                size_p50_pkts: None,
                size_p99_pkts: None,
                pages: None,
                transfers_done: 0,
                fct_mean_ms: None,
                fct_p50_ms: None,
                fct_p99_ms: None,
                fct_mean_ms_under_10kb: None,
                fct_mean_ms_10kb_to_100kb: None,
                fct_mean_ms_100kb_to_1mb: None,
                fct_mean_ms_over_1mb: None,
            };
            let c = self.meters.class_ctr[class as usize].since(&self.meters.class_ctr_at_warm[class as usize]);
            match class {
                Class::Bulk if self.conns.n_long > 0 => {
                    let (mut sent, mut dropped, mut delivered) = (0, 0, 0);
                    for f in 0..self.conns.n_long {
                        let (warm_stats, warm_delivered) = self.meters.flow_at_warm[f];
                        sent += self.conns.senders[f].stats().sent - warm_stats.sent;
                        dropped += self.meters.flow_dropped[f] - self.meters.flow_dropped_at_warm[f];
                        delivered += self.conns.receivers[f].delivered - warm_delivered;
                    }
                    row.flows = self.conns.n_long as i64;
                    row.offered_mbps = mbps(sent as f64 * pkt_bits);
                    row.goodput_mbps = mbps(delivered as f64 * pkt_bits);
                    row.loss_rate = loss(dropped, sent);
                }
                Class::Http | Class::Pareto if self.traffic.gen_class.contains(&class) => {
                    let t = self.traffic.transfers.as_ref().expect("transfers exist with generators");
                    let mut st = FctStats::default();
                    for (g, &c) in self.traffic.gen_class.iter().enumerate() {
                        if c == class {
                            st.merge(&t.stats[g]);
                        }
                    }
                    let buckets = st.bucket_mean_ms();
                    row = ClassRow {
                        flows: st.started as i64,
                        offered_mbps: mbps(st.started_pkts as f64 * pkt_bits),
                        goodput_mbps: mbps(c.delivered as f64 * pkt_bits),
                        loss_rate: loss(c.dropped, c.sent),
                        size_mean_pkts: (st.started > 0).then(|| st.started_pkts as f64 / st.started as f64),
                        size_p50_pkts: st.size_quantile_pkts(0.5),
                        size_p99_pkts: st.size_quantile_pkts(0.99),
                        pages: (class == Class::Http)
                            .then(|| self.traffic.http.iter().map(|h| h.group.pages_in_window()).sum::<u64>() as i64),
                        transfers_done: st.done as i64,
                        fct_mean_ms: st.mean_ms(),
                        fct_p50_ms: st.quantile_ms(0.5),
                        fct_p99_ms: st.quantile_ms(0.99),
                        fct_mean_ms_under_10kb: buckets[0],
                        fct_mean_ms_10kb_to_100kb: buckets[1],
                        fct_mean_ms_100kb_to_1mb: buckets[2],
                        fct_mean_ms_over_1mb: buckets[3],
                        ..row
                    };
                }
                Class::Udp if !self.traffic.sources.is_empty() => {
                    row.flows = self.traffic.sources.len() as i64;
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
