//! A calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue implementation for the
//! simulation event set problem", CACM 31(10), 1988; ns-3's `CalendarScheduler` is another): the
//! event list's store (`event.rs`). Details and measurements: docs/engine.md, `event.rs`.
//!
//! Keys are u128, with a time in ps in the high 64 bits. Time is cut into days of 2^shift ps;
//! day d's events go to bucket d mod `buckets.len()`, each bucket sorted by key, least first. A
//! pop looks at the current day's bucket and walks on, a day at a time. The day is three times
//! the mean gap of the next events (Brown's rule) and the buckets number half to twice the
//! events, so that a pop looks at about one bucket of a few events. Hand-written: no maintained
//! Rust crate offers one.

/// Fewest buckets; also the threshold below which the queue never resizes down.
const MIN_BUCKETS: usize = 16;
/// Events sampled to size a day (Brown: "a small sample", 25 at most).
const SAMPLES: usize = 25;

/// One day's events (and later years' of the same bucket), sorted by key, least first, from
/// `head` on: events of one time (a thousand flows starting together) are pushed at the back and
/// taken from the front, each in O(1).
struct Bucket<T> {
    items: Vec<(u128, T)>,
    head: usize,
}

impl<T: Copy> Bucket<T> {
    #[inline(always)]
    fn front(&self) -> Option<&(u128, T)> {
        self.items.get(self.head)
    }

    #[inline(always)]
    fn pop_front(&mut self) -> (u128, T) {
        let e = self.items[self.head];
        self.head += 1;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        } else if self.head >= 16 && 2 * self.head >= self.items.len() {
            // A bucket that never empties (a far timer at its end) must not grow without end.
            self.items.drain(..self.head);
            self.head = 0;
        }
        e
    }

    #[inline(always)]
    fn insert(&mut self, key: u128, item: T) {
        // Most events are later than those already in their bucket: look from the back.
        if self.items.last().is_none_or(|e| e.0 < key) {
            self.items.push((key, item));
            return;
        }
        let at = self.items[self.head..].iter().rposition(|e| e.0 < key).map_or(self.head, |i| self.head + i + 1);
        self.items.insert(at, (key, item));
    }

    fn iter(&self) -> impl Iterator<Item = &(u128, T)> {
        self.items[self.head..].iter()
    }
}

pub struct Calendar<T> {
    buckets: Vec<Bucket<T>>,
    /// log2 of a day's length in ps.
    shift: u32,
    /// The current day's bucket, and the time at which that day ends.
    cur: usize,
    day_end: u64,
    len: usize,
    /// The time of the last entry taken: no key may come later below it.
    last: u64,
    /// Entries taken since the day's length was last set.
    taken: usize,
}

#[inline(always)]
fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

impl<T: Copy> Default for Calendar<T> {
    /// 16 buckets of 1-us days, until the first events size them.
    fn default() -> Self {
        Self::sized(MIN_BUCKETS, 20, 0)
    }
}

