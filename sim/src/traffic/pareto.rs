//! `pareto`: TCP transfers as a Poisson process at `load_mbps`, Pareto or fixed sizes (Appenzeller
//! et al. section 5.1.4). Details: docs/engine.md, `traffic/pareto.rs`.

use super::sizes::SizeDist;
use super::TrafficEntry;
use crate::params::{int_in, normalize, one_of, positive, ConfigError, Value, VariantDef};
use crate::rng::{stream, SimRng, Stream};
use crate::time::{from_secs, Time};
use rand::Rng;
use rand_distr::{Distribution, Exp1};

fn size_kinds() -> Vec<&'static str> {
    vec!["pareto", "fixed"]
}

crate::params! {
    /// Poisson arrivals of TCP transfers.
    pub struct ParetoParams as "Pareto" {
        /// Offered load: arrival rate x mean transfer size (as sent, in whole packets).
        load_mbps: f64 = 1.0, unit "Mb/s", check positive(1e7);
        /// Size law: pareto (mean_bytes, shape) or fixed (size_pkts).
        size: String = "pareto".to_string(), unit "", check one_of(size_kinds);
        /// Mean transfer size of the Pareto law.
        mean_bytes: f64 = 100_000.0, unit "bytes", check positive(1e12);
        /// Shape of the Pareto law (> 1: at or below 1 the mean is infinite).
        shape: f64 = 1.2, unit "1", check positive(1e3);
        /// Size of every transfer when size is fixed.
        size_pkts: i64 = 14, unit "pkts", check int_in(1, 1 << 30);
    }
}

pub const ENTRY: TrafficEntry = TrafficEntry {
    def: VariantDef {
        name: "pareto",
        doc: "TCP transfers of Pareto (or fixed) sizes, Poisson arrivals at an offered load",
        params: ParetoParams::specs,
        keys: ParetoParams::KEYS,
        normalize: normalize::<ParetoParams>,
    },
    tcp: true,
};

impl ParetoParams {
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.size == "pareto" && self.shape <= 1.0 {
            return Err(ConfigError::at(
                "shape",
                format!(
                    "must be > 1 (a Pareto law of shape <= 1 has an infinite \
                                                          mean), got {}",
                    self.shape
                ),
            ));
        }
        Ok(())
    }

    pub fn sizes(&self) -> SizeDist {
        match self.size.as_str() {
            "fixed" => SizeDist::FixedPkts(self.size_pkts),
            _ => SizeDist::pareto(self.mean_bytes, self.shape),
        }
    }
}

/// The parameters as a `traffic` group value (for the flat shorthand and tests).
pub fn fixed_value(load_mbps: f64, size_pkts: i64) -> Value {
    Value::map(vec![
        ("kind", Value::str("pareto")),
        ("load_mbps", Value::Float(load_mbps)),
        ("size", Value::str("fixed")),
        ("size_pkts", Value::Int(size_pkts)),
    ])
}

/// Poisson arrivals of transfers (a `pareto` group, or the flat short flows): gaps, RTTs (uniform
/// in rtt_ms +/- rtt_spread_ms / 2, as the long flows') and sizes from one stream; each
/// transfer's sender (Poisson release gaps) from a stream of its own, by arrival index.
pub struct PoissonTransfers {
    mean_gap_s: f64,
    sizes: SizeDist,
    rtt_ms: f64,
    rtt_spread_ms: f64,
    rng: SimRng,
    seed: u64,
    sender_stream: Stream,
    /// Added to the arrival index to name a sender's stream (groups' ranges do not overlap).
    sender_base: u64,
    arrived: u64,
    pkt_bytes: u16,
}

/// A transfer that arrives now.
pub struct Arrival {
    pub rtt_s: f64,
    pub size_pkts: i64,
    pub size_bytes: f64,
    pub sender_rng: SimRng,
}

impl PoissonTransfers {
    /// The flat short flows: `short_flow_pkts`-packet transfers offering `short_mbps`, with the
    /// random streams they always had.
    pub fn flat(short_mbps: f64, size_pkts: i64, pkt_bytes: u16, rtt_ms: f64, rtt_spread_ms: f64, seed: u64) -> Self {
        let rng = stream(seed, Stream::ShortArrivals, 0);
        Self::new(
            short_mbps,
            SizeDist::FixedPkts(size_pkts),
            pkt_bytes,
            (rtt_ms, rtt_spread_ms),
            seed,
            rng,
            Stream::ShortSender,
            0,
        )
    }

    /// Traffic group `group`'s transfers.
    pub fn group(p: &ParetoParams, group: usize, pkt_bytes: u16, rtt: (f64, f64), seed: u64) -> Self {
        let rng = stream(seed, Stream::TrafficArrivals, group as u64);
        Self::new(p.load_mbps, p.sizes(), pkt_bytes, rtt, seed, rng, Stream::TrafficSender, (group as u64) << 40)
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        load_mbps: f64,
        sizes: SizeDist,
        pkt_bytes: u16,
        (rtt_ms, rtt_spread_ms): (f64, f64),
        seed: u64,
        rng: SimRng,
        sender_stream: Stream,
        sender_base: u64,
    ) -> Self {
        let mean_bits = sizes.mean_pkts(pkt_bytes) * pkt_bytes as f64 * 8.0;
        Self {
            mean_gap_s: mean_bits / (load_mbps * 1e6),
            sizes,
            rtt_ms,
            rtt_spread_ms,
            rng,
            seed,
            sender_stream,
            sender_base,
            arrived: 0,
            pkt_bytes,
        }
    }

    /// Time to the next arrival.
    pub fn next_gap(&mut self) -> Time {
        let e: f64 = Exp1.sample(&mut self.rng);
        from_secs(e * self.mean_gap_s).max(1)
    }

    /// A transfer arrives now: its RTT, size and sender stream.
    pub fn arrive(&mut self) -> Arrival {
        let u: f64 = self.rng.random();
        let rtt_s = (self.rtt_ms + (u - 0.5) * self.rtt_spread_ms) / 1000.0;
        let size_pkts = self.sizes.sample_pkts(&mut self.rng, self.pkt_bytes);
        let size_bytes = size_pkts as f64 * self.pkt_bytes as f64;
        let sender_rng = stream(self.seed, self.sender_stream, self.sender_base + self.arrived);
        self.arrived += 1;
        Arrival { rtt_s, size_pkts, size_bytes, sender_rng }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrival_rate_offers_the_configured_load() {
        // 8 Mb/s of 10-packet, 1000-byte flows = 100 flows/s.
        let mut s = PoissonTransfers::flat(8.0, 10, 1000, 100.0, 0.0, 3);
        let n = 20_000;
        let total: Time = (0..n).map(|_| s.next_gap()).sum();
        let rate = n as f64 / crate::time::to_secs(total);
        assert!((rate - 100.0).abs() < 3.0, "rate {rate}");
    }
}
