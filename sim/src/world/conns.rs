//! The connections of a run: each one's sender, receiver, paths and pending timers, and the
//! long flows' start times, RTTs, TCP groups and routes (see docs/engine.md).

use super::Route;
use crate::memory::{try_vec, OutOfMemory};
use crate::tcp::receiver::{SackList, TcpReceiver};
use crate::tcp::sender::TcpSender;
use crate::tcp::sender_core::TcpParams;
use crate::tcp::{LawFactory, TcpConfig};
use crate::time::Time;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// What an ACK carries beside its number, kept beside the connection (see `Conns::ack_opts`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckOptions {
    pub ackno: i64,
    pub sack: SackList,
    /// The sequence whose timestamp the ACK echoes, and when the receiver sent it.
    pub stamp: Option<(i64, Time)>,
}

/// What the world keeps of a connection beside its sender and receiver (one struct: a packet's
/// path touches all of it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conn {
    pub fwd: Route,
    pub rev: Route,
    /// The topology route.
    pub route: u32,
    /// Deadlines of the timer events pending (lazily rescheduled; see `flush`), or `IDLE`.
    /// Plain times rather than `Option`s: 48 bytes a connection, not 72 (the per-flow state
    /// touched per packet must stay in L2 at 1000 flows).
    pub pending_rto: Time,
    pub pending_send: Time,
    pub pending_delack: Time,
    /// The receiver reports SACK blocks (the sender's recovery is `sack`).
    pub sack: bool,
    /// The receiver echoes timestamps (the sender's window law reads them); the forward route
    /// then starts with a pure delay (see `path_delays`).
    pub stamps: bool,
    /// The sender takes Linux's RTT sample (`tcp.tsecr_rtt`): its data packets and the ACKs say
    /// which copy filled the receiver's hole (`Packet::retx`).
    pub tsecr: bool,
}

/// SACK blocks per ACK: 3, as ns-2's `TCPSink/Sack1` and real stacks, whose timestamp option
/// leaves room for 3.
pub(crate) const SACK_BLOCKS: usize = 3;

/// A TCP group: its config, its window-law factory, and the parameters its senders share.
pub(crate) struct Group {
    pub tcp: TcpConfig,
    pub law: LawFactory,
    pub params: Rc<TcpParams>,
}

/// Every connection: 0..n_long are the long flows (route by route, then bulk groups); later ones
/// are finite transfers' reusable slots.
pub(crate) struct Conns {
    pub n_long: usize,
    pub conn: Vec<Conn>,
    pub senders: Vec<TcpSender>,
    pub receivers: Vec<TcpReceiver>,
    /// The options of each connection's ACKs in flight, oldest first: ACKs carry only their
    /// number (packets stay 24 bytes), and a return path is one lossless FIFO delay line, so the
    /// i-th ACK delivered is the i-th sent (checked on delivery). Empty for connections with
    /// neither SACK nor timestamps.
    pub ack_opts: Vec<VecDeque<AckOptions>>,
    /// The TCP of each group with its window-law factory: group 0 is the `tcp` section (short
    /// flows, and every long flow without a mix), then the `tcp_mix` groups, then the TCP
    /// `traffic` groups'.
    pub groups: Vec<Group>,
    /// Each long flow's group, topology route, RTT and start time.
    pub flow_group: Vec<usize>,
    pub flow_route: Vec<usize>,
    pub rtt_s: Vec<f64>,
    pub start_s: Vec<f64>,
    /// The sequence numbers a sender asked to send, reused between calls.
    pub outbox: Vec<i64>,
    /// The connections whose SYN is out, by id (`handshake`): a map, as few are at any time.
    pub opening: HashMap<u32, super::handshake::Opening>,
}

impl Conns {
    /// The tables of `n_long` long flows, reserved at once (an error if memory runs out).
    pub fn new(n_long: usize, groups: Vec<Group>) -> Result<Self, OutOfMemory> {
        let doing = "reserving the flow tables";
        Ok(Conns {
            n_long,
            conn: try_vec(n_long, doing)?,
            senders: try_vec(n_long, doing)?,
            receivers: try_vec(n_long, doing)?,
            ack_opts: try_vec(n_long, doing)?,
            groups,
            flow_group: try_vec(n_long, doing)?,
            flow_route: try_vec(n_long, doing)?,
            rtt_s: try_vec(n_long, doing)?,
            start_s: try_vec(n_long, doing)?,
            outbox: Vec::with_capacity(64),
            opening: HashMap::new(),
        })
    }
}
