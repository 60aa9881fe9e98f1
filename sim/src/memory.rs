//! The engine's memory (issue 73): every allocation is counted (`cap`'s allocator, with no limit of
//! its own), and a run may be given a budget, what it may allocate beyond what is held when it
//! starts. The run stops with `OutOfMemory` at a checkpoint once it holds more than
//! `SOFT_SHARE` of it, and the flow tables, whose size the config sets, are reserved fallibly
//! against it, so that memory that runs out is an error Python raises as
//! MemoryError, not the abort of a failed allocation. Details: docs/engine.md, "Cost estimate".

use cap::Cap;
use std::alloc::System;
use std::cell::Cell;

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// The share of the budget at which a run stops at its next checkpoint: what it allocates
/// between two (2^18 events, 4,096 flows set up) must fit in the rest, and the process's address
/// space holds more than the bytes counted (the allocator's own overhead).
const SOFT_SHARE: f64 = 0.85;

thread_local! {
    /// What the run on this thread may allocate: the bytes held when it started and the budget
    /// beyond them (None: no budget). A run is one thread's; what other threads hold counts too.
    static BUDGET: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// What ran out: the bytes the run had grown by (with what it asked for), its budget, and what
/// it was doing.
#[derive(Debug, Clone)]
pub struct OutOfMemory {
    pub needed_bytes: usize,
    pub budget_bytes: usize,
    pub doing: &'static str,
}

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: usize| b as f64 / (1u64 << 20) as f64;
        write!(
            f,
            "{:.1} MB needed {}, over a budget of {:.1} MB",
            mb(self.needed_bytes),
            self.doing,
            mb(self.budget_bytes)
        )
    }
}

/// Bytes the engine holds now (every allocation of this process's Rust code).
pub fn allocated() -> usize {
    ALLOCATOR.allocated()
}

/// Gives this thread's next run a budget: `more` bytes beyond what is held now (None: none).
pub fn set_budget(more: Option<usize>) {
    BUDGET.set(more.map(|m| (allocated(), m)));
}

/// An error if the run, having grown by its bytes and asking `asking` more, passes the soft
/// share of its budget.
fn over(asking: usize, doing: &'static str) -> Result<(), OutOfMemory> {
    let Some((start, budget)) = BUDGET.get() else { return Ok(()) };
    let needed = allocated().saturating_sub(start).saturating_add(asking);
    if needed as f64 <= budget as f64 * SOFT_SHARE {
        return Ok(());
    }
    Err(OutOfMemory { needed_bytes: needed, budget_bytes: budget, doing })
}

/// A checkpoint: an error once the run has grown past its budget's soft share.
pub fn check(doing: &'static str) -> Result<(), OutOfMemory> {
    over(0, doing)
}

/// A vector for `n` items reserved at once, or an error if that would pass the budget or the
/// allocator refuses it (an address-space limit): for the tables whose size the config sets.
pub fn try_vec<T>(n: usize, doing: &'static str) -> Result<Vec<T>, OutOfMemory> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    over(bytes, doing)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| OutOfMemory {
        needed_bytes: bytes,
        budget_bytes: BUDGET.get().map_or(usize::MAX, |b| b.1),
        doing,
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget stops at its soft share: a reservation past it is an error, not an abort, and
    /// without a budget the same reservation goes through. (Other tests' threads only add to
    /// what is held, so every assertion here holds whatever they do.)
    #[test]
    fn a_budget_refuses_what_would_pass_it() {
        set_budget(Some(64 << 20));
        let e = try_vec::<u64>(16 << 20, "reserving").unwrap_err(); // 128 MB
        assert_eq!(e.doing, "reserving");
        let held = vec![1u8; 64 << 20];
        assert!(check("testing").is_err(), "64 MB more held, past a 54-MB soft share");
        drop(held);
        set_budget(None);
        assert_eq!(try_vec::<u64>(4 << 20, "reserving").unwrap().capacity(), 4 << 20);
        assert!(try_vec::<u64>(usize::MAX / 16, "reserving").is_err(), "the allocator refuses");
    }
}
