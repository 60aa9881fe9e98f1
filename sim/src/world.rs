//! The dumbbell: N long-lived TCP senders, each behind its own access link (optional), share one
//! drop-tail bottleneck with short TCP flows (connections after the N long ones, see `short`)
//! and open-loop sources (which feed the bottleneck directly); ACKs return on an uncongested
//! path. This module wires the components together and dispatches events; it holds no
//! protocol logic. Per-flow results and the time series describe the long flows.
//!
//! Where the propagation delay sits: all of a flow's two-way propagation delay (its RTT) is put
//! on the return path, after the receiver, which sits right behind the bottleneck. What the
//! bottleneck sees is the same for any split of the delay (only the loop delay from a departure
//! to the packets it clocks out matters; other splits shift each flow's whole trajectory by a
//! constant), and this one needs a single delay line per flow, i.e. two events per packet.

use crate::config::SimConfig;
use crate::controller::{self, BufferController, QueueView};
use crate::event::{Event, EventQueue};
use crate::link::{Arrival, DelayLine, Link};
use crate::metrics::{jain, new_delay_histogram, LinkCounters, QueueMonitor, TimeSeries};
use crate::packet::{Kind, Packet};
use crate::queue::Limit;
use crate::rng::{stream, Stream};
use crate::short::ShortFlows;
use crate::source::{OpenLoopSource, Pattern};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::{SenderStats, TcpParams, TcpSender};
use crate::time::{from_secs, to_secs, Time};
use crate::trace::{Trace, DEQUEUE, DROP, ENQUEUE};
use hdrhistogram::Histogram;
use rand::Rng;

/// Per-flow results.
#[derive(Default)]
pub struct FlowTable {
    pub flow_id: Vec<u32>,
    pub rtt_ms: Vec<f64>,
    pub start_s: Vec<f64>,
    pub goodput_mbps: Vec<f64>,
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub fast_retransmits: Vec<u64>,
    pub mean_cwnd_pkts: Vec<f64>,
    /// Whole-run conservation counters: sent = delivered + dropped + in_flight.
    pub sent_pkts: Vec<u64>,
    pub delivered_pkts: Vec<u64>,
    pub dropped_pkts: Vec<u64>,
    pub in_flight_pkts: Vec<u64>,
}

pub struct RunOutput {
    /// Summary metrics, in a fixed order (see `World::summary`).
    pub summary: Vec<(&'static str, f64)>,
    pub timeseries: TimeSeries,
    pub flows: FlowTable,
    pub trace: Trace,
    pub interrupted: bool,
}

pub struct World<'c> {
    cfg: &'c SimConfig,
    now: Time,
    end: Time,
    warm: Time,
    events: EventQueue,
    pkt_bytes: u32,
    core_bps: f64,
    /// Connections 0..n_long are the long flows; later ones are short flows' slots.
    n_long: usize,
    tcp_params: TcpParams,
    short: Option<ShortFlows>,
    core: Link,
    access: Vec<Link>,
    ack_lines: Vec<DelayLine<i64>>,
    senders: Vec<TcpSender>,
    receivers: Vec<TcpReceiver>,
    rtt_s: Vec<f64>,
    start_s: Vec<f64>,
    sources: Vec<OpenLoopSource>,
    controller: Option<Box<dyn BufferController>>,
    controller_interval: Time,
    controller_last: LinkCounters,
    pending_rto: Vec<Option<Time>>,
    pending_send: Vec<Option<Time>>,
    pending_delack: Vec<Option<Time>>,
    outbox: Vec<i64>,
    // metrics
    core_ctr: LinkCounters,
    core_at_warm: LinkCounters,
    core_at_sample: LinkCounters,
    access_arrivals: u64,
    access_drops: u64,
    access_at_warm: (u64, u64),
    queue: QueueMonitor,
    delay_ns: Histogram<u64>,
    flow_dropped: Vec<u64>,
    flow_at_warm: Vec<(SenderStats, u64)>,
    delivered_total: u64,
    delivered_at_sample: u64,
    cwnd_sum: Vec<f64>,
    cwnd_samples: u64,
    sample_interval: Time,
    last_sample: Time,
    ts: TimeSeries,
    trace: Trace,
}

