//! Transfer sizes: a fixed number of packets, or Pareto-distributed bytes (rand_distr's `Pareto`
//! with scale x_m = mean (shape - 1) / shape, so that its mean is `mean_bytes`). A transfer of B
//! bytes sends ceil(B / pkt_bytes) packets (at least one): packets are all pkt_bytes long.

use rand::Rng;
use rand_distr::{Distribution, Pareto};

#[derive(Clone, Debug)]
pub enum SizeDist {
    FixedPkts(i64),
    Pareto { mean_bytes: f64, shape: f64, dist: Pareto<f64> },
}

impl SizeDist {
    /// Pareto sizes of mean `mean_bytes` (> 0) and `shape` (> 1, for a finite mean).
    pub fn pareto(mean_bytes: f64, shape: f64) -> Self {
        let scale = mean_bytes * (shape - 1.0) / shape;
        SizeDist::Pareto { mean_bytes, shape, dist: Pareto::new(scale, shape).expect("scale > 0, shape > 1") }
    }

    /// One transfer's size in packets. The fixed size draws nothing (so that the flat short flows,
    /// its special case, keep their random streams).
    pub fn sample_pkts<R: Rng>(&self, rng: &mut R, pkt_bytes: u16) -> i64 {
        match self {
            SizeDist::FixedPkts(n) => *n,
            SizeDist::Pareto { dist, .. } => bytes_to_pkts(dist.sample(rng), pkt_bytes),
        }
    }

    /// The mean transfer size in packets, as `sample_pkts` rounds: for Pareto sizes
    /// E[ceil(X / p)] = sum over k >= 0 of P(X > k p), the terms with k p >= x_m being
    /// (x_m / (k p))^shape. The sum is taken to 2^20 terms, and the rest as its integral with the
    /// Euler-Maclaurin half-term (relative error below 1e-6 for shapes above 1.05).
    pub fn mean_pkts(&self, pkt_bytes: u16) -> f64 {
        match self {
            SizeDist::FixedPkts(n) => *n as f64,
            SizeDist::Pareto { mean_bytes, shape, .. } => {
                let (p, a) = (pkt_bytes as f64, *shape);
                let xm = mean_bytes * (a - 1.0) / a;
                let tail = |k: f64| (xm / (k * p)).powf(a);
                let first = (xm / p).ceil().max(1.0) as u64; // terms below are P = 1
                let n: u64 = first + (1 << 20);
                let mut sum = first as f64;
                for k in first..n {
                    sum += tail(k as f64).min(1.0);
                }
                let nf = n as f64;
                sum + tail(nf) * nf / (a - 1.0) + 0.5 * tail(nf)
            }
        }
    }
}

/// Packets of a transfer of `bytes`.
pub fn bytes_to_pkts(bytes: f64, pkt_bytes: u16) -> i64 {
    ((bytes / pkt_bytes as f64).ceil() as i64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Stream};

    #[test]
    fn pareto_draws_have_the_configured_law() {
        let d = SizeDist::pareto(10_000.0, 1.2);
        let SizeDist::Pareto { dist, .. } = &d else { unreachable!() };
        let mut rng = stream(1, Stream::Source, 9);
        let mut xs: Vec<f64> = (0..200_000).map(|_| dist.sample(&mut rng)).collect();
        xs.sort_by(f64::total_cmp);
        let xm = 10_000.0 * 0.2 / 1.2;
        for q in [0.5, 0.9, 0.99] {
            let want = xm / (1.0f64 - q).powf(1.0 / 1.2);
            let got = xs[(q * xs.len() as f64) as usize];
            assert!((got / want - 1.0).abs() < 0.03, "q{q}: {got} vs {want}");
        }
    }

    #[test]
    fn mean_packets_counts_the_rounding_up() {
        // Fixed: the count itself. Pareto of mean 10 KB in 1000-byte packets: about half a packet
        // more than 10, checked against a large sample at shape 2.5 (finite variance).
        assert_eq!(SizeDist::FixedPkts(14).mean_pkts(1000), 14.0);
        let d = SizeDist::pareto(10_000.0, 2.5);
        let m = d.mean_pkts(1000);
        let mut rng = stream(3, Stream::Source, 1);
        let n = 400_000;
        let sample = (0..n).map(|_| d.sample_pkts(&mut rng, 1000) as f64).sum::<f64>() / n as f64;
        assert!((m / sample - 1.0).abs() < 0.01, "{m} vs {sample}");
        assert!(m > 10.2 && m < 10.8, "{m}");
    }
}
