//! The world: builds a run's network and dispatches its events. Its state lives in three parts,
//! `Conns`, `Traffic` and `Meters`; `finish` turns it into the output tables (docs/engine.md).

use crate::config::SimConfig;
use crate::event::{Event, EventQueue};
use crate::link::{Arrival, Link, Role};
use crate::memory::{self, OutOfMemory};
use crate::metrics::LinkStats;
use crate::packet::{Kind, Packet, ACK_BYTES};
use crate::queue::{droptail::DropTail, Cause, Discipline, Limit, LinkInfo};
use crate::rng::{derived, stream, SimRng, Stream};
use crate::tcp::receiver::{SackList, TcpReceiver};
use crate::tcp::{mix, TcpConfig, WindowLaw};
use crate::tcp::{sender::TcpSender, sender_core::TcpParams};
use crate::time::{from_secs, Time};
use crate::topology::Network;
use crate::trace::{DEQUEUE, DROP, ENQUEUE};
use crate::traffic::Class;
use rand::Rng;
use std::collections::VecDeque;
use std::rc::Rc;

pub use crate::output::RunOutput;

mod conns;
mod finish;
mod handshake;
mod meters;
mod periodic;
mod traffic;
use conns::{AckOptions, Conn, Conns, Group, SACK_BLOCKS};
use meters::Meters;
use traffic::Traffic;

/// A route: `len` hops from `hops[start]` on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Route {
    start: u32,
    len: u8,
}

/// No timer event pending (later than any deadline).
const IDLE: Time = Time::MAX;
/// Salt of a window law's stream, derived from its sender's (`rng::derived`).
const LAW_SALT: u64 = 0x1a3;
/// Salt of a sender's send-jitter stream (`send_clock.rs`), derived from its stream as the law's is.
const JITTER_SALT: u64 = 0x7e5;

/// A run in progress: the clock, the event list and the links, with the connections, the
/// traffic and the meters in their own parts. It dispatches events; the parts hold the state.
pub struct World<'c> {
    pub(crate) cfg: &'c SimConfig,
    pub(crate) net: Network,
    pub(crate) now: Time,
    pub(crate) end: Time,
    pub(crate) warm: Time,
    pub(crate) events: EventQueue,
    pub(crate) pkt_bytes: u16,
    pub(crate) links: Vec<Link>,
    /// Every route's link ids, route after route.
    hops: Vec<u32>,
    /// The adaptive buffer policies, one per link that has one (static rules act once, at build).
    policies: Vec<periodic::LinkPolicy>,
    pub(crate) conns: Conns,
    pub(crate) traffic: Traffic,
    pub(crate) meters: Meters,
    /// Stopping on precision: the bottleneck's sampled series, and why the run stopped early.
    pub(crate) precision: Option<crate::precision::Tracker>,
    pub(crate) stop_reason: Option<&'static str>,
}

impl<'c> World<'c> {
    /// Builds the network from a validated config and its network, and schedules the first
    /// events; an error if that outgrows the thread's memory budget (`memory.rs`).
    pub fn new(cfg: &'c SimConfig, net: Network) -> Result<Self, OutOfMemory> {
        let n = net.long_flows() + crate::traffic::bulk_flows(&cfg.traffic);
        let warm = from_secs(cfg.warmup_s);
        let mut w = World {
            cfg,
            now: 0,
            end: from_secs(cfg.end_s()),
            precision: crate::precision::Tracker::new(&cfg.precision, cfg.sample_interval_s),
            stop_reason: None,
            warm,
            events: EventQueue::new(),
            pkt_bytes: cfg.pkt_bytes as u16,
            links: Vec::new(),
            hops: Vec::new(),
            policies: Vec::new(),
            conns: Conns::new(n, Self::tcp_groups(cfg))?,
            traffic: Traffic::default(),
            meters: Meters::new(cfg, n),
            net,
        };
        w.add_traffic_tcp_groups();
        w.build_topology();
        w.build_long_flows()?;
        w.build_policies();
        w.build_other_traffic();
        w.schedule_first_events();
        memory::check("setting up the run")?;
        Ok(w)
    }