impl<'c> World<'c> {
    /// Builds the network from a validated config and schedules the first events.
    pub fn new(cfg: &'c SimConfig) -> Self {
        let n = cfg.flows as usize;
        let pkt_bytes = cfg.pkt_bytes as u32;
        let core_limit = match cfg.buffer_bytes {
            Some(b) => Limit::Bytes(b as u64),
            None => Limit::Packets(cfg.buffer_pkts as u64),
        };
        let core_bps = cfg.core_mbps * 1e6;
        let seed = cfg.seed as u64;
        let mut rtt_s = Vec::with_capacity(n);
        let mut start_s = Vec::with_capacity(n);
        for f in 0..n {
            let mut rng = stream(seed, Stream::Topology, f as u64);
            start_s.push(rng.random::<f64>() * cfg.start_window_s);
            let u: f64 = rng.random();
            let rtt_ms = match &cfg.rtts_ms {
                Some(list) => list[f],
                None => cfg.rtt_ms + (u - 0.5) * cfg.rtt_spread_ms,
            };
            rtt_s.push(rtt_ms / 1000.0);
        }
        let tcp_params = TcpParams {
            init_cwnd: cfg.init_cwnd_pkts,
            init_ssthresh: cfg.init_ssthresh_pkts.unwrap_or(cfg.wmax_pkts as f64),
            wmax: cfg.wmax_pkts as f64,
            min_rto_s: cfg.min_rto_ms / 1000.0,
            max_rto_s: cfg.max_rto_s,
            init_rto_s: cfg.init_rto_s,
            tick_s: cfg.tick_ms / 1000.0,
            limited_transmit: cfg.limited_transmit,
            max_burst: cfg.max_burst_pkts as u32,
        };
        let senders = (0..n)
            .map(|f| TcpSender::new(&cfg.tcp, tcp_params, stream(seed, Stream::Sender, f as u64)))
            .collect();
        let receivers = (0..n).map(|_| new_receiver(cfg)).collect();
        let access = match cfg.access_mbps {
            Some(_) => (0..n).map(|_| new_access_link(cfg)).collect(),
            None => Vec::new(),
        };
        let ack_lines = rtt_s.iter().map(|&r| DelayLine::new(from_secs(r))).collect();
        let ol_bytes = cfg.open_loop_bytes.unwrap_or(cfg.pkt_bytes) as u32;
        let mut sources = Vec::new();
        if cfg.poisson_mbps > 0.0 {
            let rng = stream(seed, Stream::Source, 0);
            sources.push(OpenLoopSource::new(Pattern::Poisson, cfg.poisson_mbps, ol_bytes, rng));
        }
        if cfg.cbr_mbps > 0.0 {
            let rng = stream(seed, Stream::Source, 1);
            sources.push(OpenLoopSource::new(Pattern::Cbr, cfg.cbr_mbps, ol_bytes, rng));
        }
        let warm = from_secs(cfg.warmup_s);
        let short = (cfg.short_mbps > 0.0).then(|| {
            ShortFlows::new(cfg.short_mbps, cfg.short_flow_pkts, pkt_bytes, cfg.rtt_ms, cfg.rtt_spread_ms, seed, n, warm)
        });
        let trace_start = from_secs(cfg.trace_start_s.unwrap_or(cfg.warmup_s));
        let mut w = World {
            cfg,
            now: 0,
            end: from_secs(cfg.duration_s),
            warm,
            events: EventQueue::new(),
            pkt_bytes,
            core_bps,
            n_long: n,
            tcp_params,
            short,
            core: Link::new(core_bps, core_limit),
            access,
            ack_lines,
            senders,
            receivers,
            rtt_s,
            start_s,
            sources,
            controller: controller::make(cfg),
            controller_interval: from_secs(cfg.controller_interval_ms / 1000.0).max(1),
            controller_last: LinkCounters::default(),
            pending_rto: vec![None; n],
            pending_send: vec![None; n],
            pending_delack: vec![None; n],
            outbox: Vec::with_capacity(64),
            core_ctr: LinkCounters::default(),
            core_at_warm: LinkCounters::default(),
            core_at_sample: LinkCounters::default(),
            access_arrivals: 0,
            access_drops: 0,
            access_at_warm: (0, 0),
            queue: QueueMonitor::new(warm),
            delay_ns: new_delay_histogram(),
            flow_dropped: vec![0; n],
            flow_at_warm: vec![(SenderStats::default(), 0); n],
            delivered_total: 0,
            delivered_at_sample: 0,
            cwnd_sum: vec![0.0; n],
            cwnd_samples: 0,
            sample_interval: from_secs(cfg.sample_interval_s).max(1),
            last_sample: 0,
            ts: TimeSeries::default(),
            trace: Trace::new(cfg.trace_max_events as usize, trace_start),
        };
        for f in 0..n {
            w.events.push(from_secs(w.start_s[f]), Event::FlowStart(f as u32));
        }
        for s in 0..w.sources.len() {
            let gap = w.sources[s].next_gap();
            w.events.push(gap, Event::SourceEmit(s as u32));
        }
        if let Some(short) = w.short.as_mut() {
            let gap = short.next_gap();
            w.events.push(gap, Event::ShortArrival);
        }
        w.events.push(warm, Event::WarmupEnd);
        w.events.push(w.sample_interval, Event::SampleTick);
        if w.controller.is_some() {
            // A first call at t=0 lets a controller set the initial capacity.
            w.events.push(0, Event::ControllerTick);
        }
        w
    }

