//! Runs that stop on precision (issue 57): the `precision` section, and what a run keeps of its
//! bottleneck's samples to decide, at checks spaced 10% of the run apart, whether every named
//! metric's confidence interval has met its target. docs/precision.md.

pub mod stats;

use crate::params::{each, each_one, opt, positive, Check, ConfigError, OneOrList};
use stats::Interval;

/// The metrics a run can stop on: the bottleneck's, sampled each `sample_interval_s`.
pub const METRICS: [&str; 5] = ["utilization", "loss_rate", "goodput_mbps", "mean_queue_pkts", "mean_queue_delay_ms"];

fn metric_names() -> Vec<&'static str> {
    METRICS.to_vec()
}

/// A number strictly between 0 and 1.
fn open_unit() -> Check<f64> {
    Check::new("a number in (0, 1)", |v: &f64| (!(*v > 0.0 && *v < 1.0)).then(|| format!("must be in (0, 1), got {v}")))
}

/// What a warm-up setting allows, in words.
const WARMUP_ALLOWED: &str = "\"auto\" (MSER-5) or a number of seconds >= 0";

crate::params! {
    /// Stopping on precision: off while `metrics` is empty (every run then ends at duration_s,
    /// bit-identical to a run without this section).
    pub struct PrecisionConfig as "Precision" {
        /// Summary metrics of the bottleneck whose confidence intervals decide when the run stops
        /// (and, across seeds, how many seeds a sweep point runs); empty = off.
        metrics: Vec<String> = vec![], check each(crate::params::one_of(metric_names));
        /// Target half-width of each metric's interval, in the metric's unit: one number for
        /// all, or one per metric.
        halfwidth: OneOrList<f64> = OneOrList(vec![]), check each_one(positive(1e12));
        /// Target half-width as a fraction of the metric's mean (0.01 = +-1%), instead of halfwidth.
        relative: Option<f64> = None, unit "1", check opt(open_unit());
        /// Confidence level of the intervals, in (0, 1).
        confidence: f64 = 0.95, unit "1", check open_unit();
        /// The longest the run may go on; null = duration_s.
        max_duration_s: Option<f64> = None, unit "s", check opt(positive(1e6));
        /// Warm-up cut from the sampled series before its intervals: "auto" (MSER-5) or seconds.
        warmup: String = "auto".to_string(), unit "s";
        /// A threshold to decide against (a search's target): the run, or a sweep point's seeds,
        /// also stop as soon as the first named metric's interval lies wholly above or below it.
        decide_at: Option<f64> = None, unit "1";
        /// Replications of a sweep point: at least this many seeds (seed, seed + 1, ...).
        min_seeds: i64 = 1, unit "count", check crate::params::int_in(1, 10_000);
        /// Seeds added, in order, until every metric's interval across seeds meets its target.
        max_seeds: i64 = 1, unit "count", check crate::params::int_in(1, 10_000);
    }
}

impl PrecisionConfig {
    pub fn on(&self) -> bool {
        !self.metrics.is_empty()
    }

    /// The warm-up in seconds, or None for MSER-5.
    pub fn warmup_s(&self) -> Option<f64> {
        self.warmup.parse::<f64>().ok()
    }

    /// The cross-field checks: targets for the metrics, a warm-up the run can pass, seeds in order.
    pub fn validate(&self, duration_s: f64, warmup_s: f64) -> Result<(), ConfigError> {
        let err = |f: &str, m: String| Err(ConfigError::at(&format!("precision.{f}"), m));
        if self.warmup != "auto" && self.warmup_s().is_none_or(|w| !(0.0..=1e6).contains(&w)) {
            return err("warmup", format!("must be {WARMUP_ALLOWED}, got {:?}", self.warmup));
        }
        if self.min_seeds > self.max_seeds {
            return err("min_seeds", format!("must be <= max_seeds ({}), got {}", self.max_seeds, self.min_seeds));
        }
        if !self.on() {
            if self.max_seeds > 1 {
                return err("metrics", "name the metrics whose intervals across seeds decide (max_seeds > 1)".into());
            }
            return Ok(());
        }
        let n = self.halfwidth.0.len();
        match (n, self.relative) {
            (0, None) => {
                return err("halfwidth", "give a target: halfwidth (or relative) is required with metrics".into())
            }
            (1, None) | (0, Some(_)) => {}
            (_, Some(_)) => return err("relative", "give halfwidth or relative, not both".into()),
            (n, None) if n != self.metrics.len() => {
                return err(
                    "halfwidth",
                    format!("must hold one number or one per metric ({}), got {n}", self.metrics.len()),
                )
            }
            _ => {}
        }
        let cap = self.max_duration_s.unwrap_or(duration_s);
        let warm = self.warmup_s().unwrap_or(0.0).max(warmup_s);
        if cap <= warm {
            return err("max_duration_s", format!("must be above the warm-up ({warm} s), got {cap}"));
        }
        Ok(())
    }

    /// Metric `i`'s target half-width given its mean.
    fn target(&self, i: usize, mean: f64) -> f64 {
        match self.relative {
            Some(r) => r * mean.abs(),
            None => self.halfwidth.0[i.min(self.halfwidth.0.len() - 1)],
        }
    }
}

