//! Sets of packets as sorted, disjoint [start, end) ranges of sequence numbers: the SACK
//! scoreboard's, the rate estimator's and RACK's marks. Below both `recovery/` and `rate.rs`, so
//! that neither reaches into the other. Details: docs/tcp.md.

/// Adds [start, end) to sorted, disjoint, non-adjacent ranges, merging it with those it touches
/// (the SACK scoreboard's and the rate estimator's sets of SACKed packets).
pub fn add_range(ranges: &mut Vec<(i64, i64)>, block: (i64, i64)) {
    let (lo, hi) = touching(ranges, block);
    add_range_at(ranges, lo, hi, block);
}

/// The first of `ranges` (sorted, disjoint) that ends above `x`: `partition_point(|r| r.1 <= x)`,
/// without a search when it is the first or none (most calls: the holes and marks an ACK
/// touches lie at one end of the window).
#[inline]
pub fn first_ending_above(ranges: &[(i64, i64)], x: i64) -> usize {
    match (ranges.first(), ranges.last()) {
        (Some(first), _) if first.1 > x => 0,
        (Some(_), Some(last)) if last.1 > x => ranges.partition_point(|r| r.1 <= x),
        _ => ranges.len(),
    }
}

/// Tests' random numbers: `rand(n)` in [0, n), from a 64-bit LCG seeded with `seed` (no random
/// crate needed).
#[cfg(test)]
pub fn lcg(seed: u64) -> impl FnMut(i64) -> i64 {
    let mut x = seed;
    move |n| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((x >> 33) % n as u64) as i64
    }
}

/// Removes [start, end) from sorted, disjoint ranges, cutting those it overlaps (RACK's marks).
pub fn remove_range(ranges: &mut Vec<(i64, i64)>, (start, end): (i64, i64)) {
    let lo = first_ending_above(ranges, start);
    let hi = lo + ranges[lo..].partition_point(|b| b.0 < end);
    if lo == hi {
        return;
    }
    let (first, last) = (ranges[lo], ranges[hi - 1]);
    let left = (first.0 < start).then_some((first.0, start));
    let right = (last.1 > end).then_some((end, last.1));
    ranges.splice(lo..hi, left.into_iter().chain(right));
}

/// `ranges[lo..hi]`: the ranges [start, end) overlaps or touches.
pub fn touching(ranges: &[(i64, i64)], (start, end): (i64, i64)) -> (usize, usize) {
    let n = ranges.len();
    if let Some(&(_, e)) = ranges.last().filter(|r| start >= r.0) {
        // Most often the block grows the highest range or lies above it: no search.
        return (if start <= e { n - 1 } else { n }, n);
    }
    let lo = ranges.partition_point(|b| b.1 < start);
    (lo, lo + ranges[lo..].partition_point(|b| b.0 <= end))
}

/// `add_range` with `touching`'s answer already known.
pub fn add_range_at(ranges: &mut Vec<(i64, i64)>, lo: usize, hi: usize, (start, end): (i64, i64)) {
    if lo == hi {
        ranges.insert(lo, (start, end));
    } else {
        let merged = (start.min(ranges[lo].0), end.max(ranges[hi - 1].1));
        if hi == lo + 1 {
            ranges[lo] = merged; // most often one range grown at an end
        } else {
            ranges.splice(lo..hi, [merged]);
        }
    }
}

/// `add_range`, first pushing onto `newly` the parts of [start, end) not held before, in order
/// (the rate estimator's newly delivered packets), from the same two searches.
pub fn add_range_reporting(ranges: &mut Vec<(i64, i64)>, block: (i64, i64), newly: &mut Vec<(i64, i64)>) {
    let (lo, hi) = touching(ranges, block);
    gaps(&ranges[lo..hi], block.0, block.1, newly);
    add_range_at(ranges, lo, hi, block);
}

/// The parts of [lo, hi) not covered by `set` (sorted, disjoint [start, end) ranges).
pub fn gaps(set: &[(i64, i64)], lo: i64, hi: i64, out: &mut Vec<(i64, i64)>) {
    let mut s = lo;
    let first = first_ending_above(set, lo); // those before end at or below lo
    for &(a, b) in &set[first..] {
        if b <= s {
            continue;
        }
        if a >= hi {
            break;
        }
        if a > s {
            out.push((s, a));
        }
        s = s.max(b);
    }
    if s < hi {
        out.push((s, hi));
    }
}