    /// Runs to `duration_s`. `poll` is called every 2^18 events; returning true stops the run
    /// (Ctrl-C), and the output is then marked interrupted.
    pub fn run(mut self, poll: &mut dyn FnMut() -> bool) -> RunOutput {
        let started = std::time::Instant::now();
        let mut interrupted = false;
        let mut since_poll = 0u32;
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.dispatch(ev);
            since_poll += 1;
            if since_poll == 1 << 18 {
                since_poll = 0;
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
        self.finish(wall_s, interrupted)
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::FlowStart(f) => {
                let f = f as usize;
                self.senders[f].start(self.now, &mut self.outbox);
                self.flush(f);
            }
            Event::AckArrival(f) => {
                let f = f as usize;
                let (ack, next) = self.ack_lines[f].pop();
                if let Some(due) = next {
                    self.events.push(due, Event::AckArrival(f as u32));
                }
                self.senders[f].on_ack(self.now, ack, &mut self.outbox);
                self.flush(f);
                self.short_left(f);
            }
            Event::AccessTxDone(f) => {
                let (pkt, next) = self.access[f as usize].complete(self.now);
                if let Some((_, done)) = next {
                    self.events.push(done, Event::AccessTxDone(f));
                }
                self.core_arrive(pkt);
            }
            Event::CoreTxDone => self.core_tx_done(),
            Event::RtoTimer(f) => {
                let f = f as usize;
                if self.pending_rto[f] == Some(self.now) {
                    self.pending_rto[f] = None;
                }
                self.senders[f].on_rto_timer(self.now, &mut self.outbox);
                self.flush(f);
            }
            Event::SendTimer(f) => {
                let f = f as usize;
                if self.pending_send[f] == Some(self.now) {
                    self.pending_send[f] = None;
                }
                self.senders[f].on_send_timer(self.now, &mut self.outbox);
                self.flush(f);
            }
            Event::DelAckTimer(f) => {
                let f = f as usize;
                if self.pending_delack[f] == Some(self.now) {
                    self.pending_delack[f] = None;
                }
                if let Some(ack) = self.receivers[f].on_delack_timer(self.now) {
                    self.send_ack(f, ack);
                }
                self.sync_delack(f);
            }
            Event::SourceEmit(s) => {
                let src = &mut self.sources[s as usize];
                let pkt = Packet { kind: Kind::OpenLoop, flow: s, bytes: src.bytes, seq: 0, enqueued_at: 0 };
                let gap = src.next_gap().max(1);
                self.events.push(self.now + gap, Event::SourceEmit(s));
                self.core_arrive(pkt);
            }
            Event::ShortArrival => self.short_arrival(),
            Event::ControllerTick => self.controller_tick(),
            Event::SampleTick => self.sample_tick(),
            Event::WarmupEnd => {
                self.core_at_warm = self.core_ctr;
                self.access_at_warm = (self.access_arrivals, self.access_drops);
                for f in 0..self.n_long {
                    self.flow_at_warm[f] = (self.senders[f].stats, self.receivers[f].delivered);
                }
            }
        }
    }

