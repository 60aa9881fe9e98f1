//! The world's periodic events: buffer policies' calls and the time-series sample; and the
//! building of each link's buffer policy.

use super::World;
use crate::event::Event;
use crate::metrics::{utilization, LinkCounters};
use crate::output::{ControlRow, TimeseriesRow};
use crate::policy::{BufferPolicy, LinkContext, QueueView};
use crate::queue::{Limit, QueueDiscipline};
use crate::time::{from_secs, to_secs, Time};

/// An adaptive policy on a topology link, with its interval and the link's counters at its
/// previous call.
pub(crate) struct LinkPolicy {
    link: usize,
    policy: Box<dyn BufferPolicy>,
    interval: Time,
    last: LinkCounters,
}

impl World<'_> {
    /// What a static rule knows of link `i`: its rate and the long flows crossing it.
    fn link_context(&self, i: usize) -> LinkContext {
        let rtts_s = (0..self.conns.n_long)
            .filter(|&f| self.net.routes[self.conns.flow_route[f]].links.contains(&i))
            .map(|f| self.conns.rtt_s[f])
            .collect();
        LinkContext {
            rate_bps: self.net.links[i].rate_bps,
            pkt_bytes: self.pkt_bytes as u32,
            rtts_s,
            default_rtt_s: self.cfg.rtt_ms / 1000.0,
            wmax_pkts: self.cfg.wmax_pkts as f64,
        }
    }

    /// Each link's policy: a static rule sets the buffer now; an adaptive one is kept for its
    /// calls (the first at t = 0, see `schedule_first_events`).
    pub(super) fn build_policies(&mut self) {
        for i in 0..self.net.links.len() {
            let cfg = self.net.links[i].policy.0.clone();
            let mut policy = cfg.make(&self.link_context(i));
            if cfg.adaptive() {
                let interval = from_secs(cfg.interval_ms() / 1000.0).max(1);
                self.policies.push(LinkPolicy { link: i, policy, interval, last: LinkCounters::default() });
            } else if let Some(pkts) = policy.start(&self.queue_view(i, LinkCounters::default(), 1)) {
                self.set_buffer(i, pkts);
            }
        }
        let n = self.net.links.len();
        (self.meters.start_buffer_pkts, self.meters.start_buffer_bytes) = (vec![0.0; n], vec![None; n]);
        for i in 0..n {
            self.record_start_buffer(i);
        }
    }

    /// Keeps link `link`'s buffer as it starts the run (the `links` and `summary` tables say it).
    fn record_start_buffer(&mut self, link: usize) {
        self.meters.start_buffer_pkts[link] = self.capacity_pkts(link);
        self.meters.start_buffer_bytes[link] = match self.links[link].queue().expect("topology link").limit() {
            Limit::Bytes(b) => Some(b),
            Limit::Packets(_) => None,
        };
    }

    fn capacity_pkts(&self, link: usize) -> f64 {
        self.links[link].queue().expect("topology links have queues").capacity_pkts(self.pkt_bytes as u32)
    }

    /// Link `link`'s queue and what it saw over `interval`, `c` its counters for that interval.
    fn queue_view(&self, link: usize, c: LinkCounters, interval: Time) -> QueueView {
        let q = self.links[link].queue().expect("topology links have queues");
        QueueView {
            now_s: to_secs(self.now),
            len_pkts: q.len() as u64,
            capacity_pkts: q.capacity_pkts(self.pkt_bytes as u32),
            arrivals: c.arrivals,
            drops: c.drops,
            utilization: utilization(&c, interval),
            input_utilization: c.arrival_bits as f64 / (self.net.links[link].rate_bps * to_secs(interval)),
        }
    }

    /// Sets a topology link's buffer to `pkts` packets (in bytes for a byte-limited queue).
    fn set_buffer(&mut self, link: usize, pkts: u64) {
        let pkt_bytes = self.pkt_bytes as u64;
        let q = self.links[link].queue_mut().expect("topology links have queues");
        let limit = match q.limit() {
            Limit::Bytes(_) => Limit::Bytes(pkts * pkt_bytes),
            Limit::Packets(_) => Limit::Packets(pkts),
        };
        q.set_limit(limit);
    }

    /// Adaptive policy `k`'s call: `start` at t = 0, then one sample per interval, recorded in
    /// the `control` table.
    pub(super) fn policy_tick(&mut self, k: usize) {
        let (link, interval) = (self.policies[k].link, self.policies[k].interval);
        let at_now = self.meters.stats[link].counters_at(self.now);
        let view = self.queue_view(link, at_now.since(&self.policies[k].last), interval);
        let first = self.now == 0;
        let p = &mut self.policies[k].policy;
        let set = if first { p.start(&view) } else { p.on_tick(&view) };
        if let Some(pkts) = set {
            self.set_buffer(link, pkts);
        }
        if first {
            self.record_start_buffer(link);
        } else {
            self.record_control(k, &view);
        }
        self.policies[k].last = at_now;
        self.events.push(self.now + interval, Event::PolicyTick(k as u32));
    }

    fn record_control(&mut self, k: usize, view: &QueueView) {
        let link = self.policies[k].link;
        let st = self.policies[k].policy.state();
        self.meters.control.push(ControlRow {
            time_s: view.now_s,
            link_id: link as i64,
            buffer_pkts: self.capacity_pkts(link),
            b_pkts: st.b_pkts,
            b_u_pkts: st.b_u_pkts,
            b_p_pkts: st.b_p_pkts,
            gain_util: st.gain_util,
            gain_loss: st.gain_loss,
            u: st.u,
            p: st.p,
            input_utilization: view.input_utilization,
            utilization: view.utilization,
            loss_rate: crate::policy::measured_loss(view),
        });
    }

    pub(super) fn sample_tick(&mut self) {
        let dt = self.now - self.meters.last_sample;
        let dt_s = to_secs(dt);
        let n_net = self.net.links.len();
        let mut cwnd_total = vec![0.0; n_net];
        let mut started = vec![0usize; n_net];
        let mut rates = vec![(0.0, 0u64); n_net]; // the delivery-rate samples' sum and count
        let in_window = self.now > self.warm;
        for f in 0..self.conns.n_long {
            let cwnd = self.conns.senders[f].st().cwnd;
            let (rate_sum, rate_n) = std::mem::take(&mut self.meters.rate_interval[f]);
            for &l in &self.net.routes[self.conns.flow_route[f]].links {
                if self.conns.senders[f].st().maxseq >= 0 {
                    cwnd_total[l] += cwnd;
                    started[l] += 1;
                }
                rates[l] = (rates[l].0 + rate_sum, rates[l].1 + rate_n);
            }
            if in_window {
                self.meters.cwnd_sum[f] += cwnd;
            }
        }
        let (active, in_ca) = self.flows_by_link();
        if in_window {
            self.meters.cwnd_samples += 1;
        }
        let mut bottleneck = None;
        for i in 0..n_net {
            let l = i; // topology links are the first links
            let queue = self.links[l].queue().expect("topology links have queues");
            let capacity = queue.capacity_pkts(self.pkt_bytes as u32);
            let state = queue.state();
            let link_delivered = self.link_delivered(i);
            let s = &mut self.meters.stats[i];
            let (q_mean, q_max) = s.queue.take_sample(self.now, dt);
            let at_now = s.counters_at(self.now);
            let c = at_now.since(&s.at_sample);
            let delivered = link_delivered - s.delivered_at_sample;
            self.meters.ts.push(TimeseriesRow {
                time_s: to_secs(self.now),
                link_id: i as i64,
                utilization: utilization(&c, dt),
                goodput_mbps: delivered as f64 * self.pkt_bytes as f64 * 8.0 / dt_s / 1e6,
                arrivals: c.arrivals as i64,
                drops: c.drops as i64,
                queue_mean_pkts: q_mean,
                queue_max_pkts: q_max as i64,
                buffer_pkts: capacity,
                mean_cwnd_pkts: (started[i] > 0).then(|| cwnd_total[i] / started[i] as f64),
                delivery_rate_mbps: (rates[i].1 > 0)
                    .then(|| rates[i].0 / rates[i].1 as f64 * self.pkt_bytes as f64 * 8.0 / 1e6),
                active_flows: active[i] as i64,
                ca_flows: in_ca[i] as i64,
                marks: c.marks as i64,
                red_avg: state.red_avg,
                codel_drop_next_s: state.codel_drop_next_s,
                codel_count: state.codel_count.map(|n| n as i64),
                pie_prob: state.pie_prob,
            });
            if i == self.net.bottleneck && self.precision.is_some() {
                let (sum, n) = (s.delay_sum_ns, s.delay_n);
                let row = self.meters.ts.last().expect("just pushed");
                let loss = (c.drops as f64, c.arrivals as f64);
                let sample = [(row.utilization, 1.0), loss, (row.goodput_mbps, 1.0), (q_mean, 1.0), (0.0, 0.0)];
                bottleneck = Some((sample, (sum, n)));
            }
            s.at_sample = at_now;
            s.delivered_at_sample = link_delivered;
        }
        if let (Some(t), Some((sample, delay))) = (self.precision.as_mut(), bottleneck) {
            if t.sample(sample, delay) {
                self.end = self.now;
                self.stop_reason = t.reason;
            }
        }
        self.meters.last_sample = self.now;
        self.events.push(self.now + self.meters.sample_interval, Event::SampleTick);
    }
}
