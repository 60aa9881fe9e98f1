//! The world's periodic events: the buffer controller's call and the time-series sample.

use super::World;
use crate::controller::QueueView;
use crate::event::Event;
use crate::metrics::utilization;
use crate::output::TimeseriesRow;
use crate::queue::{Discipline, Limit, QueueDiscipline};
use crate::time::to_secs;

impl World<'_> {
    /// The bottleneck's queue.
    fn bottleneck_queue(&mut self) -> &mut Discipline {
        self.links[self.net.bottleneck].queue_mut().expect("topology links have queues")
    }

    pub(super) fn controller_tick(&mut self) {
        let b = self.net.bottleneck;
        let at_now = self.stats[b].counters_at(self.now);
        let since = at_now.since(&self.controller_last);
        let pkt_bytes = self.pkt_bytes;
        let q = self.links[b].queue().expect("topology links have queues");
        let view = QueueView {
            now_s: to_secs(self.now),
            len_pkts: q.len() as u64,
            capacity_pkts: q.capacity_pkts(pkt_bytes as u32),
            arrivals: since.arrivals,
            drops: since.drops,
            utilization: utilization(&since, self.controller_interval),
            input_utilization: since.arrival_bits as f64
                / (self.net.links[b].rate_bps * to_secs(self.controller_interval)),
        };
        let first = self.now == 0;
        let set = self.controller.as_mut().and_then(|ctl| if first { ctl.start(&view) } else { ctl.on_tick(&view) });
        if let Some(pkts) = set {
            let q = self.bottleneck_queue();
            let limit = match q.limit() {
                Limit::Bytes(_) => Limit::Bytes(pkts * pkt_bytes as u64),
                Limit::Packets(_) => Limit::Packets(pkts),
            };
            q.set_limit(limit);
        }
        self.controller_last = at_now;
        self.events.push(self.now + self.controller_interval, Event::ControllerTick);
    }

    pub(super) fn sample_tick(&mut self) {
        let dt = self.now - self.last_sample;
        let dt_s = to_secs(dt);
        let n_net = self.net.links.len();
        let mut cwnd_total = vec![0.0; n_net];
        let mut started = vec![0usize; n_net];
        let in_window = self.now > self.warm;
        for f in 0..self.n_long {
            let cwnd = self.senders[f].st().cwnd;
            if self.senders[f].st().maxseq >= 0 {
                for &l in &self.net.routes[self.flow_route[f]].links {
                    cwnd_total[l] += cwnd;
                    started[l] += 1;
                }
            }
            if in_window {
                self.cwnd_sum[f] += cwnd;
            }
        }
        let (active, in_ca) = self.flows_by_link();
        if in_window {
            self.cwnd_samples += 1;
        }
        for i in 0..n_net {
            let l = i; // topology links are the first links
            let capacity = self.links[l].queue().expect("topology links have queues").capacity_pkts(self.pkt_bytes as u32);
            let link_delivered = self.link_delivered(i);
            let s = &mut self.stats[i];
            let (q_mean, q_max) = s.queue.take_sample(self.now, dt);
            let at_now = s.counters_at(self.now);
            let c = at_now.since(&s.at_sample);
            let delivered = link_delivered - s.delivered_at_sample;
            self.ts.push(TimeseriesRow {
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
                active_flows: active[i] as i64,
                ca_flows: in_ca[i] as i64,
            });
            s.at_sample = at_now;
            s.delivered_at_sample = link_delivered;
        }
        self.last_sample = self.now;
        self.events.push(self.now + self.sample_interval, Event::SampleTick);
    }
}