    /// Sends what the sender queued in `outbox` and (re)schedules its timers.
    fn flush(&mut self, f: usize) {
        let mut out = std::mem::take(&mut self.outbox);
        for &seq in &out {
            let pkt = Packet { kind: Kind::Data, flow: f as u32, bytes: self.pkt_bytes, seq, enqueued_at: 0 };
            if let Some(short) = self.short.as_mut() {
                short.entered(f);
            }
            if self.access.is_empty() {
                self.core_arrive(pkt);
            } else {
                self.access_arrivals += 1;
                match self.access[f].arrive(pkt, self.now) {
                    Arrival::Started(done) => self.events.push(done, Event::AccessTxDone(f as u32)),
                    Arrival::Queued => {}
                    Arrival::Dropped => {
                        self.access_drops += 1;
                        self.count_drop(f);
                    }
                }
            }
        }
        out.clear();
        self.outbox = out;
        // Timers are rescheduled lazily: one pending event per timer; an event that finds its
        // deadline moved later is simply followed by another.
        if let Some(d) = self.senders[f].rto_deadline {
            if self.pending_rto[f].is_none_or(|p| p > d) {
                self.events.push(d, Event::RtoTimer(f as u32));
                self.pending_rto[f] = Some(d);
            }
        }
        if let Some(d) = self.senders[f].send_deadline {
            if self.pending_send[f].is_none_or(|p| p > d) {
                self.events.push(d, Event::SendTimer(f as u32));
                self.pending_send[f] = Some(d);
            }
        }
    }

    fn sync_delack(&mut self, f: usize) {
        if let Some(d) = self.receivers[f].delack_deadline {
            if self.pending_delack[f].is_none_or(|p| p > d) {
                self.events.push(d, Event::DelAckTimer(f as u32));
                self.pending_delack[f] = Some(d);
            }
        }
    }

    fn core_arrive(&mut self, pkt: Packet) {
        self.core_ctr.arrivals += 1;
        match self.core.arrive(pkt, self.now) {
            Arrival::Started(done) => {
                self.events.push(done, Event::CoreTxDone);
                self.trace.record(self.now, ENQUEUE, &pkt, 0);
                self.trace.record(self.now, DEQUEUE, &pkt, 0);
                if self.now >= self.warm {
                    self.delay_ns.record(0).expect("histogram auto-resizes");
                }
            }
            Arrival::Queued => {
                let len = self.core.queue.len();
                self.queue.set_len(self.now, len);
                self.trace.record(self.now, ENQUEUE, &pkt, len);
            }
            Arrival::Dropped => {
                self.core_ctr.drops += 1;
                if pkt.kind == Kind::Data {
                    self.count_drop(pkt.flow as usize);
                }
                self.trace.record(self.now, DROP, &pkt, self.core.queue.len());
            }
        }
    }