/// Why a run ended.
pub const STOP_DURATION: &str = "duration";
pub const STOP_PRECISION: &str = "precision";
pub const STOP_MAX_DURATION: &str = "max_duration";
pub const STOP_DECIDED: &str = "decided";

/// One sample interval of the bottleneck: each of METRICS' (numerator, weight) (`stats::Obs`).
pub type Sample = [stats::Obs; 5];

/// A run's precision state: the series of each named metric, and the next check.
pub struct Tracker {
    cfg: PrecisionConfig,
    /// Indices into METRICS of the named metrics.
    named: Vec<usize>,
    series: Vec<Vec<stats::Obs>>,
    sample_s: f64,
    next_check: usize,
    delay_at_sample: (u64, u64),
    /// The last check's outcome: (warm-up in samples, each named metric's interval).
    last: Option<(usize, Vec<Option<Interval>>)>,
    /// Why the run may stop, once it may: STOP_PRECISION or STOP_DECIDED.
    pub reason: Option<&'static str>,
}

/// Checks start once the series holds this many samples past the warm-up, and come each time
/// it has grown by CHECK_GROWTH (stopping the first time a noisy interval looks narrow biases
/// coverage down; spaced checks and a first one after many batches limit that).
const CHECK_GROWTH: f64 = 1.1;

impl Tracker {
    pub fn new(cfg: &PrecisionConfig, sample_s: f64) -> Option<Self> {
        cfg.on().then(|| Tracker {
            named: cfg.metrics.iter().map(|m| METRICS.iter().position(|x| x == m).expect("validated")).collect(),
            series: vec![Vec::new(); cfg.metrics.len()],
            cfg: cfg.clone(),
            sample_s,
            next_check: stats::FINE_BATCHES * stats::MIN_BATCH_SAMPLES,
            delay_at_sample: (0, 0),
            last: None,
            reason: None,
        })
    }

    /// Records a sample (its delay slot filled from `delay`, the link's running sum of waiting
    /// times and packets); true when the run may stop (every interval meets its target).
    pub fn sample(&mut self, mut s: Sample, delay: (u64, u64)) -> bool {
        let (sum, n) = (delay.0 - self.delay_at_sample.0, delay.1 - self.delay_at_sample.1);
        s[4] = (sum as f64 / 1e6, n as f64);
        self.delay_at_sample = delay;
        for (k, &m) in self.named.iter().enumerate() {
            self.series[k].push(s[m]);
        }
        let n = self.series[0].len();
        let warm = self.fixed_warmup();
        if n < warm.unwrap_or(0) + self.next_check {
            return false;
        }
        self.next_check = ((n - warm.unwrap_or(0)) as f64 * CHECK_GROWTH).ceil() as usize;
        self.check(warm)
    }

    fn fixed_warmup(&self) -> Option<usize> {
        self.cfg.warmup_s().map(|w| (w / self.sample_s).ceil() as usize)
    }

    /// The intervals now; true if each meets its target. The warm-up is the latest any named
    /// metric's MSER-5 asks for, so that every interval is over one window.
    fn check(&mut self, warm: Option<usize>) -> bool {
        let n = self.series[0].len();
        let warm = warm.unwrap_or_else(|| self.series.iter().map(|s| stats::mser5(s)).max().unwrap_or(0)).min(n);
        let conf = self.cfg.confidence;
        let cis: Vec<Option<Interval>> = self.series.iter().map(|s| stats::batch_interval(&s[warm..], conf)).collect();
        let met = cis.iter().enumerate().all(|(i, ci)| ci.is_some_and(|c| c.halfwidth <= self.cfg.target(i, c.mean)));
        let decided = self
            .cfg
            .decide_at
            .is_some_and(|t| cis[0].is_some_and(|c| c.mean - c.halfwidth > t || c.mean + c.halfwidth < t));
        self.last = Some((warm, cis));
        self.reason = if met {
            Some(STOP_PRECISION)
        } else if decided {
            Some(STOP_DECIDED)
        } else {
            None
        };
        met || decided
    }

    /// At the end of the run: the warm-up, and for each METRICS entry that is named its series'
    /// mean past the warm-up (the point its interval is about) and its interval (None while the
    /// series is too short or too correlated).
    pub fn outcome(&mut self) -> Outcome {
        let warm = self.fixed_warmup();
        self.check(warm);
        let (w, cis) = self.last.take().expect("checked");
        let mut out = Outcome { warmup_s: w as f64 * self.sample_s, means: [None; 5], intervals: [None; 5] };
        for (k, &m) in self.named.iter().enumerate() {
            let tail = &self.series[k][w.min(self.series[k].len())..];
            out.means[m] = (!tail.is_empty()).then(|| stats::ratio(tail));
            out.intervals[m] = cis[k];
        }
        out
    }
}

/// What a run that stopped on precision reports (see `Tracker::outcome`), by METRICS index.
pub struct Outcome {
    pub warmup_s: f64,
    pub means: [Option<f64>; 5],
    pub intervals: [Option<Interval>; 5],
}
