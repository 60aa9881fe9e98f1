//! The end of a run: the world's counters turned into the output tables of `output`.
//! Details: docs/engine.md, `world/finish.rs`.

use super::World;
use crate::link::Role;
use crate::metrics::{jain, quantile, ratio, utilization};
use crate::output::{FlowRow, LinkRow, RunOutput, Summary};
use crate::packet::Kind;
use crate::tcp::sender_core::MAX_MODES;
use crate::time::{to_secs, Time};

/// The mean of samples; None if there are none.
fn mean(samples: &[f32]) -> Option<f64> {
    (!samples.is_empty()).then(|| samples.iter().map(|&x| x as f64).sum::<f64>() / samples.len() as f64)
}

/// Flows whose state `flow_rows` releases at a time.
const RELEASE_FLOWS: usize = 1 << 16;

impl World<'_> {
    pub(crate) fn finish(mut self, wall_s: f64, interrupted: bool) -> RunOutput {
        let end = self.now;
        for s in &mut self.meters.stats {
            s.queue.integrate(end);
        }
        let window = end.saturating_sub(self.warm).max(1);
        let classes = self.class_rows(window); // before `flow_rows` releases the flows' state
        let flows = self.flow_rows(window);
        let links = self.link_rows(window, &flows);
        let mut summary = self.summary(window, &flows, wall_s);
        if let Some(t) = self.precision.as_mut() {
            let reason = self.stop_reason.unwrap_or(if self.cfg.precision.max_duration_s.is_some() {
                crate::precision::STOP_MAX_DURATION
            } else {
                crate::precision::STOP_DURATION
            });
            summary.set_precision(reason, &t.outcome());
        }
        RunOutput {
            summary,
            timeseries: std::mem::take(&mut self.meters.ts),
            flows,
            links,
            classes,
            control: std::mem::take(&mut self.meters.control),
            trace: self.meters.trace.columns(),
            interrupted,
        }
    }

    /// Packets of each long flow still in the network.
    fn in_flight(&self) -> Vec<u64> {
        let mut in_flight = vec![0u64; self.conns.n_long];
        for link in &self.links {
            for p in link.packets() {
                if p.kind() == Kind::Data && (p.flow as usize) < self.conns.n_long {
                    in_flight[p.flow as usize] += 1;
                }
            }
        }
        in_flight
    }

    /// The flows table, one row per long flow. Built from the last flow down, releasing each
    /// block of flows' state once its rows are made: a million flows' state and their rows held
    /// whole at once would be the run's peak (docs/performance.md, "Bytes per flow").
    fn flow_rows(&mut self, window: Time) -> Vec<FlowRow> {
        let n = self.conns.n_long;
        let in_flight = self.in_flight();
        self.events.discard_pending(); // the run is over: its pending timers go first
        self.release_flows_from(n); // the short transfers' slots
        let mut rows = Vec::with_capacity(n);
        for f in (0..n).rev() {
            rows.push(self.flow_row(f, window, in_flight[f]));
            if f % RELEASE_FLOWS == 0 {
                self.release_flows_from(f);
            }
        }
        rows.reverse();
        rows
    }

    /// Drops the state of connections `f..` that only the flows table reads, and gives back its
    /// memory.
    fn release_flows_from(&mut self, f: usize) {
        fn cut<T>(v: &mut Vec<T>, f: usize) {
            v.truncate(f);
            v.shrink_to_fit(); // a large vector's tail pages go back in place (mremap)
        }
        let (c, m) = (&mut self.conns, &mut self.meters);
        cut(&mut c.senders, f);
        cut(&mut c.receivers, f);
        cut(&mut c.conn, f);
        cut(&mut c.ack_opts, f);
        cut(&mut m.flow_at_warm, f);
        cut(&mut m.flow_dropped, f);
        cut(&mut m.flow_dropped_at_warm, f);
        cut(&mut m.cwnd_sum, f);
        cut(&mut m.rtt_ms, f);
        cut(&mut m.rate, f);
        cut(&mut m.rate_interval, f);
        cut(&mut m.modes_at_warm, f);
    }

    fn flow_row(&self, f: usize, window: Time, in_flight: u64) -> FlowRow {
        let window_s = to_secs(window);
        let pkt_bits = self.pkt_bytes as f64 * 8.0;
        let s = self.conns.senders[f].stats();
        let (warm_stats, warm_delivered) = self.meters.flow_at_warm[f];
        let route = self.conns.flow_route[f];
        let rate = self.meters.rate[f];
        let bbr = self.bbr_mode_times_s(f);
        FlowRow {
            flow_id: f as i64,
            route_id: route as i64,
            tcp_group: self.group_label(self.conns.flow_group[f]).to_string(),
            link_ids: self.net.routes[route].links.iter().map(|&l| l as i64).collect(),
            rtt_ms: self.conns.rtt_s[f] * 1000.0,
            start_s: self.conns.start_s[f],
            goodput_mbps: (self.conns.receivers[f].delivered - warm_delivered) as f64 * pkt_bits / window_s / 1e6,
            retransmits: (s.retransmits - warm_stats.retransmits) as i64,
            timeouts: (s.timeouts - warm_stats.timeouts) as i64,
            fast_retransmits: (s.fast_retransmits - warm_stats.fast_retransmits) as i64,
            ecn_reductions: (s.ecn_reductions - warm_stats.ecn_reductions) as i64,
            mean_cwnd_pkts: (self.meters.cwnd_samples > 0)
                .then(|| self.meters.cwnd_sum[f] / self.meters.cwnd_samples as f64),
            rtt_mean_ms: mean(&self.meters.rtt_ms[f]),
            rtt_p99_ms: quantile(&self.meters.rtt_ms[f], 0.99),
            delivery_rate_mean_mbps: (rate.1 > 0).then(|| rate.0 / rate.1 as f64 * pkt_bits / 1e6),
            delivery_rate_max_mbps: (rate.1 > 0).then(|| rate.2 * pkt_bits / 1e6),
            bbr_startup_s: bbr.map(|t| t[0]),
            bbr_drain_s: bbr.map(|t| t[1]),
            bbr_probe_bw_s: bbr.map(|t| t[2]),
            bbr_probe_rtt_s: bbr.map(|t| t[3]),
            sent_pkts: s.sent as i64,
            delivered_pkts: self.conns.receivers[f].arrivals as i64,
            dropped_pkts: self.meters.flow_dropped[f] as i64,
            loss_rate: {
                let sent = s.sent - warm_stats.sent;
                (sent > 0)
                    .then(|| (self.meters.flow_dropped[f] - self.meters.flow_dropped_at_warm[f]) as f64 / sent as f64)
            },
            in_flight_pkts: in_flight as i64,
        }
    }

    /// Seconds a BBR flow spent in each of its modes in the measured window; None for other laws.
    fn bbr_mode_times_s(&self, f: usize) -> Option<[f64; MAX_MODES]> {
        let group = &self.conns.groups[self.conns.flow_group[f]].tcp;
        (group.0.variant == crate::tcp::bbr::ENTRY.def.name).then(|| {
            let now = self.conns.senders[f].mode_times(self.now);
            let warm = self.meters.modes_at_warm.get(f).copied().unwrap_or_default();
            std::array::from_fn(|m| to_secs(now[m] - warm[m]))
        })
    }

    /// The TCP groups of the long flows crossing each link, and each group's share of their goodput.
    fn group_shares(&self, flows: &[FlowRow]) -> Vec<(Vec<String>, Vec<f64>)> {
        let mut out = vec![(Vec::<String>::new(), Vec::<f64>::new()); self.net.links.len()];
        for row in flows {
            for &l in &row.link_ids {
                let (groups, goodput) = &mut out[l as usize];
                match groups.iter().position(|g| *g == row.tcp_group) {
                    Some(k) => goodput[k] += row.goodput_mbps,
                    None => {
                        groups.push(row.tcp_group.clone());
                        goodput.push(row.goodput_mbps);
                    }
                }
            }
        }
        for (_, goodput) in &mut out {
            let total: f64 = goodput.iter().sum();
            goodput.iter_mut().for_each(|g| *g = if total > 0.0 { *g / total } else { 0.0 });
        }
        out
    }

    fn link_rows(&self, window: Time, flow_rows: &[FlowRow]) -> Vec<LinkRow> {
        let mut shares = self.group_shares(flow_rows);
        let window_s = to_secs(window);
        let pkt_bits = self.pkt_bytes as f64 * 8.0;
        let mut flows = vec![0i64; self.net.links.len()];
        for &r in &self.conns.flow_route {
            for &l in &self.net.routes[r].links {
                flows[l] += 1;
            }
        }
        self.net
            .links
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let s = &self.meters.stats[i];
                let l = self.links.iter().position(|k| k.role == Role::Net(i as u32)).expect("topology link");
                let c = s.counters_at(self.now).since(&s.at_warm);
                LinkRow {
                    link_id: i as i64,
                    name: spec.name.clone(),
                    rate_mbps: spec.rate_bps / 1e6,
                    delay_ms: to_secs(spec.delay) * 1e3,
                    buffer_pkts: self.meters.start_buffer_pkts[i],
                    buffer_policy: spec.policy.0 .0.label.to_string(),
                    queue: spec.queue.0 .0.label.to_string(),
                    flows: flows[i],
                    utilization: utilization(&c, window),
                    loss_rate: ratio(c.drops, c.arrivals),
                    goodput_mbps: (self.link_delivered(i) - s.delivered_at_warm) as f64 * pkt_bits / window_s / 1e6,
                    mean_queue_pkts: s.queue.window_mean(window),
                    p99_queue_pkts: s.queue.window_quantile(0.99),
                    mean_queue_delay_ms: s.delay_ns.mean() / 1e6,
                    p50_queue_delay_ms: s.delay_ns.value_at_quantile(0.5) as f64 / 1e6,
                    p99_queue_delay_ms: s.delay_ns.value_at_quantile(0.99) as f64 / 1e6,
                    arrivals: c.arrivals as i64,
                    drops: c.drops as i64,
                    early_drops: c.early_drops as i64,
                    marks: c.marks as i64,
                    mark_rate: ratio(c.marks, c.arrivals),
                    departures: c.tx_pkts as i64,
                    arrivals_total: s.ctr.arrivals as i64,
                    drops_total: s.ctr.drops as i64,
                    departures_total: s.ctr.tx_pkts as i64,
                    held_at_end: self.links[l].held() as i64,
                    tcp_groups: std::mem::take(&mut shares[i].0),
                    group_shares: std::mem::take(&mut shares[i].1),
                }
            })
            .collect()
    }

    fn summary(&self, window: Time, flows: &[FlowRow], wall_s: f64) -> Summary {
        let cfg = self.cfg;
        let window_s = to_secs(window);
        let pkt_bits = self.pkt_bytes as f64 * 8.0;
        let b = self.net.bottleneck;
        let s = &self.meters.stats[b];
        let c = s.counters_at(self.now).since(&s.at_warm);
        let rate_bps = self.net.links[b].rate_bps;
        let utilization = utilization(&c, window);
        let goodputs: Vec<f64> = flows.iter().map(|r| r.goodput_mbps).collect();
        let crosses = |route: usize| self.net.routes[route].links.contains(&b);
        // Everything but the long flows offers a fixed rate.
        let flat_mbps =
            if crosses(self.net.default_route) { cfg.poisson_mbps + cfg.cbr_mbps + cfg.short_mbps } else { 0.0 };
        let other_mbps = flat_mbps + self.traffic_rates_mbps(&crosses);
        let tcp_peak_bps: f64 = self
            .conns
            .rtt_s
            .iter()
            .zip(&self.conns.flow_route)
            .filter(|(_, &r)| crosses(r))
            .map(|(r, _)| cfg.wmax_pkts as f64 * pkt_bits / r)
            .sum();
        let offered_load = (tcp_peak_bps + other_mbps * 1e6) / rate_bps;
        let edge = self.meters.edge.since(&self.meters.edge_at_warm);
        let n = self.conns.n_long;
        let cwnds: Vec<f64> = flows.iter().filter_map(|r| r.mean_cwnd_pkts).collect();
        let all = self.traffic.transfers.as_ref().map(|t| &t.all);
        let short_fct = all.map_or((None, None), |a| (a.mean_ms(), a.quantile_ms(0.99)));
        let sum = |f: fn(&FlowRow) -> i64| flows.iter().map(f).sum::<i64>();
        let events = self.events.executed;
        Summary {
            utilization,
            goodput_mbps: goodputs.iter().sum::<f64>() + 0.0, // + 0.0: no -0.0 without flows
            offered_load,
            effective_utilization: utilization / offered_load.min(1.0),
            loss_rate: ratio(c.drops, c.arrivals),
            access_loss_rate: ratio(edge.drops, edge.arrivals),
            mean_queue_pkts: s.queue.window_mean(window),
            p99_queue_pkts: s.queue.window_quantile(0.99),
            mean_queue_delay_ms: s.delay_ns.mean() / 1e6,
            p50_queue_delay_ms: s.delay_ns.value_at_quantile(0.5) as f64 / 1e6,
            p99_queue_delay_ms: s.delay_ns.value_at_quantile(0.99) as f64 / 1e6,
            jain_fairness: jain(&goodputs),
            timeouts: sum(|r| r.timeouts),
            fast_retransmits: sum(|r| r.fast_retransmits),
            retransmits: sum(|r| r.retransmits),
            mean_cwnd_pkts: (!cwnds.is_empty()).then(|| cwnds.iter().sum::<f64>() / cwnds.len() as f64),
            mean_rtt_ms: (n > 0).then(|| self.conns.rtt_s.iter().sum::<f64>() / n as f64 * 1000.0),
            short_flows: all.map_or(0, |a| a.started as i64),
            short_flows_done: all.map_or(0, |a| a.done as i64),
            short_afct_ms: short_fct.0,
            short_p99_fct_ms: short_fct.1,
            bottleneck_link: b as i64,
            buffer_pkts: self.meters.start_buffer_pkts[b],
            buffer_bytes: self.meters.start_buffer_bytes[b].map(|x| x as i64),
            bottleneck_arrivals: c.arrivals as i64,
            bottleneck_drops: c.drops as i64,
            bottleneck_early_drops: c.early_drops as i64,
            bottleneck_marks: c.marks as i64,
            mark_rate: ratio(c.marks, c.arrivals),
            bottleneck_pkts: c.tx_pkts as i64,
            measured_s: window_s,
            events: events as i64,
            wall_s,
            events_per_s: events as f64 / wall_s.max(1e-9),
            pkts_per_s: s.ctr.tx_pkts as f64 / wall_s.max(1e-9),
            stop_reason: None,
            precision_warmup_s: None,
            utilization_halfwidth: None,
            utilization_batches: None,
            loss_rate_halfwidth: None,
            loss_rate_batches: None,
            goodput_mbps_halfwidth: None,
            goodput_mbps_batches: None,
            mean_queue_pkts_halfwidth: None,
            mean_queue_pkts_batches: None,
            mean_queue_delay_ms_halfwidth: None,
            mean_queue_delay_ms_batches: None,
            emulation_lateness_p50_us: None,
            emulation_lateness_p99_us: None,
            emulation_lateness_max_us: None,
            emulation_rate_ratio: None,
            timing_suspect: None,
        }
    }
}
