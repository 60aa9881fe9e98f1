//! `udp`: open-loop packet streams (no congestion control): `flows` streams of `rate_mbps` each,
//! constant bit rate (ABS section 4.6's 0.1 Mb/s CBR flows) or Poisson. The flat `poisson_mbps`
//! and `cbr_mbps` sources are this kind with one flow on the default route.

use super::TrafficEntry;
use crate::params::{int_in, normalize, one_of, opt, positive, VariantDef, MAX_FLOWS};

fn patterns() -> Vec<&'static str> {
    vec!["cbr", "poisson"]
}

crate::params! {
    /// Constant-bit-rate or Poisson packet streams.
    pub struct UdpParams as "Udp" {
        /// Streams in the group.
        flows: i64 = 1, unit "count", check int_in(1, MAX_FLOWS);
        /// Rate of each stream.
        rate_mbps: f64 = 0.1, unit "Mb/s", check positive(1e7);
        /// cbr (evenly spaced packets) or poisson (exponential gaps).
        pattern: String = "cbr".to_string(), unit "", check one_of(patterns);
        /// Packet size; null = pkt_bytes.
        pkt_bytes: Option<i64> = None, unit "bytes", check opt(int_in(1, 65_535));
    }
}

pub const ENTRY: TrafficEntry = TrafficEntry {
    def: VariantDef {
        name: "udp",
        doc: "constant-bit-rate or Poisson packet streams (no congestion control)",
        params: UdpParams::specs,
        keys: UdpParams::KEYS,
        normalize: normalize::<UdpParams>,
    },
    tcp: false,
};