impl<T: Copy> Calendar<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Empty, with `n` buckets (a power of two), days of 2^`shift` ps, the current day holding `now`.
    fn sized(n: usize, shift: u32, now: u64) -> Self {
        let buckets = (0..n).map(|_| Bucket { items: Vec::new(), head: 0 }).collect();
        let mut c = Self { buckets, shift, cur: 0, day_end: 0, len: 0, last: now, taken: 0 };
        c.go_to(now);
        c
    }

    fn go_to(&mut self, time: u64) {
        let day = time >> self.shift;
        self.cur = (day as usize) & (self.buckets.len() - 1);
        self.day_end = (day + 1).saturating_mul(1 << self.shift);
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn push(&mut self, key: u128, item: T) {
        self.insert(key, item);
        self.len += 1;
        if self.len > 2 * self.buckets.len() {
            self.resize(2 * self.buckets.len());
        }
    }

    #[inline(always)]
    fn insert(&mut self, key: u128, item: T) {
        let i = ((time_of(key) >> self.shift) as usize) & (self.buckets.len() - 1);
        self.buckets[i].insert(key, item);
    }

    /// Removes and returns the least key's entry if its time is at most `end`.
    pub fn pop_until(&mut self, end: u64) -> Option<(u128, T)> {
        let i = self.find()?;
        let &(key, _) = self.buckets[i].front().expect("found");
        if time_of(key) > end {
            return None;
        }
        let e = Some(self.buckets[i].pop_front());
        self.len -= 1;
        self.last = time_of(key);
        self.taken += 1;
        if self.len < self.buckets.len() / 2 && self.buckets.len() > MIN_BUCKETS {
            self.resize(self.buckets.len() / 2);
        } else if self.taken > 2 * self.buckets.len() {
            // Brown sizes the day only when the queue grows or shrinks; the spacing of a run's
            // events changes without that (flows starting over seconds, then packets every few
            // microseconds), so it is looked at again after as many events as twice the buckets.
            self.taken = 0;
            if self.day_shift().abs_diff(self.shift) > 1 {
                // Off by more than a factor of 2: the spacing sampled varies that much anyway.
                self.resize(self.buckets.len());
            }
        }
        e
    }

    /// The bucket holding the least key; moves the current day to its day.
    fn find(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let n = self.buckets.len();
        for _ in 0..n {
            if let Some(&(key, _)) = self.buckets[self.cur].front() {
                if time_of(key) < self.day_end {
                    return Some(self.cur);
                }
            }
            self.cur = (self.cur + 1) & (n - 1);
            self.day_end = self.day_end.saturating_add(1 << self.shift);
        }
        // A whole year without an event due: jump to the least one (Brown's direct search).
        let (i, key) = (0..n).filter_map(|i| self.buckets[i].front().map(|e| (i, e.0))).min_by_key(|e| e.1)?;
        self.go_to(time_of(key));
        Some(i)
    }

    /// log2 of three times the mean gap between the next events (gaps over twice the mean left
    /// out, as Brown), or the current day's if they all fall at one time.
    fn day_shift(&self) -> u32 {
        let mut times: Vec<u64> = self.buckets.iter().flat_map(Bucket::iter).map(|e| time_of(e.0)).collect();
        let k = SAMPLES.min(times.len());
        if k >= 2 {
            if k < times.len() {
                times.select_nth_unstable(k - 1);
            }
            times[..k].sort_unstable();
        }
        let gaps: Vec<u64> = times[..k].windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<u64>() / (gaps.len() as u64).max(1);
        let kept: Vec<u64> = gaps.iter().copied().filter(|&g| g <= 2 * mean).collect();
        let day = 3 * kept.iter().sum::<u64>() / (kept.len() as u64).max(1);
        if day == 0 {
            self.shift
        } else {
            63 - day.leading_zeros()
        }
    }

    /// Rebuilds with `n` buckets and the day `day_shift` gives.
    fn resize(&mut self, n: usize) {
        let shift = self.day_shift();
        // The current day is the last entry's: anything pushed from now on is at or after it.
        let old = std::mem::replace(self, Self::sized(n, shift, self.last));
        self.len = old.len;
        for b in &old.buckets {
            for &(key, item) in b.iter() {
                self.insert(key, item);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Against std's binary heap: bursts of close events, far timers, equal times, growth past
    /// many resizes and shrinking back.
    #[test]
    fn pops_in_key_order_through_resizes() {
        let mut c = Calendar::new();
        let mut reference = BinaryHeap::new();
        let mut x = 12345u64; // a small LCG: the test needs no random crate
        let mut rand = move |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let (mut now, mut seq) = (0u64, 0u128);
        for step in 0..60_000u64 {
            let pushes = if step < 30_000 { rand(4) } else { rand(2) }; // grows, then drains
            for _ in 0..pushes {
                let t = now + [0, 1, 1000, 270_000, 1 << 30, 1 << 40][rand(6) as usize] * rand(5);
                let key = ((t as u128) << 64) | seq;
                seq += 1;
                c.push(key, step);
                reference.push(Reverse((key, step)));
            }
            if rand(3) > 0 {
                let got = c.pop_until(u64::MAX);
                assert_eq!(got, reference.pop().map(|Reverse(r)| r), "step {step}");
                now = got.map_or(now, |g| time_of(g.0));
            }
            assert_eq!(c.len(), reference.len());
        }
        while let Some(got) = c.pop_until(u64::MAX) {
            assert_eq!(Some(got), reference.pop().map(|Reverse(r)| r));
        }
        assert!(reference.is_empty());
    }

    /// Many events of one time (flows that start together): each push and pop in O(1), in order.
    #[test]
    fn events_of_one_time_keep_their_order() {
        let mut c = Calendar::new();
        for seq in 0..200_000u128 {
            c.push((7u128 << 64) | seq, seq);
        }
        for seq in 0..200_000u128 {
            assert_eq!(c.pop_until(u64::MAX).map(|e| e.1), Some(seq));
        }
    }

    #[test]
    fn leaves_what_is_due_after_the_end() {
        let mut c = Calendar::new();
        c.push(5u128 << 64, 'a');
        c.push(9u128 << 64, 'b');
        assert_eq!(c.pop_until(6), Some((5u128 << 64, 'a')));
        assert_eq!(c.pop_until(6), None);
        assert_eq!(c.len(), 1);
    }
}
