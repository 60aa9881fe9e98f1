//! The optional bounded event trace of the bottleneck: the first `max` enqueue / drop / dequeue
//! events from `start` on, as a hardware event-capture switch would record them.

use crate::packet::{Kind, Packet};
use crate::time::{to_secs, Time};

pub const ENQUEUE: u8 = 0;
pub const DROP: u8 = 1;
pub const DEQUEUE: u8 = 2;

#[derive(Default)]
pub struct Trace {
    max: usize,
    start: Time,
    pub time_s: Vec<f64>,
    pub event: Vec<u8>,
    pub open_loop: Vec<bool>,
    pub flow: Vec<u32>,
    pub seq: Vec<i64>,
    pub queue_pkts: Vec<u32>,
}

impl Trace {
    pub fn new(max: usize, start: Time) -> Self {
        Self { max, start, ..Default::default() }
    }

    #[inline]
    pub fn record(&mut self, now: Time, event: u8, pkt: &Packet, queue_pkts: usize) {
        if self.time_s.len() >= self.max || now < self.start {
            return;
        }
        self.time_s.push(to_secs(now));
        self.event.push(event);
        self.open_loop.push(pkt.kind == Kind::OpenLoop);
        self.flow.push(pkt.flow);
        self.seq.push(pkt.seq);
        self.queue_pkts.push(queue_pkts as u32);
    }
}