    fn core_tx_done(&mut self) {
        let (done, next) = self.core.complete(self.now);
        self.core_ctr.tx_pkts += 1;
        self.core_ctr.tx_bits += done.bytes as u64 * 8;
        if let Some((pkt, t)) = next {
            self.events.push(t, Event::CoreTxDone);
            let len = self.core.queue.len();
            self.queue.set_len(self.now, len);
            if self.now >= self.warm {
                let waited_ns = (self.now - pkt.enqueued_at) / 1000;
                self.delay_ns.record(waited_ns).expect("histogram auto-resizes");
            }
            self.trace.record(self.now, DEQUEUE, &pkt, len);
        }
        if done.kind == Kind::Data {
            let f = done.flow as usize;
            let (ack, new) = self.receivers[f].on_data(self.now, done.seq);
            self.delivered_total += new;
            if let Some(short) = self.short.as_mut() {
                short.on_delivered(f, self.now, self.receivers[f].delivered);
            }
            if let Some(ack) = ack {
                self.send_ack(f, ack);
            }
            self.sync_delack(f);
            self.short_left(f);
        }
    }

    /// A data packet of connection `f` was dropped.
    fn count_drop(&mut self, f: usize) {
        if f < self.n_long {
            self.flow_dropped[f] += 1;
        } else {
            self.short_left(f);
        }
    }

    /// A packet or ACK of connection `f` left the network; frees a finished short flow's slot.
    fn short_left(&mut self, f: usize) {
        if let Some(short) = self.short.as_mut() {
            if short.is_short(f) {
                short.left(f);
                short.release_if_done(f, self.senders[f].finished());
            }
        }
    }

    /// A short flow arrives: builds its connection (or renews a free one) and starts it.
    fn short_arrival(&mut self) {
        let short = self.short.as_mut().expect("arrivals only with short flows");
        let gap = short.next_gap();
        let flow = short.arrive(self.now);
        let size = short.size_pkts;
        self.events.push(self.now + gap, Event::ShortArrival);
        let f = flow.conn;
        let sender = TcpSender::new(&self.cfg.tcp, self.tcp_params, flow.sender_rng).with_size(size);
        let receiver = new_receiver(self.cfg);
        let ack_line = DelayLine::new(from_secs(flow.rtt_s));
        if flow.fresh {
            debug_assert_eq!(f, self.senders.len());
            self.senders.push(sender);
            self.receivers.push(receiver);
            self.ack_lines.push(ack_line);
            if self.cfg.access_mbps.is_some() {
                self.access.push(new_access_link(self.cfg));
            }
            self.pending_rto.push(None);
            self.pending_send.push(None);
            self.pending_delack.push(None);
        } else {
            // The slot's old flow has nothing left in the network (see `short`).
            self.senders[f] = sender;
            self.receivers[f] = receiver;
            self.ack_lines[f] = ack_line;
        }
        self.senders[f].start(self.now, &mut self.outbox);
        self.flush(f);
    }

    fn send_ack(&mut self, f: usize, ack: i64) {
        if let Some(short) = self.short.as_mut() {
            short.entered(f);
        }
        if let Some(due) = self.ack_lines[f].push(self.now, ack) {
            self.events.push(due, Event::AckArrival(f as u32));
        }
    }

    fn controller_tick(&mut self) {
        let since = self.core_ctr.since(&self.controller_last);
        let dt_s = to_secs(self.controller_interval);
        let view = QueueView {
            now_s: to_secs(self.now),
            len_pkts: self.core.queue.len() as u64,
            capacity_pkts: self.core.queue.capacity_pkts(self.pkt_bytes),
            arrivals: since.arrivals,
            drops: since.drops,
            utilization: since.tx_bits as f64 / (self.core_bps * dt_s),
        };
        if let Some(ctl) = self.controller.as_mut() {
            if let Some(pkts) = ctl.on_tick(&view) {
                let limit = match self.core.queue.limit() {
                    Limit::Bytes(_) => Limit::Bytes(pkts * self.pkt_bytes as u64),
                    Limit::Packets(_) => Limit::Packets(pkts),
                };
                self.core.queue.set_limit(limit);
            }
        }
        self.controller_last = self.core_ctr;
        self.events.push(self.now + self.controller_interval, Event::ControllerTick);
    }

