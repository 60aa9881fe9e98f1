//! The output tables of a run, declared once: each column's name, type, unit and meaning.
//! Details: docs/engine.md, `output.rs`.

/// A column of values, as handed to Python.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    OptF64(Vec<Option<f64>>),
    I64(Vec<i64>),
    OptI64(Vec<Option<i64>>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    OptStr(Vec<Option<String>>),
    ListI64(Vec<Vec<i64>>),
    ListF64(Vec<Vec<f64>>),
    ListStr(Vec<Vec<String>>),
    /// A small set of names (Arrow dictionary-encoded).
    Label(Vec<&'static str>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::OptI64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::OptStr(v) => v.len(),
            Column::ListI64(v) => v.len(),
            Column::ListF64(v) => v.len(),
            Column::ListStr(v) => v.len(),
            Column::Label(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A Rust type a column can have; `TYPE` is the name Python maps to an Arrow type.
pub trait Cell: Clone {
    const TYPE: &'static str;
    fn column(values: Vec<Self>) -> Column;
}

impl Cell for f64 {
    const TYPE: &'static str = "float64";
    fn column(v: Vec<Self>) -> Column {
        Column::F64(v)
    }
}

impl Cell for Option<f64> {
    const TYPE: &'static str = "float64?";
    fn column(v: Vec<Self>) -> Column {
        Column::OptF64(v)
    }
}

impl Cell for i64 {
    const TYPE: &'static str = "int64";
    fn column(v: Vec<Self>) -> Column {
        Column::I64(v)
    }
}

impl Cell for Option<i64> {
    const TYPE: &'static str = "int64?";
    fn column(v: Vec<Self>) -> Column {
        Column::OptI64(v)
    }
}

impl Cell for bool {
    const TYPE: &'static str = "bool";
    fn column(v: Vec<Self>) -> Column {
        Column::Bool(v)
    }
}

impl Cell for String {
    const TYPE: &'static str = "string";
    fn column(v: Vec<Self>) -> Column {
        Column::Str(v)
    }
}

impl Cell for Option<String> {
    const TYPE: &'static str = "string?";
    fn column(v: Vec<Self>) -> Column {
        Column::OptStr(v)
    }
}

impl Cell for Vec<i64> {
    const TYPE: &'static str = "list<int64>";
    fn column(v: Vec<Self>) -> Column {
        Column::ListI64(v)
    }
}

impl Cell for Vec<f64> {
    const TYPE: &'static str = "list<float64>";
    fn column(v: Vec<Self>) -> Column {
        Column::ListF64(v)
    }
}

impl Cell for Vec<String> {
    const TYPE: &'static str = "list<string>";
    fn column(v: Vec<Self>) -> Column {
        Column::ListStr(v)
    }
}

impl Cell for &'static str {
    const TYPE: &'static str = "label";
    fn column(v: Vec<Self>) -> Column {
        Column::Label(v)
    }
}

/// One declared column.
#[derive(Clone, Debug)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub ty: &'static str,
    pub unit: &'static str,
    pub doc: String,
}

/// Declares an output table: a row struct, its column specs, and its conversion to columns. Each
/// field reads `/// meaning` `name: Type, unit "u";`.
#[macro_export]
macro_rules! table {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $name:ident as $table:literal {
            $( $(#[doc = $doc:literal])* $field:ident : $ty:ty, unit $unit:literal; )*
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl $name {
            pub const TABLE: &'static str = $table;

            pub fn specs() -> Vec<$crate::output::ColumnSpec> {
                vec![$(
                    $crate::output::ColumnSpec {
                        name: stringify!($field),
                        ty: <$ty as $crate::output::Cell>::TYPE,
                        unit: $unit,
                        doc: $crate::params::doc_text(&[$($doc),*]),
                    },
                )*]
            }

            pub fn columns(rows: &[Self]) -> Vec<(&'static str, $crate::output::Column)> {
                vec![$(
                    (stringify!($field),
                     <$ty as $crate::output::Cell>::column(rows.iter().map(|r| r.$field.clone()).collect())),
                )*]
            }
        }
    };
}

crate::table! {
    /// One row per run: the run's figures over the measured window [warmup_s, duration_s]. Link
    /// figures are the bottleneck's (`bottleneck_link`; every link is in `links`); per-flow
    /// figures are the long flows'.
    pub struct Summary as "summary" {
        /// Time the bottleneck spent transmitting / measured time (a transmission straddling the
        /// end of warm-up counts for its part inside).
        utilization: f64, unit "1";
        /// New in-order data delivered to the long flows' receivers, as an application reads it:
        /// data held out of order at warm-up's end counts when delivered, so a short window's
        /// goodput can exceed the link (docs/engine.md, `world/finish.rs`); utilization cannot.
        goodput_mbps: f64, unit "Mb/s";
        /// (Sum over long flows crossing the bottleneck of wmax / RTT, plus the short-flow,
        /// open-loop, pareto and udp rates crossing it; not http) / the bottleneck's capacity.
        offered_load: f64, unit "1";
        /// utilization / min(1, offered_load).
        effective_utilization: f64, unit "1";
        /// Bottleneck drops / bottleneck arrivals.
        loss_rate: f64, unit "1";
        /// Access-link drops / access-link arrivals (0 without access links).
        access_loss_rate: f64, unit "1";
        /// Time-weighted mean of the packets waiting at the bottleneck (not the one in service).
        mean_queue_pkts: f64, unit "pkts";
        /// 99th percentile (over time) of the packets waiting at the bottleneck.
        p99_queue_pkts: f64, unit "pkts";
        /// Mean time packets waited at the bottleneck before their transmission started (the
        /// dequeue sojourn time).
        mean_queue_delay_ms: f64, unit "ms";
        /// Median of that waiting time.
        p50_queue_delay_ms: f64, unit "ms";
        /// 99th percentile of that waiting time.
        p99_queue_delay_ms: f64, unit "ms";
        /// Jain's index over the long flows' goodputs; NULL without long flows or goodput.
        jain_fairness: Option<f64>, unit "1";
        /// Retransmission timeouts of the long flows.
        timeouts: i64, unit "count";
        /// Fast retransmits of the long flows.
        fast_retransmits: i64, unit "count";
        /// Retransmitted packets of the long flows.
        retransmits: i64, unit "pkts";
        /// Mean over long flows of their time-averaged congestion window; NULL without samples.
        mean_cwnd_pkts: Option<f64>, unit "pkts";
        /// Mean two-way propagation delay of the long flows; NULL without long flows.
        mean_rtt_ms: Option<f64>, unit "ms";
        /// Short flows that started in the measured window.
        short_flows: i64, unit "count";
        /// Those of them that completed before the end of the run.
        short_flows_done: i64, unit "count";
        /// Their mean completion time (first packet sent to last packet received); NULL if none.
        short_afct_ms: Option<f64>, unit "ms";
        /// Their 99th-percentile completion time; NULL if none.
        short_p99_fct_ms: Option<f64>, unit "ms";
        /// The link the bottleneck figures describe (a link_id of the links table).
        bottleneck_link: i64, unit "";
        /// The buffer the bottleneck ran with, in packets (a byte limit divided by pkt_bytes): the
        /// configured one, the link's own, or what a buffer policy set (at the start, for an adaptive
        /// one). The config's value is `config_buffer_pkts`.
        buffer_pkts: f64, unit "pkts";
        /// The bottleneck's byte limit as it ran (NULL when it counts packets). The config's value
        /// is `config_buffer_bytes`.
        buffer_bytes: Option<i64>, unit "bytes";
        /// Packets offered to the bottleneck.
        bottleneck_arrivals: i64, unit "pkts";
        /// Packets the bottleneck dropped.
        bottleneck_drops: i64, unit "pkts";
        /// Of those, dropped by its discipline's choice (the rest met the hard limit).
        bottleneck_early_drops: i64, unit "pkts";
        /// Packets the bottleneck marked CE.
        bottleneck_marks: i64, unit "pkts";
        /// Bottleneck marks / bottleneck arrivals.
        mark_rate: f64, unit "1";
        /// Packets the bottleneck transmitted.
        bottleneck_pkts: i64, unit "pkts";
        /// Length of the measured window.
        measured_s: f64, unit "s";
        /// Events the engine executed (whole run).
        events: i64, unit "count";
        /// Wall-clock time of the simulation.
        wall_s: f64, unit "s";
        /// Events per wall-clock second.
        events_per_s: f64, unit "1/s";
        /// Bottleneck packets per wall-clock second (whole run).
        pkts_per_s: f64, unit "1/s";
        /// Why the run ended with precision on: precision (every interval met its target),
        /// decided (the first one lay wholly above or below precision.decide_at), max_duration
        /// (precision.max_duration_s) or duration (duration_s); NULL without precision.
        stop_reason: Option<String>, unit "";
        /// The warm-up cut from the sampled series before the intervals (MSER-5's, or
        /// precision.warmup); the metrics named in precision.metrics are the mean of their series
        /// after it (docs/precision.md). NULL without precision.
        precision_warmup_s: Option<f64>, unit "s";
        /// Half-width of utilization's confidence interval (precision.confidence); NULL unless named in
        /// precision.metrics, or while its batches were too few or too correlated.
        utilization_halfwidth: Option<f64>, unit "1";
        /// The batch means behind that interval.
        utilization_batches: Option<i64>, unit "count";
        /// Half-width of loss_rate's confidence interval (precision.confidence); NULL unless named in
        /// precision.metrics, or while its batches were too few or too correlated.
        loss_rate_halfwidth: Option<f64>, unit "1";
        /// The batch means behind that interval.
        loss_rate_batches: Option<i64>, unit "count";
        /// Half-width of goodput_mbps's confidence interval (precision.confidence); NULL unless named in
        /// precision.metrics, or while its batches were too few or too correlated.
        goodput_mbps_halfwidth: Option<f64>, unit "Mb/s";
        /// The batch means behind that interval.
        goodput_mbps_batches: Option<i64>, unit "count";
        /// Half-width of mean_queue_pkts's confidence interval (precision.confidence); NULL unless named in
        /// precision.metrics, or while its batches were too few or too correlated.
        mean_queue_pkts_halfwidth: Option<f64>, unit "pkts";
        /// The batch means behind that interval.
        mean_queue_pkts_batches: Option<i64>, unit "count";
        /// Half-width of mean_queue_delay_ms's confidence interval (precision.confidence); NULL unless named in
        /// precision.metrics, or while its batches were too few or too correlated.
        mean_queue_delay_ms_halfwidth: Option<f64>, unit "ms";
        /// The batch means behind that interval.
        mean_queue_delay_ms_batches: Option<i64>, unit "count";
        /// A real-time testbed's own error (the kernel backend; NULL for a simulator): the median
        /// lateness of its delay line's releases past their due time.
        emulation_lateness_p50_us: Option<f64>, unit "us";
        /// The 99th percentile of that lateness.
        emulation_lateness_p99_us: Option<f64>, unit "us";
        /// Its largest.
        emulation_lateness_max_us: Option<f64>, unit "us";
        /// The rate the testbed's bottleneck gave while it had a backlog, over the configured one.
        emulation_rate_ratio: Option<f64>, unit "1";
        /// Why the testbed's timing is suspect (lateness p99 over a tenth of a bottleneck packet's
        /// time, or the rate off by more than 1%); NULL when it is not, or for a simulator.
        timing_suspect: Option<String>, unit "";
    }
}

crate::table! {
    /// One row per sample interval and link of the topology.
    pub struct TimeseriesRow as "timeseries" {
        /// End of the sample interval.
        time_s: f64, unit "s";
        /// The link (a link_id of the links table).
        link_id: i64, unit "";
        /// Time the link spent transmitting in the interval / the interval.
        utilization: f64, unit "1";
        /// New in-order data delivered to the receivers of the flows crossing the link.
        goodput_mbps: f64, unit "Mb/s";
        /// Packets offered to the link.
        arrivals: i64, unit "pkts";
        /// Packets the link dropped.
        drops: i64, unit "pkts";
        /// Time-weighted mean of the packets waiting.
        queue_mean_pkts: f64, unit "pkts";
        /// Most packets waiting at any time in the interval.
        queue_max_pkts: i64, unit "pkts";
        /// The link's buffer at the end of the interval.
        buffer_pkts: f64, unit "pkts";
        /// Mean congestion window of the started long flows crossing the link; NULL if none.
        mean_cwnd_pkts: Option<f64>, unit "pkts";
        /// Mean of the delivery-rate samples (Linux's `tcp_rate.c`, not app-limited) that the long
        /// flows crossing the link took in the interval; NULL if none took one (a law that runs
        /// the estimator takes them: bbr).
        delivery_rate_mbps: Option<f64>, unit "Mb/s";
        /// TCP flows crossing the link at the sample: long flows that started and are not paused
        /// (or still have data in flight), and transfers in progress.
        active_flows: i64, unit "count";
        /// Those of them in congestion avoidance (cwnd >= ssthresh, not recovering a loss): the
        /// "n" of ABS and of Appenzeller et al.
        ca_flows: i64, unit "count";
        /// Packets marked CE in the interval.
        marks: i64, unit "pkts";
        /// RED's average queue at the sample; NULL for other disciplines.
        red_avg: Option<f64>, unit "pkts";
        /// CoDel's next drop time while it is dropping; NULL otherwise.
        codel_drop_next_s: Option<f64>, unit "s";
        /// CoDel's drop count (the control law's count); NULL for other disciplines.
        codel_count: Option<i64>, unit "count";
        /// PIE's drop probability; NULL for other disciplines.
        pie_prob: Option<f64>, unit "1";
    }
}

crate::table! {
    /// One row per long flow.
    pub struct FlowRow as "flows" {
        /// The flow (long flows are numbered route by route).
        flow_id: i64, unit "";
        /// The route's index in the topology.
        route_id: i64, unit "";
        /// The flow's TCP: its tcp_mix group, or the tcp preset or window law of every flow.
        tcp_group: String, unit "";
        /// The topology links the flow crosses, in order.
        link_ids: Vec<i64>, unit "";
        /// Two-way propagation delay.
        rtt_ms: f64, unit "ms";
        /// Start time.
        start_s: f64, unit "s";
        /// New in-order data delivered over the measured window.
        goodput_mbps: f64, unit "Mb/s";
        /// Retransmitted packets in the measured window.
        retransmits: i64, unit "pkts";
        /// Retransmission timeouts in the measured window.
        timeouts: i64, unit "count";
        /// Fast retransmits in the measured window.
        fast_retransmits: i64, unit "count";
        /// Window reductions for an ECN echo (ECE), in the measured window.
        ecn_reductions: i64, unit "count";
        /// Time-averaged congestion window over the measured window; NULL without samples.
        mean_cwnd_pkts: Option<f64>, unit "pkts";
        /// Mean of the flow's RTT samples in the measured window (one a round trip: the timed
        /// packet's send to its ACK, exact, queueing included); NULL without samples.
        rtt_mean_ms: Option<f64>, unit "ms";
        /// 99th percentile of those samples.
        rtt_p99_ms: Option<f64>, unit "ms";
        /// Mean of the delivery-rate samples in the measured window (not app-limited), for laws
        /// that take them (BBR); NULL otherwise.
        delivery_rate_mean_mbps: Option<f64>, unit "Mb/s";
        /// The largest of them.
        delivery_rate_max_mbps: Option<f64>, unit "Mb/s";
        /// Time a BBR flow spent in STARTUP in the measured window; NULL for other laws.
        bbr_startup_s: Option<f64>, unit "s";
        /// ... in DRAIN.
        bbr_drain_s: Option<f64>, unit "s";
        /// ... in PROBE_BW.
        bbr_probe_bw_s: Option<f64>, unit "s";
        /// ... in PROBE_RTT.
        bbr_probe_rtt_s: Option<f64>, unit "s";
        /// Packets sent, whole run (sent = delivered + dropped + in flight).
        sent_pkts: i64, unit "pkts";
        /// Packets that reached the receiver, duplicates included, whole run.
        delivered_pkts: i64, unit "pkts";
        /// Packets dropped on any link, whole run.
        dropped_pkts: i64, unit "pkts";
        /// Packets of the flow dropped on any link over packets it sent, in the measured window.
        loss_rate: Option<f64>, unit "fraction";
        /// Packets still in the network at the end.
        in_flight_pkts: i64, unit "pkts";
    }
}

crate::table! {
    /// One row per link of the topology (not the per-flow access links and return paths).
    pub struct LinkRow as "links" {
        /// The link's index in the topology (`topology.links.N`).
        link_id: i64, unit "";
        /// The link's name in its topology.
        name: String, unit "";
        /// Capacity.
        rate_mbps: f64, unit "Mb/s";
        /// Propagation delay.
        delay_ms: f64, unit "ms";
        /// Buffer at the start of the run, in packets (a byte limit divided by pkt_bytes): the
        /// configured one, or what a static buffer policy resolved it to.
        buffer_pkts: f64, unit "pkts";
        /// What set the buffer: fixed, or the buffer policy's name (the link's own or the flat one).
        buffer_policy: String, unit "";
        /// Its queue discipline (the link's own or the flat `queue`).
        queue: String, unit "";
        /// Long flows crossing the link.
        flows: i64, unit "count";
        /// Time spent transmitting / measured time.
        utilization: f64, unit "1";
        /// Drops / arrivals in the measured window.
        loss_rate: f64, unit "1";
        /// New in-order data delivered to the flows crossing the link.
        goodput_mbps: f64, unit "Mb/s";
        /// Time-weighted mean of the packets waiting.
        mean_queue_pkts: f64, unit "pkts";
        /// 99th percentile (over time) of the packets waiting.
        p99_queue_pkts: f64, unit "pkts";
        /// Mean time packets waited before their transmission started (the dequeue sojourn time).
        mean_queue_delay_ms: f64, unit "ms";
        /// Median of that waiting time.
        p50_queue_delay_ms: f64, unit "ms";
        /// 99th percentile of that waiting time.
        p99_queue_delay_ms: f64, unit "ms";
        /// Packets offered in the measured window.
        arrivals: i64, unit "pkts";
        /// Packets dropped in the measured window.
        drops: i64, unit "pkts";
        /// Of those, dropped by the discipline's choice (RED, CoDel, ...); the rest met the hard limit.
        early_drops: i64, unit "pkts";
        /// Packets marked CE in the measured window.
        marks: i64, unit "pkts";
        /// Marks / arrivals.
        mark_rate: f64, unit "1";
        /// Packets transmitted in the measured window.
        departures: i64, unit "pkts";
        /// Packets offered, whole run (= departures_total + drops_total + held_at_end).
        arrivals_total: i64, unit "pkts";
        /// Packets dropped, whole run.
        drops_total: i64, unit "pkts";
        /// Packets transmitted, whole run.
        departures_total: i64, unit "pkts";
        /// Packets waiting or in service at the end.
        held_at_end: i64, unit "pkts";
        /// The TCP groups (tcp_group of the flows table) of the long flows crossing the link.
        tcp_groups: Vec<String>, unit "";
        /// Each one's share of those flows' goodput in the measured window, in tcp_groups order
        /// (0 without goodput).
        group_shares: Vec<f64>, unit "1";
    }
}

crate::table! {
    /// One row per traffic class present in the run (bulk: long flows; pareto: Poisson transfers,
    /// the flat short flows included; http: web objects; udp: open-loop streams), over the
    /// measured window.
    pub struct ClassRow as "classes" {
        /// bulk | http | pareto | udp.
        class: &'static str, unit "";
        /// Long flows or UDP streams of the class; for pareto and http, the transfers that
        /// started in the measured window.
        flows: i64, unit "count";
        /// Offered load: for pareto and http the sizes of the transfers started in the window,
        /// for bulk and udp the data sent (retransmissions included), over the window's length.
        offered_mbps: f64, unit "Mb/s";
        /// New in-order data delivered to the class's receivers (udp: packets that arrived).
        goodput_mbps: f64, unit "Mb/s";
        /// The class's packets dropped on any link / its packets sent; NULL if none sent.
        loss_rate: Option<f64>, unit "fraction";
        /// Mean size of the transfers that started in the window; NULL if none.
        size_mean_pkts: Option<f64>, unit "pkts";
        /// Their median size (within 0.1%: a log-bucketed histogram).
        size_p50_pkts: Option<f64>, unit "pkts";
        /// Their 99th-percentile size.
        size_p99_pkts: Option<f64>, unit "pkts";
        /// Web pages that started in the window (http; NULL otherwise).
        pages: Option<i64>, unit "count";
        /// Transfers that started in the window and completed before the end of the run.
        transfers_done: i64, unit "count";
        /// Their mean completion time (first packet sent to last packet received); NULL if none.
        fct_mean_ms: Option<f64>, unit "ms";
        /// Their median completion time.
        fct_p50_ms: Option<f64>, unit "ms";
        /// Their 99th-percentile completion time.
        fct_p99_ms: Option<f64>, unit "ms";
        /// Mean completion time of those under 10 KB.
        fct_mean_ms_under_10kb: Option<f64>, unit "ms";
        /// Mean completion time of those of 10 KB to 100 KB.
        fct_mean_ms_10kb_to_100kb: Option<f64>, unit "ms";
        /// Mean completion time of those of 100 KB to 1 MB.
        fct_mean_ms_100kb_to_1mb: Option<f64>, unit "ms";
        /// Mean completion time of those over 1 MB.
        fct_mean_ms_over_1mb: Option<f64>, unit "ms";
    }
}

crate::table! {
    /// One row per call of an adaptive buffer policy (every interval_ms) and link: what the
    /// controller measured and its state after the call. Controller terms it does not have are NULL.
    pub struct ControlRow as "control" {
        /// End of the control interval.
        time_s: f64, unit "s";
        /// The link (a link_id of the links table).
        link_id: i64, unit "";
        /// The link's buffer after the call (b(n) rounded, at least 1 packet).
        buffer_pkts: f64, unit "pkts";
        /// b(n): the buffer the controller computed, before rounding.
        b_pkts: Option<f64>, unit "pkts";
        /// b_u(n): ABS's utilization sub-controller.
        b_u_pkts: Option<f64>, unit "pkts";
        /// b_p(n): ABS's loss sub-controller.
        b_p_pkts: Option<f64>, unit "pkts";
        /// I_u(n): ABS's utilization gain (trained by eq. 15).
        gain_util: Option<f64>, unit "pkts/s";
        /// I_p(n): ABS's loss gain (trained by eq. 16).
        gain_loss: Option<f64>, unit "pkts/s";
        /// u(n) as the controller measured it (its util_measure).
        u: Option<f64>, unit "1";
        /// p(n) as the controller measured it.
        p: Option<f64>, unit "1";
        /// Bits that arrived (enqueued or dropped) / (capacity x interval): ABS's input u(n).
        input_utilization: f64, unit "1";
        /// Time the link spent transmitting / the interval.
        utilization: f64, unit "1";
        /// Packets dropped / packets arrived in the interval (0 if none arrived).
        loss_rate: f64, unit "1";
    }
}

crate::table! {
    /// The optional bounded event trace of the topology's links (trace_max_events > 0).
    pub struct TraceRow as "trace" {
        /// When.
        time_s: f64, unit "s";
        /// enqueue | drop | dequeue (dequeue = transmission starts).
        event: &'static str, unit "";
        /// The packet is open-loop traffic (else a TCP data packet).
        open_loop: bool, unit "";
        /// Its flow (or open-loop source).
        flow: i64, unit "";
        /// Its sequence number.
        seq: i64, unit "pkts";
        /// Packets waiting at the link after the event.
        queue_pkts: i64, unit "pkts";
        /// The link.
        link_id: i64, unit "";
    }
}

/// Every table's name and columns, in output order.
pub fn tables() -> Vec<(&'static str, Vec<ColumnSpec>)> {
    vec![
        (Summary::TABLE, Summary::specs()),
        (TimeseriesRow::TABLE, TimeseriesRow::specs()),
        (FlowRow::TABLE, FlowRow::specs()),
        (LinkRow::TABLE, LinkRow::specs()),
        (ClassRow::TABLE, ClassRow::specs()),
        (ControlRow::TABLE, ControlRow::specs()),
        (TraceRow::TABLE, TraceRow::specs()),
    ]
}

/// What a run returns: the tables, as rows or (the trace) columns.
pub struct RunOutput {
    pub summary: Summary,
    pub timeseries: Vec<TimeseriesRow>,
    pub flows: Vec<FlowRow>,
    pub links: Vec<LinkRow>,
    pub classes: Vec<ClassRow>,
    pub control: Vec<ControlRow>,
    pub trace: Vec<(&'static str, Column)>,
    pub interrupted: bool,
}

impl Summary {
    /// A run stopped on precision: why, the warm-up found, and each named metric's series mean
    /// (in place of its whole-window value) with its interval.
    pub fn set_precision(&mut self, reason: &str, o: &crate::precision::Outcome) {
        self.stop_reason = Some(reason.to_string());
        self.precision_warmup_s = Some(o.warmup_s);
        let slots: [(&mut f64, &mut Option<f64>, &mut Option<i64>); 5] = [
            (&mut self.utilization, &mut self.utilization_halfwidth, &mut self.utilization_batches),
            (&mut self.loss_rate, &mut self.loss_rate_halfwidth, &mut self.loss_rate_batches),
            (&mut self.goodput_mbps, &mut self.goodput_mbps_halfwidth, &mut self.goodput_mbps_batches),
            (&mut self.mean_queue_pkts, &mut self.mean_queue_pkts_halfwidth, &mut self.mean_queue_pkts_batches),
            (
                &mut self.mean_queue_delay_ms,
                &mut self.mean_queue_delay_ms_halfwidth,
                &mut self.mean_queue_delay_ms_batches,
            ),
        ];
        for (m, (value, hw, batches)) in slots.into_iter().enumerate() {
            if let Some(mean) = o.means[m] {
                *value = mean;
            }
            if let Some(ci) = o.intervals[m] {
                (*hw, *batches) = (Some(ci.halfwidth), Some(ci.batches as i64));
            }
        }
    }
}
