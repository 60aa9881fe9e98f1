//! Loss recovery (`tcp.recovery`): after three duplicate ACKs (reno, newreno, sack), or from a
//! scoreboard (linux, with `scoreboard.rs`); one file each, registered in `tcp::RECOVERIES`.

pub mod linux;
pub mod newreno;
pub mod reno;
pub mod sack;
pub mod scoreboard;
