//! TCP: the congestion state and three registries, the window law (`cc`), the loss recovery and
//! the release, as ns-3 splits `TcpCongestionOps` from `TcpRecoveryOps`.
//! Details: docs/tcp.md, `tcp/mod.rs`.

/// A registry's variant type: inline, or boxed when its line says `[boxed]`, so that a flow of a
/// small law or recovery does not pay for the larger states (bytes per flow, docs/performance.md).
macro_rules! held {
    ($t:ty) => { $t };
    ($t:ty, boxed) => { Box<$t> };
}

pub mod hystart;
pub mod linux;
pub mod minmax;
pub mod mix;
pub mod ranges;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod release;
pub mod send_clock;
pub mod sender;
pub mod sender_core;
pub mod seq_ring;
pub mod tso_defer;

use crate::params::Setting::{Bool, Num, Str};
use crate::params::{float_in, int_in, non_negative, one_of, opt, positive, PresetDef, UnionDef, Value, VariantDef};
use crate::rng::SimRng;
use crate::time::Time;

/// The last congestion action, as ns-2's `last_cwnd_action_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    None,
    /// In fast recovery (entered on the third duplicate ACK).
    DupAck,
    /// Left fast recovery.
    Exited,
    Timeout,
}

/// Congestion state, in packets.
#[derive(Clone, Debug)]
pub struct TcpState {
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Fast-recovery window inflation (ns-2 `dupwnd_`), in packets.
    pub dupwnd: i64,
    pub dupacks: u32,
    pub highest_ack: i64,
    /// Next sequence to send (rewound to `highest_ack + 1` after a timeout: go-back-N).
    pub t_seqno: i64,
    /// Highest sequence sent so far.
    pub maxseq: i64,
    /// `maxseq` when loss recovery last started: duplicate ACKs below it do not start another.
    pub recover: i64,
    pub last_action: CwndAction,
    /// The receiver's window cap.
    pub wmax: f64,
    /// ECN's CWR: the window was cut for an ECE and does not grow until an ACK passes the data
    /// then outstanding (Linux `tcp_may_raise_cwnd`, ns-3 `CA_CWR`).
    pub cwr: bool,
}

impl TcpState {
    pub fn new(init_cwnd: f64, init_ssthresh: f64, wmax: f64) -> Self {
        Self {
            cwnd: init_cwnd.min(wmax),
            ssthresh: init_ssthresh,
            dupwnd: 0,
            dupacks: 0,
            highest_ack: -1,
            t_seqno: 0,
            maxseq: -1,
            recover: -1,
            last_action: CwndAction::None,
            wmax,
            cwr: false,
        }
    }

    /// Usable window in packets: min(cwnd + dupwnd, wmax), as ns-2's Reno `window()`.
    pub fn window(&self) -> i64 {
        ((self.cwnd.floor() as i64) + self.dupwnd).min(self.wmax as i64)
    }

    /// The window a loss response starts from: min(cwnd + dupwnd, wmax) (ns-2 `slowdown`).
    pub fn loss_window(&self) -> f64 {
        (self.cwnd + self.dupwnd as f64).min(self.wmax)
    }

    /// Packets sent and not yet cumulatively acknowledged.
    pub fn outstanding(&self) -> i64 {
        self.maxseq - self.highest_ack
    }

    /// Linux's `TCP_CA_Open`: neither in fast recovery nor still recovering the window a timeout
    /// went back over.
    pub fn ca_open(&self) -> bool {
        match self.last_action {
            CwndAction::DupAck => false,
            CwndAction::Timeout => self.highest_ack >= self.recover,
            CwndAction::None | CwndAction::Exited => true,
        }
    }
}

/// What a window law learns from a new cumulative ACK.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    pub now: Time,
    /// Packets newly acknowledged by this ACK.
    pub acked_pkts: i64,
    /// The RTT sample this ACK completed (rounded to the clock tick, as the RTO estimator uses
    /// it), if it timed a segment.
    pub rtt_sample_s: Option<f64>,
}

/// What every ACK, new or duplicate, tells a window law, after the RTT estimator took its sample
/// (Linux's `pkts_acked` and `cwnd_event(CA_EVENT_FAST_ACK / SLOW_ACK)` hooks, which the
/// delay- and rate-based laws need).
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: Time,
    /// Packets newly acknowledged; 0 for a duplicate ACK.
    pub acked_pkts: i64,
    /// The sender's smoothed RTT, this ACK's sample included.
    pub srtt_s: Option<f64>,
    /// The ACK carried SACK blocks.
    pub sacked: bool,
    /// The sender was in Linux's Open state when the ACK arrived (`TcpState::ca_open`).
    pub open: bool,
    /// The timestamps it echoes, for laws that ask for them (`WindowLaw::wants_timestamps`).
    pub echo: Option<Echo>,
    /// The ACK carried ECE (Linux's FLAG_ECE, whose ACKed packets count in `delivered_ce`).
    pub ece: bool,
}

