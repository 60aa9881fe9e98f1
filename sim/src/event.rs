//! The event list: a 4-ary heap (`dary_heap`) ordered by (time, insertion sequence), whose
//! running event is replaced by the first one its handler schedules (`take_until`, `release`).
//! Details: docs/engine.md, `event.rs`.

use crate::time::Time;
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A flow starts sending.
    FlowStart(u32),
    /// A link finished serialising its packet.
    LinkDone(u32),
    /// The head packet of a link's propagation pipe reaches the link's far end.
    LinkExit(u32),
    /// A flow's SYN timer (see `world::handshake`).
    SynTimer(u32),
    /// A flow's retransmission timer (lazily rescheduled; see `world`).
    RtoTimer(u32),
    /// A flow's release timer (paced and Poisson senders).
    SendTimer(u32),
    /// A flow's delayed-ACK timer at the receiver.
    DelAckTimer(u32),
    /// An open-loop source emits its next packet.
    SourceEmit(u32),
    /// A transfer generator's next transfer arrives (see `world::traffic`).
    TransferArrival(u32),
    /// The next step of a bulk group's on/off schedule (an index of the world's schedules).
    BulkStep(u32),
    /// An http group's next session starts.
    SessionArrival(u32),
    /// A web session's next object (by session slot).
    SessionStep(u32),
    /// An adaptive buffer policy's periodic call (by index of the world's policies).
    PolicyTick(u32),
    /// End of a time-series sample interval.
    SampleTick,
    /// End of warm-up: counters are snapshotted so that metrics cover [warmup_s, duration_s].
    WarmupEnd,
}

/// The top bit of the sequence: events that run after every other event of the same time.
const LATE: u64 = 1 << 63;

