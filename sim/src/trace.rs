//! The optional bounded event trace of the topology's links: the first `max` enqueue / drop /
//! dequeue events from `start` on, as a hardware event-capture switch would record them. Kept in
//! columns (a trace may hold 10^8 events); `columns` follows `output::TraceRow`, which declares them.

use crate::output::Column;
use crate::packet::{Kind, Packet};
use crate::time::{to_secs, Time};

pub const ENQUEUE: u8 = 0;
pub const DROP: u8 = 1;
pub const DEQUEUE: u8 = 2;
const NAMES: [&str; 3] = ["enqueue", "drop", "dequeue"];

#[derive(Default)]
pub struct Trace {
    max: usize,
    start: Time,
    time_s: Vec<f64>,
    event: Vec<u8>,
    open_loop: Vec<bool>,
    flow: Vec<i64>,
    seq: Vec<i64>,
    queue_pkts: Vec<i64>,
    link_id: Vec<i64>,
}

impl Trace {
    pub fn new(max: usize, start: Time) -> Self {
        Self { max, start, ..Default::default() }
    }

    #[inline(always)]
    pub fn record(&mut self, now: Time, event: u8, pkt: &Packet, queue_pkts: usize, link: usize) {
        if self.time_s.len() >= self.max || now < self.start {
            return;
        }
        self.time_s.push(to_secs(now));
        self.event.push(event);
        self.open_loop.push(pkt.kind() == Kind::OpenLoop);
        self.flow.push(pkt.flow as i64);
        // A SYN's sentinel (`packet::SYN_SEQ`) reads -1: no data packet has that number.
        self.seq.push(pkt.seq.max(-1));
        self.queue_pkts.push(queue_pkts as i64);
        self.link_id.push(link as i64);
    }

    /// The columns of `output::TraceRow`, in its order.
    pub fn columns(self) -> Vec<(&'static str, Column)> {
        vec![
            ("time_s", Column::F64(self.time_s)),
            ("event", Column::Label(self.event.iter().map(|&e| NAMES[e as usize]).collect())),
            ("open_loop", Column::Bool(self.open_loop)),
            ("flow", Column::I64(self.flow)),
            ("seq", Column::I64(self.seq)),
            ("queue_pkts", Column::I64(self.queue_pkts)),
            ("link_id", Column::I64(self.link_id)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{Cell, TraceRow};

    #[test]
    fn columns_follow_the_declared_table() {
        let cols = Trace::new(10, 0).columns();
        let names: Vec<_> = cols.iter().map(|(n, _)| *n).collect();
        let specs = TraceRow::specs();
        assert_eq!(names, specs.iter().map(|s| s.name).collect::<Vec<_>>());
        let kinds = [<f64 as Cell>::TYPE, <&str as Cell>::TYPE, "bool", "int64", "int64", "int64", "int64"];
        assert_eq!(specs.iter().map(|s| s.ty).collect::<Vec<_>>(), kinds);
    }
}