/// An ACK's timestamps (RFC 7323), in the one clock of the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Echo {
    /// When the sender sent the data packet whose timestamp the ACK echoes (TSecr).
    pub data_sent: Time,
    /// When the receiver sent the ACK (TSval).
    pub ack_sent: Time,
}

/// A window law (`cc`): window growth on ACKs and the response to losses.
pub trait WindowLaw: Send {
    /// Every ACK, new or duplicate, in or out of recovery, before the sender acts on it (`st`
    /// still holds the old `highest_ack`).
    fn on_ack_event(&mut self, _st: &mut TcpState, _ev: &AckEvent) {}
    /// The law reads timestamps (`AckEvent::echo`): the receiver echoes them only then.
    fn wants_timestamps(&self) -> bool {
        false
    }
    /// Linux's `min_cwnd` hook: the window the `linux` recovery sets on entering recovery, after
    /// `on_fast_retransmit` set ssthresh (ns-2's TCP-Linux applies it at once); None keeps the
    /// window `on_fast_retransmit` set (Linux: cwnd = ssthresh).
    fn min_cwnd(&self, _st: &TcpState) -> Option<f64> {
        None
    }
    /// A new cumulative ACK outside loss recovery (`st` still holds the old `highest_ack`).
    fn on_ack(&mut self, st: &mut TcpState, ack: &Ack);
    /// Three duplicate ACKs: set ssthresh and cwnd before the hole is retransmitted.
    fn on_fast_retransmit(&mut self, st: &mut TcpState, now: Time);
    /// A retransmission timeout: set ssthresh and cwnd.
    fn on_timeout(&mut self, st: &mut TcpState, now: Time);
    /// A loss under ns-3's rule (`tcp.ssthresh_from_pipe`): a fast retransmit (`timeout` None) or
    /// a timeout (`Some(repeated)`: in loss recovery already) with `flight` packets in flight
    /// (RFC 6675's pipe with SACK). Only AIMD, whose ns-3 counterpart (`TcpNewReno::GetSsThresh`)
    /// halves the flight, reads it; the others do as always (ns-3's TcpCubic halves the window).
    fn on_loss_from_flight(&mut self, st: &mut TcpState, now: Time, flight: f64, timeout: Option<bool>) {
        let _ = flight;
        match timeout {
            None => self.on_fast_retransmit(st, now),
            Some(_) => self.on_timeout(st, now),
        }
    }
    /// An ECE that starts CWR: set ssthresh and cwnd (RFC 3168: as for a loss; Linux calls the
    /// same `ssthresh` hook, which DCTCP answers with its own cut).
    fn on_ece(&mut self, st: &mut TcpState, now: Time) {
        self.on_fast_retransmit(st, now);
    }
    /// The receiver echoes each packet's CE exactly (DCTCP, RFC 8257 section 3.2) instead of
    /// RFC 3168's ECE-until-CWR.
    fn echoes_ce_exactly(&self) -> bool {
        false
    }
    /// The sender must run the delivery-rate estimator (`rate.rs`) and pass its samples to
    /// `on_rate_sample`.
    fn wants_rate_samples(&self) -> bool {
        false
    }
    /// Linux's `cong_control` hook: after every ACK's loss processing (a law that sets its
    /// window itself, BBR, does it here; recoveries then only choose what to send). `in_flight`
    /// is the recovery's count after the ACK, taken when first read.
    fn on_rate_sample(&mut self, _st: &mut TcpState, _rs: &rate::RateSample, _in_flight: &rate::InFlight) {}
    /// The next `on_rate_sample` reads `RateSample::prior_in_flight`: counted before the ACK only
    /// then (for BBR only while probing or draining in PROBE_BW).
    fn reads_prior_in_flight(&self) -> bool {
        true
    }
    /// The law's pacing rate in packets per second, which `release = paced` follows.
    fn pacing_rate_pps(&self) -> Option<f64> {
        None
    }
    /// Packets a paced skb holds, which leave back to back (`send_clock.rs`).
    fn tso_segs(&self) -> u32 {
        1
    }
    /// The law sets the window on every ACK (`on_rate_sample`), Linux's `cong_control`: loss
    /// recovery must not (no PRR), only choose what to send.
    fn sets_window(&self) -> bool {
        false
    }
    /// After `on_rate_sample`: the sender should mark its samples app-limited (BBR's PROBE_RTT).
    fn marks_app_limited(&self) -> bool {
        false
    }
    /// Once, before the flow starts: its own random stream and the packet size.
    fn init(&mut self, _rng: SimRng, _pkt_bytes: f64) {}
    /// The handshake's RTT sample (`tcp.handshake`), taken before the first packet: Linux's
    /// `tcp_init_transfer` initializes the congestion control after it.
    fn on_connected(&mut self, _st: &TcpState, _now: Time, _rtt_s: f64) {}
    /// The law's current mode, for per-mode time accounting (BBR's state), as an index into
    /// `LawEntry::modes`.
    fn mode(&self) -> Option<usize> {
        None
    }
}

