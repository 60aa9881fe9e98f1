//! `bscl`: Buffer Sizing for Congested Links (Dhamdhere, Jiang and Dovrolis 2005) as the ABS
//! paper states it (section 5, eqs. 17-18). Details: docs/engine.md, `policy/bscl.rs`.

use super::{static_rule, LinkContext, PolicyEntry};
use crate::params::{Check, VariantDef, normalize, opt, positive};

fn open_unit() -> Check<f64> {
    Check::new("a number in (0, 1)", |v: &f64| (!(*v > 0.0 && *v < 1.0)).then(|| format!("must be in (0, 1), got {v}")))
}

crate::params! {
    /// b = max(eq. 17, eq. 18).
    pub struct BsclParams as "Bscl" {
        /// Loss synchronization factor: a congestion event drops alpha x N packets.
        alpha: f64 = 0.6, unit "1", check open_unit();
        /// p*: the loss rate eq. 18 sizes for.
        target_loss: f64 = 0.02, unit "1", check open_unit();
        /// Size for this RTT instead of the harmonic mean of the flows' RTTs (a rule of thumb
        /// applied to a link's nominal RTT); null: the flows' own.
        rtt_ms: Option<f64> = None, unit "ms", check opt(positive(1e5));
    }
}

pub const ENTRY: PolicyEntry = PolicyEntry {
    def: VariantDef {
        name: "bscl",
        doc: "BSCL (Dhamdhere et al. 2005): the larger of its utilization and loss rules, ABS eqs. 17-18",
        params: BsclParams::specs,
        keys: BsclParams::KEYS,
        normalize: normalize::<BsclParams>,
    },
    adaptive: false,
    make: |v, link| static_rule(v, link, pkts),
};

/// p(N) = 1 - (1 - 1/N)^(alpha N).
pub fn loss_spread(alpha: f64, n: f64) -> f64 {
    1.0 - (1.0 - 1.0 / n).powf(alpha * n)
}

pub fn pkts(p: &BsclParams, link: &LinkContext) -> f64 {
    let link = &link.assuming_rtt(p.rtt_ms);
    let n = link.flows();
    let bdp = link.pkts_in(link.rtt_harmonic_s());
    let spread = loss_spread(p.alpha, n);
    let utilization_rule = (spread * bdp - 2.0 * n * (1.0 - spread)) / (2.0 - spread); // (17)
    let loss_rule = 0.87 / p.target_loss.sqrt() * n - bdp; // (18)
    utilization_rule.max(loss_rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bscl_is_the_larger_of_eqs_17_and_18() {
        // ABS Table 3's N = 16, C = 1024 Mb/s row: R_e for RTTs uniform in [30, 62] ms.
        let rtts: Vec<f64> = (0..16).map(|i| (30.0 + 32.0 * (i as f64 + 0.5) / 16.0) / 1e3).collect();
        let link = LinkContext { rate_bps: 1024e6, pkt_bytes: 1000, rtts_s: rtts, default_rtt_s: 0.1, wmax_pkts: 64.0 };
        let p = BsclParams { alpha: 0.6, target_loss: 0.02, rtt_ms: None };
        let spread = loss_spread(0.6, 16.0);
        assert!((spread - (1.0 - (15.0f64 / 16.0).powf(9.6))).abs() < 1e-15);
        let bdp = link.pkts_in(link.rtt_harmonic_s());
        assert_eq!(pkts(&p, &link), (spread * bdp - 32.0 * (1.0 - spread)) / (2.0 - spread));
        // A slow link with many flows: the loss rule (18) binds.
        let slow = LinkContext { rate_bps: 2e6, ..link };
        assert_eq!(pkts(&p, &slow), 0.87 / 0.02f64.sqrt() * 16.0 - slow.pkts_in(slow.rtt_harmonic_s()));
        assert!((loss_spread(0.6, 1e6) - (1.0 - (-0.6f64).exp())).abs() < 1e-6);
    }
}