    fn sample_tick(&mut self) {
        let dt = self.now - self.last_sample;
        let dt_s = to_secs(dt);
        let (q_mean, q_max) = self.queue.take_sample(self.now, dt);
        let c = self.core_ctr.since(&self.core_at_sample);
        let delivered = self.delivered_total - self.delivered_at_sample;
        let mut cwnd_total = 0.0;
        let mut started = 0usize;
        let in_window = self.now > self.warm;
        for (f, s) in self.senders[..self.n_long].iter().enumerate() {
            if s.st.maxseq >= 0 {
                cwnd_total += s.st.cwnd;
                started += 1;
            }
            if in_window {
                self.cwnd_sum[f] += s.st.cwnd;
            }
        }
        if in_window {
            self.cwnd_samples += 1;
        }
        let ts = &mut self.ts;
        ts.time_s.push(to_secs(self.now));
        ts.utilization.push(c.tx_bits as f64 / (self.core_bps * dt_s));
        ts.goodput_mbps.push(delivered as f64 * self.pkt_bytes as f64 * 8.0 / dt_s / 1e6);
        ts.arrivals.push(c.arrivals);
        ts.drops.push(c.drops);
        ts.queue_mean_pkts.push(q_mean);
        ts.queue_max_pkts.push(q_max as u64);
        ts.buffer_pkts.push(self.core.queue.capacity_pkts(self.pkt_bytes));
        ts.mean_cwnd_pkts.push(if started > 0 { cwnd_total / started as f64 } else { f64::NAN });
        self.core_at_sample = self.core_ctr;
        self.delivered_at_sample = self.delivered_total;
        self.last_sample = self.now;
        self.events.push(self.now + self.sample_interval, Event::SampleTick);
    }