/// What a new cumulative ACK meant to loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckKind {
    /// An ordinary (or recovery-ending) ACK: the sender resets its duplicate-ACK count.
    Full,
    /// A partial ACK during recovery (NewReno): retransmit the next hole, stay in recovery;
    /// `restart_timer` says whether the retransmission timer restarts.
    Partial { restart_timer: bool },
    /// A new ACK during a recovery that decides its own transmissions (SACK): the timer restarts,
    /// the recovery's `send` picks what goes next.
    InRecovery,
}

/// When a recovery's list of what an ACK newly delivered is ready (`Recovery::report_deliveries`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reports {
    /// It keeps none: the rate estimator keeps its own scoreboard.
    No,
    /// After `on_sack` (the SACK recoveries).
    OnSack,
    /// After `on_any_ack` (RACK-TLP).
    OnAck,
}

/// Loss recovery: what a new ACK does during fast recovery.
pub trait Recovery: Send {
    /// A cumulative ACK above `st.highest_ack` (`st` still holds the old value). Ends or
    /// continues recovery; an ordinary ACK goes on to the window law.
    fn on_new_ack(&mut self, st: &mut TcpState, law: &mut AnyLaw, ack: &Ack, ackno: i64) -> AckKind;

    /// How many packets the sender may release after processing an ACK: None = none now,
    /// Some(0) = as many as the window allows, Some(k) = at most k.
    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32>;

    /// Fast retransmit started loss recovery (the hole has been retransmitted).
    fn on_fast_retransmit(&mut self, _st: &mut TcpState) {}

    /// The SACK blocks of an ACK of everything up to `ackno`, new or duplicate, before the
    /// sender processes it.
    fn on_sack(&mut self, _st: &TcpState, _blocks: &[(i64, i64)], _ackno: i64) {}

    /// Whether duplicate ACKs inflate the window during recovery (Reno, NewReno), or the
    /// recovery counts what is in flight itself (SACK's pipe).
    fn inflates_window(&self) -> bool {
        true
    }

    /// After an ACK or a timeout: sends what the recovery allows and returns true, or returns
    /// false to leave sending to the release (`send_budget`).
    fn send(&mut self, _core: &mut sender_core::SenderCore, _now: Time, _out: &mut Vec<i64>) -> bool {
        false
    }

    /// A retransmission timeout, after the window law's response (`st.t_seqno` not yet rewound).
    fn on_timeout(&mut self, _st: &TcpState) {}

    /// The sender must keep each packet's send time (`SenderCore::sent_at`): RACK reads them.
    fn wants_send_times(&self) -> bool {
        false
    }

    /// Once, at the sender's construction, if the window law wants rate samples: a recovery whose
    /// SACK scoreboard works out which packets each ACK newly delivers offers them to the rate
    /// estimator, which then keeps no scoreboard of its own, and says when they are ready.
    fn report_deliveries(&mut self) -> Reports {
        Reports::No
    }

    /// If `report_deliveries`: the packets the last ACK newly delivered, as [start, end) ranges
    /// in the order `RateSampler::on_ack` finds them.
    fn delivered(&self) -> &[(i64, i64)] {
        &[]
    }

    /// Once, at the sender's construction: the window law sets the window itself on every ACK
    /// (BBR; the recovery then only chooses what to send, as Linux skips PRR for such a law), and
    /// the release paces (a recovery that sends by itself then paces too).
    fn configure(&mut self, _law_sets_window: bool, _paced: bool) {}

    /// After `on_any_ack` took an ACK whole and the window law had its rate sample: send.
    fn after_ack(&mut self, _core: &mut sender_core::SenderCore, _now: Time, _out: &mut Vec<i64>) {}

    /// The release timer fired: a recovery that paces its own sending takes it and returns true.
    fn on_send_timer(&mut self, _core: &mut sender_core::SenderCore, _now: Time, _out: &mut Vec<i64>) -> bool {
        false
    }

    /// Packets in flight as this recovery counts them (Linux `tcp_packets_in_flight`): what is
    /// outstanding, less what a scoreboard knows delivered or lost.
    fn in_flight(&self, st: &TcpState) -> i64 {
        st.outstanding()
    }