    fn add_link(&mut self, link: Link) -> usize {
        self.links.push(link);
        self.links.len() - 1
    }

    fn add_route(&mut self, links: &[usize]) -> Route {
        assert!(links.len() < 256, "routes have fewer than 256 links");
        let start = self.hops.len() as u32;
        self.hops.extend(links.iter().map(|&l| l as u32));
        Route { start, len: links.len() as u8 }
    }

    /// A packet's route: its connection's forward or reverse route, or its source's.
    #[inline(always)]
    fn route_of(&self, pkt: &Packet) -> Route {
        match pkt.kind() {
            Kind::Data => self.conns.conn[pkt.flow as usize].fwd,
            Kind::Ack => self.conns.conn[pkt.flow as usize].rev,
            Kind::OpenLoop => self.traffic.source_routes[pkt.flow as usize],
        }
    }

    /// New in-order packets delivered so far to the connections crossing topology link `i`.
    pub(crate) fn link_delivered(&self, i: usize) -> u64 {
        (0..self.net.routes.len())
            .filter(|&r| self.net.routes[r].links.contains(&i))
            .map(|r| self.meters.route_delivered[r])
            .sum()
    }

    fn build_topology(&mut self) {
        self.meters.route_delivered = vec![0; self.net.routes.len()];
        for i in 0..self.net.links.len() {
            let spec = &self.net.links[i];
            let info = LinkInfo {
                rate_bps: spec.rate_bps,
                pkt_bytes: self.cfg.pkt_bytes as u32,
                seed: self.cfg.seed as u64,
                link: i as u64,
            };
            let queue = spec.queue.0.make(spec.limit, &info);
            self.add_link(Link::serial(spec.rate_bps, queue, spec.delay, Role::Net(i as u32)));
            self.meters.stats.push(LinkStats::new(self.warm));
        }
    }

    /// Long flows, route by route: start time, RTT and sender from their own random streams.
    fn build_long_flows(&mut self) -> Result<(), OutOfMemory> {
        let cfg = self.cfg;
        let seed = cfg.seed as u64;
        let mut f = 0usize;
        for r in 0..self.net.routes.len() {
            for i in 0..self.net.routes[r].flows {
                let explicit_rtt_ms = cfg.rtts_ms.as_ref().map(|list| list[f]);
                self.add_long_flow(f, self.group_of(i), r, explicit_rtt_ms);
                f += 1;
            }
        }
        self.add_bulk_flows(f);
        for f in 0..self.conns.n_long {
            let g = self.conns.flow_group[f];
            let sender = self.new_sender(g, stream(seed, Stream::Sender, f as u64));
            self.add_connection(self.conns.flow_route[f], self.conns.rtt_s[f], sender);
            if f % 4096 == 4095 {
                memory::check("setting up the flows")?;
            }
        }
        Ok(())
    }

    /// Long flow `f`: start time and RTT from its own stream (an explicit RTT replaces the drawn
    /// one), its TCP group and route.
    fn add_long_flow(&mut self, f: usize, group: usize, route: usize, explicit_rtt_ms: Option<f64>) {
        let cfg = self.cfg;
        let mut rng = stream(cfg.seed as u64, Stream::Topology, f as u64);
        self.conns.start_s.push(rng.random::<f64>() * cfg.start_window_s);
        let u: f64 = rng.random();
        let rtt_ms = explicit_rtt_ms.unwrap_or(cfg.rtt_ms + (u - 0.5) * cfg.rtt_spread_ms);
        self.conns.rtt_s.push(rtt_ms / 1000.0);
        self.conns.flow_group.push(group);
        self.conns.flow_route.push(route);
    }

    fn build_other_traffic(&mut self) {
        self.build_sources();
        self.build_transfers();
    }

    fn schedule_first_events(&mut self) {
        for f in 0..self.conns.n_long {
            self.events.push(from_secs(self.conns.start_s[f]), Event::FlowStart(f as u32));
        }
        for s in 0..self.traffic.sources.len() {
            let gap = self.traffic.sources[s].next_gap();
            self.events.push(self.traffic.source_start[s] + gap, Event::SourceEmit(s as u32));
        }
        self.schedule_transfers();
        self.schedule_bulk_steps();
        self.schedule_sessions();
        self.events.push(self.warm, Event::WarmupEnd);
        self.events.push(self.meters.sample_interval, Event::SampleTick);
        for k in 0..self.policies.len() {
            // A first call at t=0 lets a controller set the initial capacity.
            self.events.push(0, Event::PolicyTick(k as u32));
        }
    }

