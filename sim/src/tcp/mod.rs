//! TCP: the congestion state shared by all variants, the `Variant` trait, and the registry.
//!
//! The sender machinery (sequence numbers, RTT estimation and RTO, duplicate-ACK counting, fast
//! retransmit, go-back-N after a timeout) is common and lives in `sender.rs`; it follows ns-2's
//! one-way `Agent/TCP` so that results can be held against the ns-2 papers. A variant decides
//! what a new cumulative ACK does to the window (the recovery policy) and how transmissions
//! are released (ACK-clocked, paced, or Poisson). Sequence numbers count packets, as in ns-2:
//! `highest_ack` is the highest in-order sequence acknowledged (-1 before any).
//!
//! Adding a variant: one file implementing `Variant`, plus one line in `REGISTRY`.

pub mod newreno;
pub mod paced;
pub mod poisson;
pub mod receiver;
pub mod reno;
pub mod sender;

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
        }
    }

    /// Usable window in packets: min(cwnd + dupwnd, wmax), as ns-2's Reno `window()`.
    pub fn window(&self) -> i64 {
        ((self.cwnd.floor() as i64) + self.dupwnd).min(self.wmax as i64)
    }

    /// Packets sent and not yet cumulatively acknowledged.
    pub fn outstanding(&self) -> i64 {
        self.maxseq - self.highest_ack
    }

    /// Additive increase per new ACK (ns-2 `opencwnd`, windowOption 1): one packet per ACK in
    /// slow start, 1/cwnd per ACK in congestion avoidance. cwnd is capped at wmax: ns-2 lets it
    /// grow unused beyond the receiver window, which changes nothing since every use of cwnd
    /// is min(cwnd, wmax), but makes the reported cwnd meaningless.
    pub fn open_cwnd(&mut self) {
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        if self.cwnd > self.wmax {
            self.cwnd = self.wmax;
        }
    }

    /// Half the current window, the base of both loss responses (ns-2 `slowdown`).
    fn half_window(&self) -> f64 {
        0.5 * (self.cwnd + self.dupwnd as f64).min(self.wmax)
    }

    /// Multiplicative decrease on fast retransmit: ssthresh = cwnd = window / 2 (ssthresh >= 2).
    pub fn halve(&mut self) {
        let half = self.half_window();
        self.ssthresh = half.floor().max(2.0);
        self.cwnd = half.max(1.0);
    }

    /// Timeout response: ssthresh = window / 2 (>= 2), cwnd = 1.
    pub fn collapse(&mut self) {
        self.ssthresh = self.half_window().floor().max(2.0);
        self.cwnd = 1.0;
    }
}

/// What a new cumulative ACK meant to the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckKind {
    /// An ordinary (or recovery-ending) ACK: the sender resets its duplicate-ACK count.
    Full,
    /// A partial ACK during recovery (NewReno): retransmit the next hole, stay in recovery;
    /// `restart_timer` says whether the retransmission timer restarts.
    Partial { restart_timer: bool },
}

/// How a sender releases the packets its window allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// As soon as the window allows (ACK clocking; bursts are possible).
    Window,
    /// One packet every srtt / window (Paced TCP).
    Paced,
    /// Exponential gaps with mean srtt / window, not bounded by cwnd (Enachescu's Theorem 1).
    Poisson,
}

pub trait Variant: Send {
    /// A cumulative ACK above `st.highest_ack` arrived (`st` still holds the old value).
    fn on_new_ack(&mut self, st: &mut TcpState, ack: i64) -> AckKind;

    /// How many packets the sender may release after processing an ACK: None = none now,
    /// Some(0) = as many as the window allows, Some(k) = at most k.
    fn send_budget(&self, st: &TcpState, max_burst: u32) -> Option<u32>;

    /// Called when fast retransmit starts loss recovery.
    fn on_fast_retransmit(&mut self) {}

    fn release(&self) -> Release {
        Release::Window
    }
}

type Factory = fn() -> Box<dyn Variant>;

/// The variant registry: name -> constructor.
pub const REGISTRY: &[(&str, Factory)] = &[
    ("reno", || Box::new(reno::Reno)),
    ("newreno", || Box::new(newreno::NewReno::default())),
    ("paced", || Box::new(paced::Paced::default())),
    ("poisson", || Box::new(poisson::PoissonTcp::default())),
];

pub fn variant_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

pub fn make_variant(name: &str) -> Option<Box<dyn Variant>> {
    REGISTRY.iter().find(|(n, _)| *n == name).map(|(_, f)| f())
}