    /// The retransmission timer fired. A recovery that multiplexes its own timers onto it (RACK's
    /// reordering timer and TLP's probe timer, as Linux's `icsk_pending`) handles them and returns
    /// true; false: it is a retransmission timeout.
    fn on_timer(
        &mut self,
        _core: &mut sender_core::SenderCore,
        _law: &mut AnyLaw,
        _now: Time,
        _out: &mut Vec<i64>,
    ) -> bool {
        false
    }

    /// After a timeout the sender goes back to the first unacknowledged packet (go-back-N), or
    /// (false) keeps sending from where it was and the recovery retransmits what it marked lost.
    fn goes_back_n(&self) -> bool {
        true
    }

    /// The receiver must send SACK blocks.
    fn uses_sack(&self) -> bool {
        false
    }

    /// Marks the packets this ACK shows lost and returns how many (Linux's `tp->lost`, which
    /// `tcp_mark_skb_lost` raises before the ACK's rate sample is taken); called only by a sender
    /// that takes rate samples. 0: the recovery counts its losses into `core.lost_pkts` itself.
    fn mark_lost(&mut self, _st: &TcpState) -> u64 {
        0
    }

    /// RTT samples count the clock ticks between send and ACK (ns-2's `rtt_update` without
    /// timestamps: the number of tick boundaries crossed, 0 or 1 more than the rounded RTT) instead
    /// of the rounded RTT.
    fn counts_rtt_ticks(&self) -> bool {
        false
    }

    /// A recovery that detects losses from its own scoreboard, without counting duplicate ACKs
    /// (ns-2's TCP-Linux), takes every ACK whole, after the RTT sample and the window law's
    /// `on_ack_event`, and returns true; the others return false and the sender goes on.
    fn on_any_ack(
        &mut self,
        _core: &mut sender_core::SenderCore,
        _law: &mut AnyLaw,
        _ack: &Ack,
        _ackno: i64,
        _sack: &[(i64, i64)],
        _out: &mut Vec<i64>,
    ) -> bool {
        false
    }
}

/// How a sender releases the packets its window allows (see `sender_core::SenderCore`).
pub trait Release: Send {
    /// After an ACK, at the start, and after a timeout: release at most `budget` packets (0 =
    /// as many as allowed) or arm the release timer (`core.send_deadline`).
    fn send(&mut self, core: &mut sender_core::SenderCore, now: Time, budget: u32, out: &mut Vec<i64>);
    /// The release timer fired (its deadline has been cleared).
    fn on_timer(&mut self, core: &mut sender_core::SenderCore, now: Time, out: &mut Vec<i64>);
    /// The flow starts, or restarts after a timeout: pacing starts afresh.
    fn restart(&mut self, _now: Time) {}
    /// It spaces packets at the law's pacing rate or srtt / window (`paced`).
    fn paces(&self) -> bool {
        false
    }
}

/// Builds a window law from its validated parameters (once per run; called per connection).
pub type LawFactory = Box<dyn Fn() -> AnyLaw + Send + Sync>;

/// A registered window law: its parameters (the union variant) and its constructor.
pub struct LawEntry {
    pub def: VariantDef,
    pub factory: fn(&Value) -> LawFactory,
    /// The law reacts to ECN marks and is refused without `tcp.ecn` (DCTCP).
    pub needs_ecn: bool,
    /// The law paces its packets and is refused without `tcp.release = paced` (BBR).
    pub needs_pacing: bool,
    /// Names of the law's modes (`WindowLaw::mode`), whose time a flow accounts; empty if none.
    pub modes: &'static [&'static str],
}

// Each registry is an enum over its components, dispatched statically (no virtual call on every
// ACK; small components held inline, large ones marked `[boxed]`, see `held!`), and a table that
// names and builds them.
// The macros write the modules, the enum, its dispatch and the table from one line per component
// (enum_dispatch, which we used before, cannot: its bindings do not resolve in macro_rules output).