    fn tcp_groups(cfg: &SimConfig) -> Vec<Group> {
        let mut groups = vec![cfg.tcp.clone()];
        if let Some(mix) = &cfg.tcp_mix {
            groups
                .extend(mix::parse(mix).expect("validated").iter().map(|g| cfg.tcp.group(&g.name).expect("validated")));
        }
        groups.into_iter().map(|t| Self::group(cfg, t)).collect()
    }

    /// A TCP group with its senders' parameters (a mix's `linux` group keeps the preset's initial
    /// window and delayed ACKs).
    fn group(cfg: &SimConfig, t: TcpConfig) -> Group {
        let tc = t.common();
        let params = TcpParams {
            init_cwnd: tc.init_cwnd_pkts,
            init_ssthresh: tc.init_ssthresh_pkts.unwrap_or(cfg.wmax_pkts as f64),
            // The send buffer limits new data exactly as the receiver's window does.
            wmax: cfg.wmax_pkts.min(tc.sndbuf_pkts) as f64,
            min_rto_s: tc.min_rto_ms / 1000.0,
            max_rto_s: tc.max_rto_s,
            init_rto_s: tc.init_rto_s,
            handshake: tc.handshake,
            tick_s: tc.tick_ms / 1000.0,
            limited_transmit: tc.limited_transmit,
            max_burst: tc.max_burst_pkts as u32,
            ecn: tc.ecn,
            delayed_ack: tc.delayed_ack.then(|| from_secs(tc.delack_ms / 1000.0)),
            rack_reo_wnd: tc.rack_reo_wnd_min_rtts,
            send_jitter: from_secs(tc.send_jitter_ms / 1000.0),
            ssthresh_from_pipe: tc.ssthresh_from_pipe || tc.compat == "ns3",
            rto_first_partial_only: tc.rto_first_partial_only || tc.compat == "ns3",
            rto_backoff_reset_on_ack: tc.rto_backoff_reset_on_ack || tc.compat == "ns3",
            tso_defer: tc.tso_defer && tc.compat != "ns3",
            pkt_bytes: cfg.pkt_bytes as f64,
            tsecr_rtt: tc.tsecr_rtt,
        };
        Group { law: t.law_factory(), tcp: t, params: Rc::new(params) }
    }

    /// The group of the i-th long flow of a route (0 without a mix).
    fn group_of(&self, i: usize) -> usize {
        let Some(mix) = &self.cfg.tcp_mix else { return 0 };
        let mut end = 0;
        for (g, group) in mix::parse(mix).expect("validated").iter().enumerate() {
            end += group.flows as usize;
            if i < end {
                return g + 1;
            }
        }
        unreachable!("mix counts add up to the route's flows (validated)")
    }

