//! HyStart++ (RFC 9406): slow start that watches each round's minimum RTT, and on a rise leaves
//! for Conservative Slow Start (CSS, a quarter of the growth) for up to 5 rounds before congestion
//! avoidance, or goes back to slow start if the rise was spurious. A component a window law holds;
//! `cubic_rfc9438` uses it in the initial slow start, as section 4.3 recommends.
//! Details: docs/tcp.md, `tcp/hystart.rs`.

/// Section 4.3's constants; times in seconds, windows in packets.
const MIN_RTT_THRESH_S: f64 = 0.004;
const MAX_RTT_THRESH_S: f64 = 0.016;
const MIN_RTT_DIVISOR: f64 = 8.0;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: f64 = 4.0;
const CSS_ROUNDS: u32 = 5;
/// L, the most one ACK may grow the window by, for a sender that does not pace.
const L_PKTS: f64 = 8.0;

/// What one ACK in slow start does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// Packets to add to cwnd.
    pub grow_pkts: f64,
    /// CSS has run its rounds: set ssthresh = cwnd (after the growth) and leave slow start.
    pub to_avoidance: bool,
}

#[derive(Clone, Debug)]
pub struct HyStartPp {
    /// The round ends when the cumulative ACK reaches this packet (RFC 9406 windowEnd, SND.NXT
    /// at the round's start, less one as our sequences count packets); None: start a round.
    window_end: Option<i64>,
    last_round_min_rtt_s: f64,
    current_round_min_rtt_s: f64,
    rtt_samples: u32,
    /// In CSS, the minimum RTT that made it leave slow start; infinite in slow start.
    css_baseline_min_rtt_s: f64,
    css_rounds: u32,
}

impl Default for HyStartPp {
    fn default() -> Self {
        Self {
            window_end: None,
            last_round_min_rtt_s: f64::INFINITY,
            current_round_min_rtt_s: f64::INFINITY,
            rtt_samples: 0,
            css_baseline_min_rtt_s: f64::INFINITY,
            css_rounds: 0,
        }
    }
}

impl HyStartPp {
    pub fn in_css(&self) -> bool {
        self.css_baseline_min_rtt_s.is_finite()
    }

    /// An ACK of `acked_pkts` new packets in slow start or CSS, with its RTT sample if it gave
    /// one; `highest_ack` is the cumulative ACK before it, `maxseq` the highest packet sent.
    pub fn on_ack(&mut self, highest_ack: i64, maxseq: i64, acked_pkts: i64, rtt_s: Option<f64>) -> Step {
        if self.window_end.is_none() {
            self.window_end = Some(maxseq);
            self.last_round_min_rtt_s = self.current_round_min_rtt_s;
            self.current_round_min_rtt_s = f64::INFINITY;
            self.rtt_samples = 0;
        }
        let mut grow_pkts = (acked_pkts as f64).min(L_PKTS);
        if self.in_css() {
            grow_pkts /= CSS_GROWTH_DIVISOR;
        }
        if let Some(rtt) = rtt_s {
            self.current_round_min_rtt_s = self.current_round_min_rtt_s.min(rtt);
            self.rtt_samples += 1;
        }
        let sampled = self.rtt_samples >= N_RTT_SAMPLE;
        if self.in_css() {
            if sampled && self.current_round_min_rtt_s < self.css_baseline_min_rtt_s {
                self.css_baseline_min_rtt_s = f64::INFINITY; // a spurious exit: back to slow start
            }
        } else if sampled && self.current_round_min_rtt_s.is_finite() && self.last_round_min_rtt_s.is_finite() {
            let thresh = (self.last_round_min_rtt_s / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_S, MAX_RTT_THRESH_S);
            if self.current_round_min_rtt_s >= self.last_round_min_rtt_s + thresh {
                self.css_baseline_min_rtt_s = self.current_round_min_rtt_s;
                self.css_rounds = 0;
            }
        }
        let mut to_avoidance = false;
        if self.window_end.is_some_and(|end| highest_ack + acked_pkts >= end) {
            self.window_end = None;
            if self.in_css() {
                // The round in which CSS began counts as its first, as neqo's (Firefox) does.
                self.css_rounds += 1;
                to_avoidance = self.css_rounds >= CSS_ROUNDS;
            }
        }
        Step { grow_pkts, to_avoidance }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One round of `acks` ACKs of one packet each, all with `rtt_s`, from cumulative ACK `una`
    /// with `out` packets outstanding; returns the growth and whether CSS ended.
    fn round(h: &mut HyStartPp, una: &mut i64, out: i64, acks: i64, rtt_s: f64) -> (f64, bool) {
        let maxseq = *una + out;
        let (mut grown, mut done) = (0.0, false);
        for _ in 0..acks {
            let s = h.on_ack(*una, maxseq, 1, Some(rtt_s));
            *una += 1;
            grown += s.grow_pkts;
            done |= s.to_avoidance;
        }
        (grown, done)
    }

    /// RFC 9406 section 4.2: a round whose minimum RTT is RttThresh above the last one's (here
    /// max(4 ms, min(40 / 8, 16)) = 5 ms) moves to CSS, which grows a quarter as fast and ends in
    /// congestion avoidance after CSS_ROUNDS rounds.
    #[test]
    fn a_delay_rise_enters_css_and_five_rounds_end_slow_start() {
        let mut h = HyStartPp::default();
        let mut una = -1;
        assert_eq!(round(&mut h, &mut una, 16, 16, 0.040), (16.0, false));
        assert_eq!(round(&mut h, &mut una, 16, 16, 0.0449), (16.0, false), "4.9 ms: below RttThresh");
        assert!(!h.in_css());
        // RttThresh is now 44.9 / 8 = 5.6 ms: a minimum of 51 ms is a rise.
        let (grown, done) = round(&mut h, &mut una, 16, 16, 0.051);
        assert!(h.in_css() && !done);
        // Eight samples at full growth, then CSS's quarter for the other eight.
        assert_eq!(grown, 8.0 + 8.0 / 4.0);
        for k in 2..=5 {
            let (grown, done) = round(&mut h, &mut una, 16, 16, 0.051);
            assert_eq!(grown, 4.0);
            assert_eq!(done, k == 5, "round {k} of CSS");
        }
    }

    /// A CSS round whose minimum RTT falls below the baseline was a spurious exit: slow start
    /// resumes, at full growth.
    #[test]
    fn a_lower_rtt_in_css_resumes_slow_start() {
        let mut h = HyStartPp::default();
        let mut una = -1;
        round(&mut h, &mut una, 16, 16, 0.040);
        round(&mut h, &mut una, 16, 16, 0.050);
        assert!(h.in_css());
        let (grown, _) = round(&mut h, &mut una, 16, 16, 0.045);
        assert!(!h.in_css());
        assert_eq!(grown, 8.0 / 4.0 + 8.0, "a quarter until the 8th sample resumes slow start");
    }

    /// Fewer than N_RTT_SAMPLE samples in a round decide nothing; one ACK grows by at most L.
    #[test]
    fn few_samples_decide_nothing_and_growth_is_capped_at_l() {
        let mut h = HyStartPp::default();
        let mut una = -1;
        round(&mut h, &mut una, 4, 4, 0.040);
        round(&mut h, &mut una, 4, 4, 0.100);
        assert!(!h.in_css());
        assert_eq!(h.on_ack(una, una + 20, 20, None).grow_pkts, 8.0);
    }
}