/// Declares the window laws: for each `module::Type`, `pub mod module;`, an `AnyLaw` variant
/// dispatching `WindowLaw` to it, and `module::ENTRY` in `LAWS`.
macro_rules! window_laws {
    ($($module:ident::$law:ident $([$boxed:ident])?),* $(,)?) => {
        $(pub mod $module;)*

        /// A window law, statically dispatched.
        pub enum AnyLaw {
            $($law(held!($module::$law $(, $boxed)?)),)*
        }

        $(impl From<$module::$law> for AnyLaw {
            fn from(law: $module::$law) -> Self {
                AnyLaw::$law(law.into())
            }
        })*

        impl WindowLaw for AnyLaw {
            #[inline]
            fn on_ack_event(&mut self, st: &mut TcpState, ev: &AckEvent) {
                match self { $(AnyLaw::$law(l) => l.on_ack_event(st, ev),)* }
            }
            #[inline]
            fn wants_timestamps(&self) -> bool {
                match self { $(AnyLaw::$law(l) => l.wants_timestamps(),)* }
            }
            #[inline]
            fn min_cwnd(&self, st: &TcpState) -> Option<f64> {
                match self { $(AnyLaw::$law(l) => l.min_cwnd(st),)* }
            }
            #[inline]
            fn on_ack(&mut self, st: &mut TcpState, ack: &Ack) {
                if st.cwr {
                    return; // no law grows the window in CWR, as no Linux module's cong_avoid runs
                }
                match self { $(AnyLaw::$law(l) => l.on_ack(st, ack),)* }
            }
            #[inline]
            fn on_fast_retransmit(&mut self, st: &mut TcpState, now: Time) {
                match self { $(AnyLaw::$law(l) => l.on_fast_retransmit(st, now),)* }
            }
            #[inline]
            fn on_timeout(&mut self, st: &mut TcpState, now: Time) {
                match self { $(AnyLaw::$law(l) => l.on_timeout(st, now),)* }
            }
            #[inline]
            fn on_loss_from_flight(&mut self, st: &mut TcpState, now: Time, flight: f64, timeout: Option<bool>) {
                match self { $(AnyLaw::$law(l) => l.on_loss_from_flight(st, now, flight, timeout),)* }
            }
            #[inline]
            fn on_ece(&mut self, st: &mut TcpState, now: Time) {
                match self { $(AnyLaw::$law(l) => l.on_ece(st, now),)* }
            }
            #[inline]
            fn echoes_ce_exactly(&self) -> bool {
                match self { $(AnyLaw::$law(l) => l.echoes_ce_exactly(),)* }
            }
            #[inline]
            fn wants_rate_samples(&self) -> bool {
                match self { $(AnyLaw::$law(l) => l.wants_rate_samples(),)* }
            }
            #[inline]
            fn on_rate_sample(&mut self, st: &mut TcpState, rs: &rate::RateSample, in_flight: &rate::InFlight) {
                match self { $(AnyLaw::$law(l) => l.on_rate_sample(st, rs, in_flight),)* }
            }
            #[inline]
            fn reads_prior_in_flight(&self) -> bool {
                match self { $(AnyLaw::$law(l) => l.reads_prior_in_flight(),)* }
            }
            #[inline]
            fn pacing_rate_pps(&self) -> Option<f64> {
                match self { $(AnyLaw::$law(l) => l.pacing_rate_pps(),)* }
            }
            #[inline]
            fn tso_segs(&self) -> u32 {
                match self { $(AnyLaw::$law(l) => l.tso_segs(),)* }
            }
            #[inline]
            fn sets_window(&self) -> bool {
                match self { $(AnyLaw::$law(l) => l.sets_window(),)* }
            }
            #[inline]
            fn marks_app_limited(&self) -> bool {
                match self { $(AnyLaw::$law(l) => l.marks_app_limited(),)* }
            }
            #[inline]
            fn init(&mut self, rng: SimRng, pkt_bytes: f64) {
                match self { $(AnyLaw::$law(l) => l.init(rng, pkt_bytes),)* }
            }
            #[inline]
            fn on_connected(&mut self, st: &TcpState, now: Time, rtt_s: f64) {
                match self { $(AnyLaw::$law(l) => l.on_connected(st, now, rtt_s),)* }
            }
            #[inline]
            fn mode(&self) -> Option<usize> {
                match self { $(AnyLaw::$law(l) => l.mode(),)* }
            }
        }

        /// The window laws (`tcp.cc`).
        pub const LAWS: &[LawEntry] = &[$($module::ENTRY,)*];
    };
}

// The window laws: one line each.
window_laws! {
    newreno::Aimd,
    cubic_2622::Cubic2622 [boxed],
    highspeed::HighSpeed,
    scalable::Scalable,
    bic::Bic [boxed],
    htcp::Htcp [boxed],
    westwood::Westwood [boxed],
    lp::Lp [boxed],
    dctcp::Dctcp,
    cubic_rfc9438::CubicRfc9438 [boxed],
    bbr::Bbr [boxed],
}

pub use recovery::{AnyRecovery, RecoveryEntry, RECOVERIES};
pub use release::{AnyRelease, ReleaseEntry, RELEASES};

pub fn recovery_names() -> Vec<&'static str> {
    RECOVERIES.iter().map(|e| e.name).collect()
}

pub fn release_names() -> Vec<&'static str> {
    RELEASES.iter().map(|e| e.name).collect()
}

pub fn law_names() -> Vec<&'static str> {
    LAWS.iter().map(|e| e.def.name).collect()
}

