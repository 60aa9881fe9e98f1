//! `step`: DCTCP's switch (Alizadeh et al., SIGCOMM 2010, section 3.1; RFC 8257 section 3.1):
//! an arrival that finds `k_pkts` or more packets waiting is marked CE; packets are dropped only at
//! the hard limit. Details: docs/engine.md, `queue/step.rs`.

use super::droptail::Fifo;
use super::{Cause, Discipline, Limit, LinkInfo, QueueDiscipline, QueueEntry, Verdicts};
use crate::packet::Packet;
use crate::params::{int_in, normalize, Param, Value, VariantDef, MAX_PKTS};
use crate::time::Time;

crate::params! {
    /// The marking threshold (Alizadeh et al. size it as K > C x RTT / 7).
    pub struct StepParams as "Step" {
        /// Mark when at least this many packets wait.
        k_pkts: i64 = 20, unit "pkts", check int_in(0, MAX_PKTS);
    }
}

pub const ENTRY: QueueEntry = QueueEntry {
    def: VariantDef {
        name: "step",
        doc: "DCTCP's step marking: CE when at least k_pkts packets wait, drops only at the hard limit",
        params: StepParams::specs,
        keys: StepParams::KEYS,
        normalize: normalize::<StepParams>,
    },
    marks: |_: &Value| true,
    make: |v: &Value, limit: Limit, _: &LinkInfo| {
        let p = StepParams::parse(v).expect("validated");
        Discipline::Step(Step { fifo: Fifo::default(), limit, k: p.k_pkts as usize })
    },
};

pub struct Step {
    fifo: Fifo,
    limit: Limit,
    k: usize,
}

impl QueueDiscipline for Step {
    fn enqueue(&mut self, mut pkt: Packet, _: Time, out: &mut Verdicts) -> bool {
        if self.fifo.full(self.limit, &pkt) {
            out.dropped.push((pkt, Cause::Overflow));
            return false;
        }
        if self.fifo.len() >= self.k && pkt.mark_ce() {
            out.marks += 1;
        }
        self.fifo.push(pkt);
        true
    }

    fn dequeue(&mut self, _: Time, _: &mut Verdicts) -> Option<Packet> {
        self.fifo.pop()
    }

    super::fifo_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    #[test]
    fn marks_exactly_from_k_waiting_packets_and_drops_only_at_the_limit() {
        let mut q = Step { fifo: Fifo::default(), limit: Limit::Packets(8), k: 3 };
        let mut out = Verdicts::default();
        let mut marked = Vec::new();
        for i in 0..9 {
            let mut p = Packet::new(Kind::Data, 0, 1000, i);
            p.set_ect();
            if q.enqueue(p, 0, &mut out) {
                marked.push(q.fifo.iter().last().unwrap().ce());
            }
        }
        // Arrivals 0-2 find 0-2 waiting; 3-6 find 3-6 (marked); 7 and 8 meet the limit of 8.
        assert_eq!(marked, [false, false, false, true, true, true, true]);
        assert_eq!((out.marks, out.dropped.len()), (4, 2));
        assert!(out.dropped.iter().all(|d| d.1 == Cause::Overflow));
        let mut plain = Step { fifo: Fifo::default(), limit: Limit::Packets(8), k: 0 };
        assert!(plain.enqueue(Packet::new(Kind::Data, 0, 1000, 0), 0, &mut out));
        assert_eq!(out.marks, 4, "a packet that is not ECT is not marked");
    }
}
