//! Kathleen Nichols' windowed max filter, as Linux's `lib/win_minmax.c`: the best of the samples
//! within a window (of rounds, for BBR's bandwidth) from three kept samples, the best, the second
//! best of a later quarter-window and the third of a later half. Hand-written: no crate carries
//! this estimator, and BBR's fidelity depends on its exact aging. Details: docs/tcp.md,
//! `tcp/minmax.rs`.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    pub fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Linux `minmax_running_max`: a new sample `v` at time `t` (here, a round count), window `win`.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t - self.s[2].t > win {
            return self.reset(t, v); // a new best, or nothing left in the window
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Linux `minmax_subwin_update`: ages the kept samples as the window passes.
    fn subwin_update(&mut self, win: u64, val: Sample) -> f64 {
        let dt = val.t - self.s[0].t;
        if dt > win {
            // The best expired: the second and third move up, and again if the second expired too.
            self.s = [self.s[1], self.s[2], val];
            if val.t - self.s[0].t > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The max of the last `win` rounds: a peak holds for the window, then a lower level takes over.
    #[test]
    fn a_peak_holds_for_the_window_then_expires() {
        let mut m = WindowedMax::default();
        m.reset(0, 0.0);
        for t in 0..5 {
            m.update(10, t, 100.0);
        }
        m.update(10, 5, 300.0);
        for t in 6..=15 {
            assert_eq!(m.update(10, t, 120.0), 300.0, "round {t}: the peak is within 10 rounds");
        }
        assert_eq!(m.update(10, 16, 120.0), 120.0, "the peak of round 5 expired");
    }
}