crate::params! {
    /// TCP settings common to every window law: loss recovery, release, and the sender and
    /// receiver knobs (defaults: ns-2's one-way Agent/TCP, 2.35).
    pub struct TcpCommon as "TcpCommon" {
        /// Loss recovery: reno (RFC 5681, ns-2 Agent/TCP/Reno: a second loss in a window usually
        /// costs a timeout), newreno (RFC 6582, ns-2 Agent/TCP/Newreno), sack (RFC 6675, ns-2
        /// Agent/TCP/Sack1), linux (ns-2 TCP-Linux's FACK scoreboard and rate halving; release
        /// window), prr (RFC 6675 with RFC 6937's proportional rate reduction) or rack_tlp (RFC
        /// 8985 with PRR, as Linux 4.18+; release window or paced).
        recovery: String = "newreno".into(), check one_of(recovery_names);
        /// How the packets the window allows leave: window (ACK-clocked), paced (one every srtt /
        /// window: Paced TCP), poisson (exponential gaps at rate window / srtt, Enachescu's Theorem 1).
        release: String = "window".into(), check one_of(release_names);
        /// Initial congestion window (ns-2 windowInit_).
        init_cwnd_pkts: f64 = 2.0, unit "pkts", check float_in(1.0, 1e9);
        /// The send buffer: at most this many packets sent and not yet cumulatively acknowledged
        /// (Linux's sk_sndbuf, counted in packets). With wmax_pkts it bounds what a flow has in the
        /// network, and so a run's memory, whatever the windows: a window cap of 2^30 ("no cap")
        /// is this. The default binds in no seed scenario (docs/engine.md).
        sndbuf_pkts: i64 = 65536, unit "pkts", check int_in(1, 1 << 30);
        /// Initial slow-start threshold; null = the receiver window wmax_pkts (ns-2 ssthresh_ = window_).
        init_ssthresh_pkts: Option<f64> = None, unit "pkts", check opt(float_in(2.0, 1e12));
        /// Minimum retransmission timeout (ns-2 minrto_).
        min_rto_ms: f64 = 200.0, unit "ms", check positive(1e6);
        /// Maximum retransmission timeout, backoff included (ns-2 maxrto_).
        max_rto_s: f64 = 60.0, unit "s", check positive(1e5);
        /// Retransmission timeout before the first RTT sample (ns-2 rtxcur_init_).
        init_rto_s: f64 = 3.0, unit "s", check positive(1e5);
        /// The flow opens with a handshake, as Linux's do: the SYN crosses the route's queues (it
        /// may be lost and resent), and its RTT, queueing included, is the first sample: SRTT,
        /// RTTVAR, the RTO, BBR's min RTT and initial pacing rate (`bbr_init`); data starts at the
        /// SYN-ACK. Off: ns-2's agents, which start with no sample, wait init_rto_s and send.
        handshake: bool = false;
        /// Linux's RTT sample for rate samples (BBR's min RTT): an ACK of retransmitted data that
        /// SACKs nothing new gives the timestamp it echoes, in whole ms (up to 1 ms low; `rate.rs`).
        /// Off: the newest packet newly delivered and never retransmitted. On in the Linux presets.
        tsecr_rtt: bool = false;
        /// RTT-sample granularity (ns-2 tcpTick_); 0 = exact.
        tick_ms: f64 = 10.0, unit "ms", check non_negative(1e4);
        /// The receiver delays ACKs (ns-2 DelAckSink): every second packet, or after delack_ms.
        delayed_ack: bool = false;
        /// Delayed-ACK timer.
        delack_ms: f64 = 100.0, unit "ms", check positive(1e5);
        /// Limited Transmit, RFC 3042 (ns-2 singledup_ = 1).
        limited_transmit: bool = true;
        /// Packets released per ACK; 0 = unlimited (ns-2 maxburst_ = 0).
        max_burst_pkts: i64 = 0, unit "pkts", check int_in(0, 1 << 30);
        /// ECN (RFC 3168): data packets are ECN-capable, the receiver echoes a CE mark (ECE) until
        /// the sender's CWR, and the window law reacts to ECE as to a loss (DCTCP: by its alpha)
        /// without retransmitting, then holds the window for that window's data (CWR).
        ecn: bool = false;
        /// RACK's reordering window (recovery rack_tlp) as a fraction of the min RTT, at most SRTT
        /// (RFC 8985 section 6.2: 1/4; Linux's `tcp_rack_reo_wnd` with one step).
        rack_reo_wnd_min_rtts: f64 = 0.25, check positive(1e3);
        /// Each send the window allows waits a random time, uniform in [0, send_jitter_ms], and
        /// takes with it what the window allows meanwhile: ns-2's `overhead_` (`send_much`'s
        /// delayed-send timer), which breaks drop-tail's phase effects (Floyd and Jacobson 1992;
        /// docs/fidelity.md). Release window, under a recovery that leaves sending to it, or
        /// recovery rack_tlp, where each paced packet waits its own draw (`send_clock.rs`); 0 = off.
        send_jitter_ms: f64 = 0.0, unit "ms", check non_negative(1e4);
        /// The AIMD law's ssthresh at a loss is half the packets in flight (RFC 6675's pipe with
        /// SACK), as ns-3's TcpNewReno (`GetSsThresh(tcb, BytesInFlight)`), not half the window
        /// (RFC 5681's FlightSize as ns-2 and Linux's `tcp_reno_ssthresh` take it). Off: ours.
        ssthresh_from_pipe: bool = false;
        /// The retransmission timer is not restarted at a fast retransmit, and in a recovery only
        /// at its first partial ACK (ns-3's `TcpSocketBase`, RFC 6582's Impatient variant). Off:
        /// restarted at both and at every partial ACK, as ns-2 and Linux do.
        rto_first_partial_only: bool = false;
        /// The timer's backoff ends at every ACK that advances the cumulative ACK, as ns-3's
        /// `NewAck` recomputes the RTO from SRTT and RTTVAR, not only at an RTT sample from a
        /// packet never retransmitted (Karn, RFC 6298, ns-2). Off: ours.
        rto_backoff_reset_on_ack: bool = false;
        /// Linux's TSO autosizing and deferral (recovery rack_tlp, release window): skbs of the
        /// pacing rate's 2^-10 s (at least 2 packets); a send filling less than one waits for the
        /// next ACK unless it fills a third of the window or that ACK is due over min(1 ms, srtt /
        /// 2) away (`tcp_tso_should_defer`; `tso_defer.rs`). An skb of 2 or more ends with PSH,
        /// ACKed at once (Linux 6.6+). On in cubic and reno_linux; off: each ACK's room leaves.
        tso_defer: bool = false;
        /// Every rule in which ns-3's TCP departs from ours: ns3 (ssthresh_from_pipe,
        /// rto_first_partial_only, rto_backoff_reset_on_ack, sack as sack_retain: the scoreboard
        /// kept across a timeout; no tso_defer), none (each as set). docs/fidelity.md.
        compat: String = "none".into(), check one_of(compat_names);
    }
}

