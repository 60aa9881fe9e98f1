//! Loss recovery after three duplicate ACKs (`tcp.recovery`): one file each, registered in
//! `tcp::RECOVERIES`.

pub mod linux;
pub mod newreno;
pub mod reno;
pub mod sack;
pub mod scoreboard;
