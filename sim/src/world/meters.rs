//! What a run measures as it goes: per-link statistics, edge, class and per-flow counters with
//! their values at the end of warm-up, the time series, the controllers' log and the trace.

use crate::config::SimConfig;
use crate::metrics::{LinkCounters, LinkStats};
use crate::output::{ControlRow, TimeseriesRow};
use crate::tcp::sender_core::{SenderStats, MAX_MODES};
use crate::time::{from_secs, Time};
use crate::trace::Trace;
use crate::traffic::ClassCounters;

pub(crate) struct Meters {
    /// One per topology link.
    pub stats: Vec<LinkStats>,
    /// New in-order packets delivered to the connections of each topology route.
    pub route_delivered: Vec<u64>,
    /// Arrivals and drops at every access link, and their values at the end of warm-up.
    pub edge: LinkCounters,
    pub edge_at_warm: LinkCounters,
    /// Per class (`traffic::Class`): packets sent, dropped and delivered by transfers and
    /// open-loop sources (long flows' are their senders' own), and their values at warm-up's end.
    pub class_ctr: [ClassCounters; 4],
    pub class_ctr_at_warm: [ClassCounters; 4],
    /// Per long flow: drops, and (sender stats, delivered) and drops at warm-up's end.
    pub flow_dropped: Vec<u64>,
    pub flow_at_warm: Vec<(SenderStats, u64)>,
    pub flow_dropped_at_warm: Vec<u64>,
    /// Per long flow: the sum of its sampled windows, over `cwnd_samples` samples.
    pub cwnd_sum: Vec<f64>,
    pub cwnd_samples: u64,
    /// Per long flow, in the measured window: its RTT samples (ms), and the sum, count and
    /// largest of its delivery-rate samples (packets/s).
    pub rtt_ms: Vec<Vec<f32>>,
    pub rate: Vec<(f64, u64, f64)>,
    /// Per long flow, since the last sample: the sum and count of its delivery-rate samples
    /// (packets/s), for the time series.
    pub rate_interval: Vec<(f64, u64)>,
    /// Per long flow, its mode times at warm-up's end: empty unless a law has modes (BBR).
    pub modes_at_warm: Vec<[Time; MAX_MODES]>,
    /// Each topology link's buffer when the run starts (after a static rule or a policy's start).
    pub start_buffer_pkts: Vec<f64>,
    /// Its byte limit then, for a byte-limited queue.
    pub start_buffer_bytes: Vec<Option<u64>>,
    pub sample_interval: Time,
    pub last_sample: Time,
    pub ts: Vec<TimeseriesRow>,
    pub control: Vec<ControlRow>,
    pub trace: Trace,
}

impl Meters {
    pub fn new(cfg: &SimConfig, n_long: usize) -> Self {
        Meters {
            stats: Vec::new(),
            route_delivered: Vec::new(),
            edge: LinkCounters::default(),
            edge_at_warm: LinkCounters::default(),
            class_ctr: Default::default(),
            class_ctr_at_warm: Default::default(),
            flow_dropped: vec![0; n_long],
            flow_at_warm: vec![(SenderStats::default(), 0); n_long],
            flow_dropped_at_warm: vec![0; n_long],
            cwnd_sum: vec![0.0; n_long],
            cwnd_samples: 0,
            rtt_ms: vec![Vec::new(); n_long],
            rate: vec![(0.0, 0, 0.0); n_long],
            rate_interval: vec![(0.0, 0); n_long],
            modes_at_warm: Vec::new(),
            start_buffer_pkts: Vec::new(),
            start_buffer_bytes: Vec::new(),
            sample_interval: from_secs(cfg.sample_interval_s).max(1),
            last_sample: 0,
            ts: Vec::new(),
            control: Vec::new(),
            trace: Trace::new(cfg.trace_max_events as usize, from_secs(cfg.trace_start_s.unwrap_or(cfg.warmup_s))),
        }
    }
}