/// The values of `tcp.compat`.
pub fn compat_names() -> Vec<&'static str> {
    vec!["none", "ns3"]
}

/// The `tcp` section: a window law (tag `cc`) with its parameters, and the common settings.
/// A law as Linux runs it (`cubic`, `bbr`, `reno_linux`): RACK-TLP with PRR, initial window 10
/// (RFC 6928), TCP_RTO_MIN 200 ms, TCP_DELACK_MIN 40 ms, exact RTTs, a handshake, timestamps.
macro_rules! linux_sender {
    ($cc:literal, $release:literal $(, $extra:expr)*) => {
        &[
            ("cc", Str($cc)),
            ("recovery", Str("rack_tlp")),
            ("release", Str($release)),
            ("init_cwnd_pkts", Num(10.0)),
            ("min_rto_ms", Num(200.0)),
            ("tick_ms", Num(0.0)),
            ("delayed_ack", Bool(true)),
            ("delack_ms", Num(40.0)),
            ("handshake", Bool(true)),
            ("tsecr_rtt", Bool(true)),
            $($extra,)*
        ]
    };
}

pub static TCP: UnionDef = UnionDef {
    name: "tcp",
    tag: "cc",
    default_tag: "newreno",
    variants: || LAWS.iter().map(|e| &e.def).collect(),
    presets: &[
        PresetDef {
            name: "reno",
            doc: "TCP Reno: AIMD with Reno recovery (ns-2 Agent/TCP/Reno)",
            set: &[("cc", Str("newreno")), ("recovery", Str("reno")), ("release", Str("window"))],
        },
        PresetDef {
            name: "newreno",
            doc: "TCP NewReno: AIMD with NewReno recovery (ns-2 Agent/TCP/Newreno)",
            set: &[("cc", Str("newreno")), ("recovery", Str("newreno")), ("release", Str("window"))],
        },
        PresetDef {
            name: "sack",
            doc: "TCP with SACK (RFC 6675 recovery) and the AIMD law (ns-2 Agent/TCP/Sack1, ns-3's default)",
            set: &[("cc", Str("newreno")), ("recovery", Str("sack")), ("release", Str("window"))],
        },
        PresetDef {
            name: "cubic",
            doc: "CUBIC as Linux 6.x runs it: RFC 9438 CUBIC whose Reno-friendly rate stays alpha_cubic (Linux's \
                  tcp_cubic), RACK-TLP with PRR, initial window 10, min RTO 200 ms, delayed ACKs (40 ms), RTT \
                  measured exactly, TSO skbs and deferral (tcp.tso_defer); HyStart++ where Linux has HyStart",
            set: linux_sender!("cubic_rfc9438", "window", ("alpha_one", Bool(false)), ("tso_defer", Bool(true))),
        },
        PresetDef {
            name: "cubic_2622",
            doc: "CUBIC 2.1 as Linux 2.6.22 in ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 \
                  sink: the ABS paper's CUBIC",
            set: &[("cc", Str("cubic_2622")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "highspeed",
            doc: "HighSpeed TCP (RFC 3649) as ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 sink",
            set: &[("cc", Str("highspeed")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "scalable",
            doc: "Scalable TCP as ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 sink",
            set: &[("cc", Str("scalable")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "bic",
            doc: "BIC as ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 sink",
            set: &[("cc", Str("bic")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "htcp",
            doc: "H-TCP as ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 sink",
            set: &[("cc", Str("htcp")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "westwood",
            doc: "Westwood+ as ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 sink",
            set: &[("cc", Str("westwood")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "lp",
            doc: "TCP-LP with timestamps, as ns-2's TCP-Linux (FACK scoreboard, rate halving) with a Sack1 sink",
            set: &[("cc", Str("lp")), ("recovery", Str("linux")), ("release", Str("window"))],
        },
        PresetDef {
            name: "dctcp",
            doc: "DCTCP (RFC 8257) with SACK recovery; needs tcp.ecn=true and a marking queue (queue=step)",
            set: &[("cc", Str("dctcp")), ("recovery", Str("sack")), ("release", Str("window"))],
        },
        PresetDef {
            name: "bbr",
            doc: "BBR v1 as Linux runs it (tcp_bbr.c): pacing at its model's rate, RACK-TLP, and Linux's \
                  settings as the cubic preset's (initial window 10, min RTO 200 ms, delayed ACKs at 40 ms, \
                  RTT measured exactly, min RTT from timestamps after a loss: tcp.tsecr_rtt)",
            set: linux_sender!("bbr", "paced"),
        },
        PresetDef {
            name: "reno_linux",
            doc: "Reno's AIMD window as Linux runs it (the kernel's reno module: growth by the packets an ACK \
                  acknowledges): RACK-TLP with PRR and Linux's settings as the cubic preset's",
            set: linux_sender!("newreno", "window", ("count_acked", Bool(true)), ("tso_defer", Bool(true))),
        },
        PresetDef {
            name: "paced",
            doc: "Paced TCP (Enachescu et al. 2006): NewReno releasing one packet every srtt / window",
            set: &[("cc", Str("newreno")), ("recovery", Str("newreno")), ("release", Str("paced"))],
        },
        PresetDef {
            name: "poisson",
            doc: "The sender of Enachescu et al.'s Theorem 1: NewReno with Poisson releases",
            set: &[("cc", Str("newreno")), ("recovery", Str("newreno")), ("release", Str("poisson"))],
        },
    ],
    renamed: &[
        ("linux", "cubic (RFC 9438 CUBIC with Linux's settings; named linux up to engine 0.20.0)"),
        (
            "cubic",
            "cubic_rfc9438 (RFC 9438), or cubic_2622 (Linux 2.6.22's, as ns-2's TCP-Linux; the law named cubic \
             up to engine 0.20.0)",
        ),
    ],
};

/// The `tcp` section of a run config.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig(pub crate::params::Tagged<TcpCommon>);

crate::union_param!(TcpConfig, TCP, TcpCommon);

impl TcpConfig {
    pub fn common(&self) -> &TcpCommon {
        &self.0.common
    }

    /// Builds the window-law factory (once per run).
    pub fn law_factory(&self) -> LawFactory {
        let entry = LAWS.iter().find(|e| e.def.name == self.0.variant).expect("law validated in config");
        (entry.factory)(&self.0.params)
    }

    pub fn make_recovery(&self) -> AnyRecovery {
        let common = &self.0.common;
        // ns-3 keeps the SACK scoreboard across a timeout (`tcp.compat`).
        let name = match (common.recovery.as_str(), common.compat.as_str()) {
            ("sack", "ns3") => "sack_retain",
            (name, _) => name,
        };
        (RECOVERIES.iter().find(|e| e.name == name).expect("recovery validated in config").make)()
    }

    pub fn make_release(&self, rng: SimRng) -> AnyRelease {
        let name = &self.0.common.release;
        (RELEASES.iter().find(|e| e.name == name).expect("release validated in config").make)(rng)
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