    pub(crate) fn group_label(&self, g: usize) -> &'static str {
        self.conns.groups[g].tcp.0.label
    }

    /// A sender of TCP group `group`.
    fn new_sender(&self, group: usize, rng: SimRng) -> TcpSender {
        let g = &self.conns.groups[group];
        let mut law = (g.law)();
        law.init(derived(&rng, LAW_SALT), self.cfg.pkt_bytes as f64);
        let mut sender = TcpSender::new(g.params.clone(), law, g.tcp.make_recovery(), g.tcp.make_release(rng.clone()));
        sender.core.set_jitter_rng(derived(&rng, JITTER_SALT));
        sender
    }

    fn new_receiver(&self, sender: &TcpSender) -> TcpReceiver {
        let delack = sender.params().delayed_ack;
        let r = TcpReceiver::new(delack.is_some(), delack.unwrap_or(0));
        if sender.echoes_ce_exactly() {
            r.echoing_ce_exactly()
        } else {
            r
        }
    }

    /// A new connection over topology route `route`: its access link, its return path, its sender
    /// and receiver. Returns its id.
    fn add_connection(&mut self, route: usize, rtt_s: f64, sender: TcpSender) -> usize {
        let stamps = sender.wants_timestamps();
        let (ahead, back) = self.path_delays(route, rtt_s, stamps);
        let mut hops = Vec::with_capacity(self.net.routes[route].links.len() + 2);
        if stamps {
            hops.push(self.add_link(Link::delay_only(ahead, Role::Return)));
        }
        if let Some(mbps) = self.cfg.access_mbps {
            let queue = Discipline::DropTail(DropTail::new(Limit::Packets(self.cfg.access_buffer_pkts as u64)));
            hops.push(self.add_link(Link::serial(mbps * 1e6, queue, 0, Role::Access)));
        }
        hops.extend_from_slice(&self.net.routes[route].links);
        let fwd = self.add_route(&hops);
        let ret = self.add_link(Link::delay_only(back, Role::Return));
        let rev = self.add_route(&[ret]);
        let sack = sender.uses_sack();
        let tsecr = sender.params().tsecr_rtt;
        self.conns.conn.push(Conn {
            fwd,
            rev,
            route: route as u32,
            pending_rto: IDLE,
            pending_send: IDLE,
            pending_delack: IDLE,
            sack,
            stamps,
            tsecr,
        });
        self.conns.ack_opts.push(VecDeque::new());
        self.conns.receivers.push(self.new_receiver(&sender));
        self.conns.senders.push(sender);
        self.conns.senders.len() - 1
    }

    /// Sets connection `f`'s delays for a new flow of RTT `rtt_s` on its slot (see `path_delays`).
    fn set_path_delays(&mut self, f: usize, route: usize, rtt_s: f64) {
        let conn = self.conns.conn[f];
        let (ahead, back) = self.path_delays(route, rtt_s, conn.stamps);
        let ret = self.hops[conn.rev.start as usize] as usize;
        self.links[ret].set_delay(back);
        if conn.stamps {
            let first = self.hops[conn.fwd.start as usize] as usize;
            self.links[first].set_delay(ahead);
        }
    }

    /// Adds the TCP of every TCP `traffic` group to `groups` (after the mix groups).
    fn add_traffic_tcp_groups(&mut self) {
        for g in &self.cfg.traffic {
            let t = g.tcp_or(&self.cfg.tcp).clone();
            self.conns.groups.push(Self::group(self.cfg, t));
            self.traffic.traffic_tcp_group.push(self.conns.groups.len() - 1);
        }
    }

    /// A connection's propagation delays beyond its route's links: (ahead of the route, on the
    /// return path). The return path takes the RTT less the route's one-way link delay (RTTs are
    /// at least twice that, see `topology`), and is never zero, so that a packet's route ends
    /// only after a link (see `enter`). A connection that measures one-way delay (timestamps,
    /// TCP-LP) has the RTT split evenly between directions instead, as on a real path and in
    /// ns-2's duplex links: with it all on the return path, the forward delay would be the
    /// queueing alone, under a millisecond, which timestamps in ms cannot see.
    fn path_delays(&self, route: usize, rtt_s: f64, stamps: bool) -> (Time, Time) {
        let one_way = self.net.one_way(route);
        let rtt = from_secs(rtt_s);
        let ahead = if stamps { (rtt / 2 - one_way).max(1) } else { 0 };
        (ahead, (rtt - one_way - ahead).max(1))
    }

    /// Runs to `duration_s`. `poll` is called every 2^18 events; returning true stops the run
    /// (Ctrl-C), and the output is then marked interrupted. Memory past the thread's budget
    /// (`memory.rs`) stops it with an error, and the simulated time (s) it had reached.
    pub fn run(mut self, poll: &mut dyn FnMut() -> bool) -> Result<RunOutput, (OutOfMemory, f64)> {
        let started = std::time::Instant::now();
        let mut interrupted = false;
        let mut since_poll = 0u32;
        while let Some((t, ev)) = self.events.take_until(self.end) {
            self.now = t;
            self.dispatch(ev);
            since_poll += 1;
            if since_poll == 1 << 18 {
                since_poll = 0;
                memory::check("running").map_err(|e| (e, crate::time::to_secs(self.now)))?;
                if poll() {
                    interrupted = true;
                    break;
                }
            }
        }
        if !interrupted {
            self.now = self.end;
        }
        let wall_s = started.elapsed().as_secs_f64();
        Ok(self.finish(wall_s, interrupted))
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::FlowStart(f) => self.open(f as usize),
            Event::SynTimer(f) => self.syn_timer(f as usize),
            Event::LinkDone(l) => self.link_done(l as usize),
            Event::LinkExit(l) => {
                let (pkt, next) = self.links[l as usize].exit();
                if let Some(due) = next {
                    self.events.push(due, Event::LinkExit(l));
                }
                self.forward(pkt);
            }
            Event::RtoTimer(f) => {
                let f = f as usize;
                if self.conns.conn[f].pending_rto == self.now {
                    self.conns.conn[f].pending_rto = IDLE;
                }
                self.conns.senders[f].on_rto_timer(self.now, &mut self.conns.outbox);
                self.flush(f);
            }
            Event::SendTimer(f) => {
                let f = f as usize;
                if self.conns.conn[f].pending_send == self.now {
                    self.conns.conn[f].pending_send = IDLE;
                }
                self.conns.senders[f].on_send_timer(self.now, &mut self.conns.outbox);
                self.flush(f);
            }
            Event::DelAckTimer(f) => {
                let f = f as usize;
                if self.conns.conn[f].pending_delack == self.now {
                    self.conns.conn[f].pending_delack = IDLE;
                }
                if let Some(ack) = self.conns.receivers[f].on_delack_timer(self.now) {
                    self.send_ack(f, ack);
                }
                self.sync_delack(f);
            }
            Event::SourceEmit(s) => {
                let src = &mut self.traffic.sources[s as usize];
                let pkt = Packet::new(Kind::OpenLoop, s as usize, src.bytes, 0);
                let gap = src.next_gap().max(1);
                self.events.push(self.now + gap, Event::SourceEmit(s));
                let c = &mut self.meters.class_ctr[Class::Udp as usize];
                c.sent += 1;
                c.sent_bytes += pkt.bytes as u64;
                self.send_on(pkt);
            }
            Event::TransferArrival(g) => self.transfer_arrival(g as usize),
            Event::BulkStep(i) => self.bulk_step(i as usize),
            Event::SessionArrival(h) => self.session_arrival(h as usize),
            Event::SessionStep(k) => self.session_step(k as usize),
            Event::PolicyTick(k) => self.policy_tick(k as usize),
            Event::SampleTick => self.sample_tick(),
            Event::WarmupEnd => {
                for i in 0..self.meters.stats.len() {
                    let delivered = self.link_delivered(i);
                    let s = &mut self.meters.stats[i];
                    s.at_warm = s.counters_at(self.now);
                    s.delivered_at_warm = delivered;
                }
                self.meters.edge_at_warm = self.meters.edge;
                self.meters.class_ctr_at_warm = self.meters.class_ctr;
                for f in 0..self.conns.n_long {
                    self.meters.flow_at_warm[f] = (self.conns.senders[f].stats(), self.conns.receivers[f].delivered);
                    self.meters.flow_dropped_at_warm[f] = self.meters.flow_dropped[f];
                }
                let long = &self.conns.senders[..self.conns.n_long];
                if long.iter().any(|s| s.has_modes()) {
                    self.meters.modes_at_warm = long.iter().map(|s| s.mode_times(self.now)).collect();
                }
            }
        }
    }

    /// A long flow's RTT and delivery-rate samples from its last ACK: the rate's for the time
    /// series, both in the measured window for the flows table.
    fn record_samples(&mut self, f: usize) {
        let (rtt_s, rate_pps) = self.conns.senders[f].take_samples();
        if f >= self.conns.n_long {
            return;
        }
        if let Some(r) = rate_pps {
            let (sum, n) = &mut self.meters.rate_interval[f];
            (*sum, *n) = (*sum + r, *n + 1);
        }
        if self.now < self.warm {
            return;
        }
        if let Some(r) = rtt_s {
            self.meters.rtt_ms[f].push((r * 1000.0) as f32);
        }
        if let Some(r) = rate_pps {
            let (sum, n, max) = &mut self.meters.rate[f];
            (*sum, *n, *max) = (*sum + r, *n + 1, max.max(r));
        }
    }

    /// Sends what the sender queued in `outbox` and (re)schedules its timers.
    fn flush(&mut self, f: usize) {
        let mut out = std::mem::take(&mut self.conns.outbox);
        let (route, tsecr) = (self.conns.conn[f].fwd, self.conns.conn[f].tsecr);
        let ecn = self.conns.senders[f].ecn();
        for &seq in &out {
            let mut pkt = Packet::new(Kind::Data, f, self.pkt_bytes, seq);
            if self.conns.senders[f].take_push(seq) {
                pkt.set_push();
            }
            if tsecr && self.conns.senders[f].sent_as_retx(seq) {
                pkt.set_retx();
            }
            if ecn {
                pkt.set_ect();
                if self.conns.senders[f].take_cwr() {
                    pkt.set_flag();
                }
            }
            if f >= self.conns.n_long {
                self.count_transfer(f, |c| c.sent += 1);
                self.traffic.transfers.as_mut().expect("a transfer").entered(f);
            }
            self.enter(pkt, route);
        }
        out.clear();
        self.conns.outbox = out;
        // Timers are rescheduled lazily: one pending event per timer; an event that finds its
        // deadline moved later is simply followed by another.
        let (sender, conn) = (&self.conns.senders[f], &mut self.conns.conn[f]);
        if let Some(d) = sender.rto_deadline() {
            if conn.pending_rto > d {
                self.events.push(d, Event::RtoTimer(f as u32));
                conn.pending_rto = d;
            }
        }
        if let Some(d) = sender.send_deadline() {
            if conn.pending_send > d {
                self.events.push(d, Event::SendTimer(f as u32));
                conn.pending_send = d;
            }
        }
    }

    fn sync_delack(&mut self, f: usize) {
        if let Some(d) = self.conns.receivers[f].delack_deadline {
            let conn = &mut self.conns.conn[f];
            if conn.pending_delack > d {
                self.events.push(d, Event::DelAckTimer(f as u32));
                conn.pending_delack = d;
            }
        }
    }

    /// A packet that crossed a link moves to the next link of its route, or is delivered at the
    /// route's end.
    #[inline(always)]
    fn forward(&mut self, pkt: Packet) {
        let route = self.route_of(&pkt);
        if pkt.hop == route.len {
            self.deliver(pkt);
        } else {
            self.enter(pkt, route);
        }
    }

    /// A new packet enters the first link of its route.
    #[inline(always)]
    fn send_on(&mut self, pkt: Packet) {
        let route = self.route_of(&pkt);
        self.enter(pkt, route);
    }

    /// A packet enters the next link of its route (one exists: a route ends only after a link,
    /// since no link a packet enters at its source is its destination). Never delivers, so that
    /// sending, forwarding and delivering inline into each other without recursion.
    #[inline(always)]
    fn enter(&mut self, mut pkt: Packet, route: Route) {
        let l = self.hops[(route.start + pkt.hop as u32) as usize] as usize;
        pkt.hop += 1;
        match self.links[l].role {
            Role::Net(i) => self.net_arrive(l, i as usize, pkt),
            Role::Access => self.access_arrive(l, pkt),
            Role::Return => {
                // A pure delay: straight into its pipe.
                if let Some(due) = self.links[l].propagate(self.now, pkt) {
                    self.events.push(due, Event::LinkExit(l as u32));
                }
            }
        }
    }

    fn access_arrive(&mut self, l: usize, pkt: Packet) {
        self.meters.edge.arrivals += 1;
        match self.links[l].arrive(pkt, self.now) {
            Arrival::Started(done) => self.events.push(done, Event::LinkDone(l as u32)),
            Arrival::Queued => {}
            Arrival::Dropped => self.access_verdicts(l),
            Arrival::Propagating(_) => unreachable!("access links serialise"),
        }
    }

    /// What access link `l`'s queue dropped (a drop-tail queue: only arrivals).
    fn access_verdicts(&mut self, l: usize) {
        let (dropped, _) = self.links[l].take_verdicts();
        for (pkt, _) in &dropped {
            self.meters.edge.drops += 1;
            self.dropped(pkt);
        }
        self.links[l].return_verdicts(dropped);
    }

    /// What topology link `i`'s queue (link id `l`) dropped and marked: counted, traced.
    fn net_verdicts(&mut self, l: usize, i: usize) {
        let (dropped, marks) = self.links[l].take_verdicts();
        self.meters.stats[i].ctr.marks += marks;
        for (pkt, cause) in &dropped {
            let s = &mut self.meters.stats[i];
            s.ctr.drops += 1;
            s.ctr.early_drops += (*cause == Cause::Early) as u64;
            self.meters.trace.record(self.now, DROP, pkt, self.links[l].queue_len(), i);
            self.dropped(pkt);
        }
        self.links[l].return_verdicts(dropped);
        // Drops at dequeue shorten the queue (integer time-weighted sums: an update that does
        // not change the length changes nothing).
        let len = self.links[l].queue_len();
        self.meters.stats[i].queue.set_len(self.now, len);
    }

    /// A packet arrives at topology link `i` (link id `l`): counted, queued, traced.
    #[inline(always)]
    fn net_arrive(&mut self, l: usize, i: usize, pkt: Packet) {
        let now = self.now;
        let link = &mut self.links[l];
        let s = &mut self.meters.stats[i];
        s.ctr.arrivals += 1;
        s.ctr.arrival_bits += pkt.bytes as u64 * 8;
        let verdicts = match link.arrive(pkt, now) {
            Arrival::Started(done) => {
                self.events.push_after_arrivals(done, Event::LinkDone(l as u32));
                s.start_tx(now);
                self.meters.trace.record(now, ENQUEUE, &pkt, 0, i);
                self.meters.trace.record(now, DEQUEUE, &pkt, 0, i);
                s.delay_n += 1;
                if now >= self.warm {
                    s.delay_ns.record(0).expect("histogram auto-resizes");
                }
                false
            }
            Arrival::Queued => {
                let len = link.queue_len();
                s.queue.set_len(now, len);
                self.meters.trace.record(now, ENQUEUE, &pkt, len, i);
                link.has_verdicts()
            }
            Arrival::Dropped => true,
            Arrival::Propagating(_) => unreachable!("topology links serialise"),
        };
        if verdicts {
            self.net_verdicts(l, i);
        }
    }

    /// Link `l` finished a transmission: starts the next one, then the packet propagates.
    fn link_done(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        let (done, next) = link.complete(now);
        if let Some((_, t)) = next {
            if matches!(link.role, Role::Net(_)) {
                self.events.push_after_arrivals(t, Event::LinkDone(l as u32));
            } else {
                self.events.push(t, Event::LinkDone(l as u32));
            }
        }
        if let Role::Net(i) = link.role {
            let i = i as usize;
            let s = &mut self.meters.stats[i];
            s.end_tx(now, done.bytes as u64 * 8, next.is_some());
            if let Some((pkt, _)) = next {
                let len = link.queue_len();
                s.queue.set_len(now, len);
                let waited_ns = (now - pkt.stamp) / 1000;
                (s.delay_sum_ns, s.delay_n) = (s.delay_sum_ns + waited_ns, s.delay_n + 1);
                if now >= self.warm {
                    s.delay_ns.record(waited_ns).expect("histogram auto-resizes");
                }
                self.meters.trace.record(now, DEQUEUE, &pkt, len, i);
            }
            if link.has_verdicts() {
                self.net_verdicts(l, i);
            }
        } else if link.has_verdicts() {
            self.access_verdicts(l);
        }
        let link = &mut self.links[l];
        if link.delay() == 0 {
            self.forward(done);
        } else if let Some(due) = link.propagate(now, done) {
            self.events.push(due, Event::LinkExit(l as u32));
        }
    }

    /// A packet reached the end of its route.
    #[inline(always)]
    fn deliver(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        if pkt.is_handshake() {
            return self.deliver_handshake(pkt);
        }
        match pkt.kind() {
            Kind::Data => {
                if let Some(owed) = self.conns.receivers[f].ce_changes(pkt.ce()) {
                    self.send_ack(f, owed);
                }
                self.conns.receivers[f].on_ecn(pkt.ce(), pkt.flag());
                if self.conns.conn[f].tsecr {
                    self.conns.receivers[f].note_copy(pkt.seq, pkt.retx());
                }
                let (ack, new) = self.conns.receivers[f].on_data(self.now, pkt.seq, pkt.push());
                self.meters.route_delivered[self.conns.conn[f].route as usize] += new;
                if f >= self.conns.n_long {
                    self.count_transfer(f, |c| c.delivered += new);
                    let delivered = self.conns.receivers[f].delivered;
                    self.traffic.transfers.as_mut().expect("a transfer").on_delivered(f, self.now, delivered);
                }
                if let Some(ack) = ack {
                    self.send_ack(f, ack);
                }
                self.sync_delack(f);
                self.transfer_left(f);
            }
            Kind::Ack => {
                if pkt.flag() {
                    self.conns.senders[f].on_ece(self.now, pkt.seq);
                }
                if self.conns.conn[f].tsecr {
                    self.conns.senders[f].note_echo(pkt.retx());
                }
                if self.conns.conn[f].sack || self.conns.conn[f].stamps {
                    let opts = self.conns.ack_opts[f].pop_front().expect("an ACK was sent");
                    assert_eq!(opts.ackno, pkt.seq, "ACKs of a connection arrive in order, none lost");
                    self.conns.senders[f].on_ack_stamped(
                        self.now,
                        pkt.seq,
                        opts.sack.as_slice(),
                        opts.stamp,
                        &mut self.conns.outbox,
                    );
                } else {
                    self.conns.senders[f].on_ack(self.now, pkt.seq, &mut self.conns.outbox);
                }
                self.record_samples(f);
                self.flush(f);
                self.transfer_left(f);
            }
            Kind::OpenLoop => {
                let c = &mut self.meters.class_ctr[Class::Udp as usize];
                c.delivered += 1;
                c.delivered_bytes += pkt.bytes as u64;
            }
        }
    }

    /// A packet was dropped.
    fn dropped(&mut self, pkt: &Packet) {
        let f = pkt.flow as usize;
        match pkt.kind() {
            // A SYN: counted by its link as any packet, not as a data packet of its flow (its
            // timer resends it).
            Kind::Data if pkt.is_handshake() => self.transfer_left(f),
            Kind::Data if f < self.conns.n_long => self.meters.flow_dropped[f] += 1,
            Kind::Data => {
                self.count_transfer(f, |c| c.dropped += 1);
                self.transfer_left(f);
            }
            Kind::Ack => self.transfer_left(f),
            Kind::OpenLoop => self.meters.class_ctr[Class::Udp as usize].dropped += 1,
        }
    }

    #[inline(always)]
    fn send_ack(&mut self, f: usize, ack: i64) {
        self.transfer_entered(f);
        let conn = &self.conns.conn[f];
        if conn.sack || conn.stamps {
            let r = &self.conns.receivers[f];
            let sack = if conn.sack { r.sack_blocks(SACK_BLOCKS) } else { SackList::default() };
            let stamp = conn.stamps.then_some((r.last_arrival_seq, self.now));
            self.conns.ack_opts[f].push_back(AckOptions { ackno: ack, sack, stamp });
        }
        let mut pkt = Packet::new(Kind::Ack, f, ACK_BYTES, ack);
        if self.conns.receivers[f].ece {
            pkt.set_flag();
        }
        if self.conns.receivers[f].echo_retx {
            pkt.set_retx();
        }
        self.enter(pkt, self.conns.conn[f].rev);
    }
}

/// Runs a validated config to completion (no interruption).
pub fn run(cfg: &SimConfig) -> RunOutput {
    let net = cfg.validate().expect("a valid config");
    let no_budget = "memory: no budget on this thread";
    World::new(cfg, net).expect(no_budget).run(&mut || false).expect(no_budget)
}