/// `time` (ps) in the high 64 bits, the class (`LATE` or 0) and insertion sequence in the low 64.
#[inline(always)]
fn key(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

/// The key's two halves as two words, so that an entry is 24 bytes, not the 32 a `u128` field's
/// alignment would make it: the heap moves a quarter less memory.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline(always)]
    fn key(&self) -> u128 {
        key(self.time, self.seq)
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: QuaternaryHeap<Entry>,
    next_seq: u64,
    /// The time of the last event popped: nothing may be scheduled before it.
    now: Time,
    pub executed: u64,
    /// The event `take_until` handed out is still the heap's top: the first event its handler
    /// schedules takes its place (one sift down instead of a pop and a push); `release` pops it
    /// if none did.
    held: bool,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops the pending events and gives back their memory: the run is over (its count of
    /// executed events stays).
    pub fn discard_pending(&mut self) {
        self.heap = QuaternaryHeap::new();
        self.held = false;
    }

    /// Schedules `event` at `time`. Panics if `time` is in the past, which is what an overflowed
    /// `now + delay` would give: the validator bounds every duration so that none can overflow
    /// (see `config`), and this keeps a future mistake from running the clock backwards.
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        self.push_keyed(time, 0, event);
    }

    /// Schedules `event` at `time`, after every event scheduled with `push` for the same time,
    /// whenever they were scheduled. A queue's end of transmission goes here, so that a packet
    /// arriving at the very instant a slot frees finds the queue as it was, as in ns-2: there
    /// the arrival's event was scheduled when it left the upstream node, a propagation delay
    /// before, and the queue's `resume` one transmission time before, and equal times run in
    /// scheduling order. Our return paths carry the propagation delay, so plain insertion order
    /// would run such ties the other way. Ties are common: a window's packets reach the
    /// bottleneck spaced exactly by its transmission time. Running them departure first locked
    /// one of two Reno flows out at an 8-packet buffer (ABS Fig. 1 set-up, seeds 1-6: the
    /// leading train always took the freed slot and grew; utilization 0.29 against ns-2's 0.08).
    #[inline]
    pub fn push_after_arrivals(&mut self, time: Time, event: Event) {
        self.push_keyed(time, LATE, event);
    }

    #[inline(always)]
    fn push_keyed(&mut self, time: Time, class: u64, event: Event) {
        assert!(time >= self.now, "event {event:?} scheduled at {time} ps, before now ({} ps)", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { time, seq: class | seq, event };
        if self.held {
            self.held = false;
            *self.heap.peek_mut().expect("a held event") = entry;
        } else {
            self.heap.push(entry);
        }
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.release();
        let e = self.heap.pop()?;
        self.executed += 1;
        self.now = e.time;
        Some((e.time, e.event))
    }

    /// The next event if it is due by `end`, left at the top of the heap until `release` (or the
    /// next `push`, which replaces it): the order is the keys' alone, so it is `pop`'s.
    #[inline(always)]
    pub fn take_until(&mut self, end: Time) -> Option<(Time, Event)> {
        self.release();
        let e = *self.heap.peek().filter(|e| e.time <= end)?;
        self.held = true;
        self.executed += 1;
        self.now = e.time;
        Some((e.time, e.event))
    }

    /// Removes the event `take_until` handed out, unless a `push` already took its place.
    #[inline(always)]
    pub fn release(&mut self) {
        if self.held {
            self.held = false;
            self.heap.pop();
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.held)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "before now")]
    fn refuses_an_event_in_the_past() {
        let mut q = EventQueue::new();
        q.push(10, Event::SampleTick);
        q.pop();
        q.push(10u64.wrapping_add(u64::MAX), Event::SampleTick); // an overflowed now + delay
    }

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.push(5, Event::SampleTick);
        q.push(3, Event::LinkExit(1));
        q.push(3, Event::LinkExit(2));
        q.push(1, Event::LinkDone(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(1, Event::LinkDone(0)), (3, Event::LinkExit(1)), (3, Event::LinkExit(2)), (5, Event::SampleTick)]
        );
    }

    /// `take_until` / `release`, with the first push replacing the event taken, hands out the events in
    /// the order `pop` does, over random schedules (ties, late events, handlers that schedule
    /// none, one or several).
    #[test]
    fn take_and_release_run_the_order_pop_does() {
        let mut x = 7u64; // a small LCG: the test needs no random crate
        let mut rand = move |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let (mut by_pop, mut by_take) = (EventQueue::new(), EventQueue::new());
        let mut next_id = 0u32;
        for _ in 0..50 {
            let t = rand(20);
            for q in [&mut by_pop, &mut by_take] {
                q.push(t, Event::LinkDone(next_id));
            }
            next_id += 1;
        }
        let (mut popped, mut taken) = (Vec::new(), Vec::new());
        while !by_pop.is_empty() {
            let (t, ev) = by_pop.pop().expect("not empty");
            assert_eq!(by_take.len(), by_pop.len() + 1);
            let got = by_take.take_until(Time::MAX).expect("the same length");
            popped.push((t, ev));
            taken.push(got);
            if popped.len() > 20_000 {
                break;
            }
            // The handler: schedules 0-3 events, some at its own time, some late.
            for _ in 0..rand(4) {
                let (at, late) = (t + rand(3) * rand(10), rand(3) == 0);
                for q in [&mut by_pop, &mut by_take] {
                    if late {
                        q.push_after_arrivals(at, Event::LinkExit(next_id));
                    } else {
                        q.push(at, Event::LinkExit(next_id));
                    }
                }
                next_id += 1;
            }
            by_take.release();
            assert_eq!(by_take.len(), by_pop.len());
        }
        assert_eq!(popped, taken);
        assert!(popped.len() > 1000, "the schedule ran {} events", popped.len());
    }

    #[test]
    fn late_events_run_after_every_event_of_their_time() {
        let mut q = EventQueue::new();
        q.push_after_arrivals(3, Event::LinkDone(0));
        q.push(3, Event::LinkExit(1));
        q.push(2, Event::LinkExit(2));
        q.push_after_arrivals(2, Event::LinkDone(3));
        q.push(3, Event::LinkExit(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(
            order,
            vec![Event::LinkExit(2), Event::LinkDone(3), Event::LinkExit(1), Event::LinkExit(4), Event::LinkDone(0)]
        );
    }
}