/// Whether one range of `ranges` (sorted, disjoint) holds all of [start, end): most SACK blocks
/// are reported again unchanged, and then there is nothing to add.
pub fn covers(ranges: &[(i64, i64)], start: i64, end: i64) -> bool {
    if let Some(&(s, e)) = ranges.last().filter(|r| start >= r.0) {
        return s <= start && end <= e; // most often the newest block, the highest: no search
    }
    let i = ranges.partition_point(|r| r.1 < end);
    ranges.get(i).is_some_and(|r| r.0 <= start)
}

/// The SACK blocks of the last ACK as sent. A SACK set loses only what the cumulative ACK passes
/// (or all of it, which forgets these too), so a block reported again, as most are, is held and
/// needs no search.
#[derive(Clone, Copy, Debug)]
pub struct LastBlocks {
    /// Unused slots hold `NONE`, which no block equals.
    blocks: [(i64, i64); 4],
}

const NONE: (i64, i64) = (i64::MIN, i64::MIN);

impl Default for LastBlocks {
    fn default() -> Self {
        Self { blocks: [NONE; 4] }
    }
}

impl LastBlocks {
    /// All four slots compared, without branches: an early exit mispredicted on most ACKs.
    pub fn has(&self, block: (i64, i64)) -> bool {
        self.blocks.iter().fold(false, |hit, &b| hit | (b == block))
    }

    pub fn set(&mut self, blocks: &[(i64, i64)]) {
        for (i, slot) in self.blocks.iter_mut().enumerate() {
            *slot = blocks.get(i).copied().unwrap_or(NONE);
        }
    }

    /// Slot `i` (the `i`th block given to `set`) no longer counts as held.
    pub fn forget(&mut self, i: usize) {
        if let Some(slot) = self.blocks.get_mut(i) {
            *slot = NONE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `first_ending_above` is `partition_point(|r| r.1 <= x)`, shortcuts and all, over random
    /// ranges and points below, inside, between and above them.
    #[test]
    fn first_ending_above_is_the_partition_point() {
        let mut rand = lcg(9);
        let mut ranges = vec![];
        for step in 0..5000 {
            if step % 60 == 0 {
                ranges.clear();
            }
            let at = rand(240) - 20;
            assert_eq!(
                first_ending_above(&ranges, at),
                ranges.partition_point(|r: &(i64, i64)| r.1 <= at),
                "{at} in {ranges:?}"
            );
            let start = rand(200);
            add_range(&mut ranges, (start, start + 1 + rand(5)));
        }
    }

    /// `touching`'s shortcut for blocks at or above the highest range gives what its two
    /// searches give, over random scoreboards and blocks.
    #[test]
    fn touching_without_a_search_matches_the_search() {
        let mut rand = lcg(3);
        let mut ranges = vec![];
        for step in 0..5000 {
            if step % 100 == 0 {
                ranges.clear();
            }
            let start = rand(200);
            let block = (start, start + 1 + rand(8));
            let lo = ranges.partition_point(|b: &(i64, i64)| b.1 < block.0);
            let want = (lo, lo + ranges[lo..].partition_point(|b| b.0 <= block.1));
            assert_eq!(touching(&ranges, block), want, "step {step}: {block:?} in {ranges:?}");
            add_range(&mut ranges, block);
        }
    }

    /// Adding a block and reporting its new packets in one pass gives what `gaps` then
    /// `add_range` gave, in the same order, over random blocks (touching, overlapping, inside).
    #[test]
    fn add_range_reporting_matches_gaps_then_add() {
        let mut rand = lcg(11); // the tests' LCG: no random crate needed
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for step in 0..3000 {
            if step % 200 == 0 {
                (a, b) = (Vec::new(), Vec::new());
            }
            let start = rand(300);
            let block = (start, start + 1 + rand(12));
            let (mut want, mut got) = (Vec::new(), Vec::new());
            gaps(&a, block.0, block.1, &mut want);
            add_range(&mut a, block);
            add_range_reporting(&mut b, block, &mut got);
            assert_eq!(got, want, "step {step}, block {block:?}");
            assert_eq!(a, b, "step {step}");
        }
    }
}
