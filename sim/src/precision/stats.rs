//! Output analysis of one steady-state series (issue 57): MSER-5 warm-up truncation, batch means
//! grown until nearly independent, and Student's t interval. Pure functions of a series, tested
//! on synthetic ones of known mean. docs/precision.md.
//!
//! Sources: White, "An effective truncation heuristic for bias reduction in simulation output"
//! (1997) and White, Cobb and Spratt (2000) for MSER-5; Law and Carson, "A sequential procedure
//! for determining the length of a steady-state simulation" (1979), and Law and Kelton,
//! "Simulation Modeling and Analysis", ch. 9, for the batches. Student's t quantile: statrs.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// MSER's batches: 5 samples each.
const MSER_BATCH: usize = 5;
/// Law and Carson: the lag-1 correlation is judged on FINE_BATCHES batch means, the interval is
/// built on half as many, each twice as long (less correlated still). 60: with 40 the AR(1)
/// coverage test read 90-92%, with 60 and 100 93% (docs/precision.md).
pub const FINE_BATCHES: usize = 60;
pub const BATCHES: usize = FINE_BATCHES / 2;
/// The fine batches' lag-1 correlation below which the coarse ones are taken as independent.
pub const MAX_LAG1: f64 = 0.2;
/// The fewest samples a fine batch holds: shorter ones are noise, not a process.
pub const MIN_BATCH_SAMPLES: usize = 5;

/// One sample of a metric: (numerator, weight). A time average (utilization, the queue) weighs
/// each sample 1; a ratio of counts (loss = drops / arrivals, delay = waiting time / packets)
/// weighs it by its denominator. Every mean here is then a ratio of sums: the estimand of the
/// run's whole-window value. The mean of per-sample ratios is another one (a sample with few
/// arrivals counts as much as a busy one), 5% off a 3,000-s run's loss rate (docs/precision.md).
pub type Obs = (f64, f64);

/// The weighted mean of observations (0 when they weigh nothing: no arrivals, no loss).
pub fn ratio(obs: &[Obs]) -> f64 {
    let (num, den) = obs.iter().fold((0.0, 0.0), |(n, d), &(x, w)| (n + x, d + w));
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// A confidence interval: the mean, its half-width and the batches (or replications) behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub halfwidth: f64,
    pub batches: usize,
}

/// Student's t quantile: the `p` quantile with `dof` degrees of freedom.
pub fn t_quantile(p: f64, dof: f64) -> f64 {
    StudentsT::new(0.0, 1.0, dof).expect("positive degrees of freedom").inverse_cdf(p)
}

/// The t interval at `confidence` over independent values (replications, or batch means).
/// None under two values.
pub fn t_interval(values: &[f64], confidence: f64) -> Option<Interval> {
    let k = values.len();
    if k < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / k as f64;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (k - 1) as f64;
    let t = t_quantile(0.5 + confidence / 2.0, (k - 1) as f64);
    Some(Interval { mean, halfwidth: t * (var / k as f64).sqrt(), batches: k })
}

/// MSER-5's truncation point, in samples: batch the series by 5, and cut the d batches that
/// minimise the variance of those left over (n - d)^2; d is searched in the first half only (a
/// minimum later says "run longer", and is not taken).
pub fn mser5(series: &[Obs]) -> usize {
    let means: Vec<f64> = series.chunks_exact(MSER_BATCH).map(ratio).collect();
    let k = means.len();
    if k < 2 {
        return 0;
    }
    // Suffix sums of the batch means and their squares: each candidate's statistic in O(1).
    let (mut s, mut s2) = (vec![0.0; k + 1], vec![0.0; k + 1]);
    for i in (0..k).rev() {
        s[i] = s[i + 1] + means[i];
        s2[i] = s2[i + 1] + means[i] * means[i];
    }
    let stat = |d: usize| {
        let m = (k - d) as f64;
        (s2[d] - s[d] * s[d] / m).max(0.0) / (m * m)
    };
    let best = (0..=k / 2).min_by(|&a, &b| stat(a).total_cmp(&stat(b))).unwrap_or(0);
    best * MSER_BATCH
}

/// The means of `n` equal batches of the series (its first samples dropped when it does not
/// divide).
fn batch_means(series: &[Obs], n: usize) -> Vec<f64> {
    let size = series.len() / n;
    let tail = &series[series.len() - size * n..];
    tail.chunks_exact(size).map(ratio).collect()
}

/// Lag-1 autocorrelation of a sequence (0 for a constant one).
pub fn lag1(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    if var <= 0.0 {
        return 0.0;
    }
    x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum::<f64>() / var
}