    fn finish(mut self, wall_s: f64, interrupted: bool) -> RunOutput {
        let end = self.now;
        self.queue.integrate(end);
        let window = end.saturating_sub(self.warm).max(1);
        let window_s = to_secs(window);
        let pkt_bits = self.pkt_bytes as f64 * 8.0;
        let c = self.core_ctr.since(&self.core_at_warm);
        let n = self.n_long;

        // Packets of each flow still in the network.
        let mut in_flight = vec![0u64; n];
        for p in self.core.packets() {
            if p.kind == Kind::Data && (p.flow as usize) < n {
                in_flight[p.flow as usize] += 1;
            }
        }
        for link in &self.access[..n.min(self.access.len())] {
            for p in link.packets() {
                in_flight[p.flow as usize] += 1;
            }
        }

        let mut flows = FlowTable::default();
        let (mut timeouts, mut fast_retx, mut retx) = (0u64, 0u64, 0u64);
        for f in 0..n {
            let s = &self.senders[f];
            let (warm_stats, warm_delivered) = self.flow_at_warm[f];
            let goodput = (self.receivers[f].delivered - warm_delivered) as f64 * pkt_bits / window_s / 1e6;
            flows.flow_id.push(f as u32);
            flows.rtt_ms.push(self.rtt_s[f] * 1000.0);
            flows.start_s.push(self.start_s[f]);
            flows.goodput_mbps.push(goodput);
            let r = s.stats.retransmits - warm_stats.retransmits;
            let t = s.stats.timeouts - warm_stats.timeouts;
            let fr = s.stats.fast_retransmits - warm_stats.fast_retransmits;
            flows.retransmits.push(r);
            flows.timeouts.push(t);
            flows.fast_retransmits.push(fr);
            retx += r;
            timeouts += t;
            fast_retx += fr;
            flows.mean_cwnd_pkts.push(if self.cwnd_samples > 0 { self.cwnd_sum[f] / self.cwnd_samples as f64 } else { f64::NAN });
            flows.sent_pkts.push(s.stats.sent);
            flows.delivered_pkts.push(self.receivers[f].arrivals);
            flows.dropped_pkts.push(self.flow_dropped[f]);
            flows.in_flight_pkts.push(in_flight[f]);
        }

        let utilization = c.tx_bits as f64 / (self.core_bps * window_s);
        let goodput_mbps: f64 = flows.goodput_mbps.iter().sum::<f64>() + 0.0; // + 0.0: no -0.0 without flows
        // Everything but the long flows offers a fixed rate.
        let other_mbps = self.cfg.poisson_mbps + self.cfg.cbr_mbps + self.cfg.short_mbps;
        let tcp_peak_bps: f64 = self.rtt_s.iter().map(|r| self.cfg.wmax_pkts as f64 * pkt_bits / r).sum();
        let offered_load = (tcp_peak_bps + other_mbps * 1e6) / self.core_bps;
        let access_arr = self.access_arrivals - self.access_at_warm.0;
        let access_drop = self.access_drops - self.access_at_warm.1;
        let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        let mean_rtt_ms = if n > 0 { self.rtt_s.iter().sum::<f64>() / n as f64 * 1000.0 } else { f64::NAN };
        let events = self.events.executed as f64;
        let short_fct = self.short.as_ref().map_or((f64::NAN, f64::NAN), |s| s.fct_ms());
        let summary = vec![
            ("utilization", utilization),
            ("goodput_mbps", goodput_mbps),
            ("offered_load", offered_load),
            ("effective_utilization", utilization / offered_load.min(1.0)),
            ("loss_rate", ratio(c.drops, c.arrivals)),
            ("access_loss_rate", ratio(access_drop, access_arr)),
            ("mean_queue_pkts", self.queue.window_mean(window)),
            ("p99_queue_pkts", self.queue.window_quantile(0.99)),
            ("mean_queue_delay_ms", self.delay_ns.mean() / 1e6),
            ("p99_queue_delay_ms", self.delay_ns.value_at_quantile(0.99) as f64 / 1e6),
            ("jain_fairness", jain(&flows.goodput_mbps)),
            ("timeouts", timeouts as f64),
            ("fast_retransmits", fast_retx as f64),
            ("retransmits", retx as f64),
            ("mean_cwnd_pkts", {
                let v: Vec<f64> = flows.mean_cwnd_pkts.iter().copied().filter(|x| x.is_finite()).collect();
                if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
            }),
            ("mean_rtt_ms", mean_rtt_ms),
            ("short_flows", self.short.as_ref().map_or(0.0, |s| s.measured_started as f64)),
            ("short_flows_done", self.short.as_ref().map_or(0.0, |s| s.measured_done as f64)),
            ("short_afct_ms", short_fct.0),
            ("short_p99_fct_ms", short_fct.1),
            ("bottleneck_arrivals", c.arrivals as f64),
            ("bottleneck_drops", c.drops as f64),
            ("bottleneck_pkts", c.tx_pkts as f64),
            ("measured_s", window_s),
            ("events", events),
            ("wall_s", wall_s),
            ("events_per_s", events / wall_s.max(1e-9)),
            ("pkts_per_s", self.core_ctr.tx_pkts as f64 / wall_s.max(1e-9)),
        ];
        RunOutput { summary, timeseries: self.ts, flows, trace: self.trace, interrupted }
    }
}

/// A connection's receiver (long or short flow).
fn new_receiver(cfg: &SimConfig) -> TcpReceiver {
    TcpReceiver::new(cfg.delayed_ack, from_secs(cfg.delack_ms / 1000.0))
}

/// A sender's access link; only called when `access_mbps` is set.
fn new_access_link(cfg: &SimConfig) -> Link {
    let mbps = cfg.access_mbps.expect("access links only with access_mbps");
    Link::new(mbps * 1e6, Limit::Packets(cfg.access_buffer_pkts as u64))
}

/// Runs a validated config to completion (no interruption).
pub fn run(cfg: &SimConfig) -> RunOutput {
    World::new(cfg).run(&mut || false)
}
