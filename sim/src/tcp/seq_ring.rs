//! Per-packet records of a sender, indexed by sequence number in a power-of-two ring that covers
//! the packets outstanding: the send times that timestamps echo and RACK reads, and the
//! delivery-rate estimator's records. A hand-written ring because the window, not a fixed
//! capacity, bounds what must be kept. Details: docs/tcp.md, `tcp/seq_ring.rs`.

/// A ring's first size: grown (to four times the span outstanding) as the window needs. Small,
/// because a flow of a million holds a few packets (it began at 64: 2.5 KB of rate records for
/// every BBR flow, docs/performance.md, "Bytes per flow").
const INITIAL_SLOTS: usize = 8;

#[derive(Clone, Debug, Default)]
pub struct SeqRing<T> {
    slots: Vec<T>,
}

impl<T: Copy + Default> SeqRing<T> {
    /// A ring that records (`enabled`) or stays empty and costs nothing.
    pub fn new(enabled: bool) -> Self {
        Self { slots: if enabled { vec![T::default(); INITIAL_SLOTS] } else { Vec::new() } }
    }

    pub fn enabled(&self) -> bool {
        !self.slots.is_empty()
    }

    /// The record of `seq`, if it was sent (`seq <= maxseq`) and the ring records.
    pub fn get(&self, seq: i64, maxseq: i64) -> Option<T> {
        let mask = self.slots.len().checked_sub(1)?;
        (seq >= 0 && seq <= maxseq).then(|| self.slots[seq as usize & mask])
    }

    /// Records `seq`, sent now with `una` the cumulative ACK and `maxseq` the highest sent before
    /// it. The ring grows to twice the span from the cumulative ACK (a live record lies in that
    /// span, so none is overwritten; the ring starts small, as most windows are).
    pub fn set(&mut self, seq: i64, value: T, una: i64, maxseq: i64) {
        let len = self.slots.len();
        let span = (seq.max(maxseq) - una).max(1) as usize;
        if 2 * span >= len {
            let grown = (4 * span).next_power_of_two();
            let mut ring = vec![T::default(); grown];
            for s in (una + 1).max(0)..=maxseq {
                ring[s as usize & (grown - 1)] = self.slots[s as usize & (len - 1)];
            }
            self.slots = ring;
        }
        let mask = self.slots.len() - 1;
        self.slots[seq as usize & mask] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_growth_and_wrap_around() {
        let mut r: SeqRing<u64> = SeqRing::new(true);
        for seq in 0..1000 {
            let una = (seq - 300).max(-1); // 300 outstanding at most
            r.set(seq, seq as u64 * 10, una, seq - 1);
        }
        for seq in 700..1000 {
            assert_eq!(r.get(seq, 999), Some(seq as u64 * 10));
        }
        assert_eq!(r.get(1000, 999), None, "not sent yet");
        assert!(!SeqRing::<u64>::new(false).enabled());
    }
}