/// The batch-means interval of a series past its warm-up, or None while its batches are too
/// short to be independent: FINE_BATCHES batches of at least MIN_BATCH_SAMPLES whose lag-1
/// correlation is under MAX_LAG1, then BATCHES of twice the length for the interval. As the
/// run grows its batches grow with it (Law and Carson's procedure). The interval is about the
/// series' weighted mean, its half-width the batch ratios' (Law and Kelton's batch means of a
/// ratio).
pub fn batch_interval(series: &[Obs], confidence: f64) -> Option<Interval> {
    if series.len() < FINE_BATCHES * MIN_BATCH_SAMPLES {
        return None;
    }
    if lag1(&batch_means(series, FINE_BATCHES)) >= MAX_LAG1 {
        return None;
    }
    let ci = t_interval(&batch_means(series, BATCHES), confidence)?;
    Some(Interval { mean: ratio(series), ..ci })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, StandardNormal};

    fn unit(xs: &[f64]) -> Vec<Obs> {
        xs.iter().map(|&x| (x, 1.0)).collect()
    }

    fn ar1(n: usize, phi: f64, mean: f64, start: f64, seed: u64) -> Vec<Obs> {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let mut x = start;
        (0..n)
            .map(|_| {
                let e: f64 = StandardNormal.sample(&mut rng);
                x = mean + phi * (x - mean) + e;
                (x, 1.0)
            })
            .collect()
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!((t_quantile(0.975, 19.0) - 2.093).abs() < 1e-3);
        assert!((t_quantile(0.975, 1e6) - 1.960).abs() < 1e-3);
        assert!((t_quantile(0.95, 4.0) - 2.132).abs() < 1e-3);
    }

    #[test]
    fn mser_cuts_a_transient_and_nothing_from_a_stationary_series() {
        // 200 samples ramping up from -20, then 2,000 around 0.
        let mut s = unit(&(0..200).map(|i| -20.0 + 0.1 * i as f64).collect::<Vec<_>>());
        s.extend(ar1(2000, 0.5, 0.0, 0.0, 1));
        let d = mser5(&s);
        assert!((190..=300).contains(&d), "{d}");
        let flat = ar1(2000, 0.5, 0.0, 0.0, 2);
        assert!(mser5(&flat) < 200, "{}", mser5(&flat));
    }

    #[test]
    fn a_ratio_s_interval_is_about_the_ratio_of_sums() {
        // Loss: 0-2 drops in 10 arrivals, then none in 990, over and over. The run's loss rate
        // is about 1 / 1,000; the mean of the per-sample ratios would be about 0.05.
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(6); // its fine batches' lag-1 correlation is under 0.2
        let s: Vec<Obs> =
            (0..600).map(|i| if i % 2 == 0 { (rng.random_range(0..3) as f64, 10.0) } else { (0.0, 990.0) }).collect();
        let ci = batch_interval(&s, 0.95).unwrap_or_else(|| panic!("lag1 {}", lag1(&batch_means(&s, FINE_BATCHES))));
        let drops: f64 = s.iter().map(|o| o.0).sum();
        assert!((ci.mean - drops / 300_000.0).abs() < 1e-12, "{ci:?}");
        assert!((ci.mean - 1e-3).abs() < ci.halfwidth && ci.halfwidth < 2e-4, "{ci:?}");
        assert_eq!(ratio(&[(0.0, 0.0)]), 0.0);
    }

    #[test]
    fn correlated_batches_wait_for_more_data() {
        // phi 0.999: a correlation time of 1,000 samples, far longer than 400 samples' batches.
        assert_eq!(batch_interval(&ar1(400, 0.999, 0.0, 0.0, 3), 0.95), None);
        assert!(batch_interval(&ar1(40_000, 0.9, 0.0, 0.0, 3), 0.95).is_some());
    }

    /// The procedure's 95% intervals on AR(1) series of known mean (phi 0.9, as utilization
    /// sampled 0.1 s apart), stopped when their half-width first meets a target, checks each 10%
    /// of growth: coverage 93% (sequential stopping costs some; 400 runs of a true 95% would
    /// read 92.6-97.2% by chance alone). Deterministic: fixed seeds.
    #[test]
    fn sequentially_stopped_intervals_cover_the_mean() {
        let (runs, target) = (400, 0.25);
        let mut covered = 0;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        for r in 0..runs {
            let s = ar1(200_000, 0.9, 1.0, 1.0 + rng.random::<f64>(), r);
            let mut n = FINE_BATCHES * MIN_BATCH_SAMPLES;
            let ci = loop {
                if let Some(ci) = batch_interval(&s[..n], 0.95).filter(|ci| ci.halfwidth <= target) {
                    break ci;
                }
                n = (n as f64 * 1.1).ceil() as usize;
                assert!(n < s.len(), "run {r} never met the target");
            };
            covered += ((ci.mean - 1.0).abs() <= ci.halfwidth) as usize;
        }
        let coverage = covered as f64 / runs as f64;
        eprintln!("AR(1) coverage: {coverage}");
        assert!((0.9..=0.985).contains(&coverage), "{coverage}");
    }
}
