//! Random streams. Each component gets its own stream derived from (run seed, stream kind, id),
//! so adding a flow does not perturb the randomness of the others, and a run is bit-identical
//! for a given seed on any machine (PCG64-MCG is portable and fully specified).

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

pub type SimRng = Pcg64Mcg;

#[derive(Clone, Copy)]
#[repr(u64)]
pub enum Stream {
    /// Flow start times and per-flow RTT draws.
    Topology = 1,
    /// A Poisson sender's transmission gaps.
    Sender = 2,
    /// An open-loop source's inter-arrival times.
    Source = 3,
    /// Short-flow arrival times and RTT draws.
    ShortArrivals = 4,
    /// A short flow's sender (Poisson release gaps), by arrival index.
    ShortSender = 5,
    /// A traffic group's transfer arrivals, RTTs and sizes, by group.
    TrafficArrivals = 6,
    /// A traffic group's transfer senders, by (group << 40) + arrival index.
    TrafficSender = 7,
    /// An http group's sessions (start times), by group.
    HttpSessions = 8,
    /// One http session's pages and objects, by (group << 40) + session index.
    HttpSession = 9,
    /// A queue discipline's random draws (RED, PIE), by topology link.
    Queue = 10,
}

/// SplitMix64 finaliser: decorrelates nearby (seed, kind, id) triples.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stream of its own for a component built beside another from one stream (a sender's window
/// law beside its release), which leaves that stream's draws as they were.
pub fn derived(rng: &SimRng, salt: u64) -> SimRng {
    use rand::RngCore;
    SimRng::seed_from_u64(mix(rng.clone().next_u64() ^ salt))
}

pub fn stream(seed: u64, kind: Stream, id: u64) -> SimRng {
    let s = mix(mix(mix(seed) ^ (kind as u64)) ^ id);
    SimRng::seed_from_u64(s)
}
