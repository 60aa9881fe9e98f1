//! `http`: web sessions of pages of objects, as ABS section 4.4 (ns-2's `WebTraf` model).
//! Details: docs/engine.md, `traffic/http.rs`.

use super::sizes::SizeDist;
use super::TrafficEntry;
use crate::params::{int_in, normalize, one_of, positive, ConfigError, VariantDef};
use crate::rng::{stream, SimRng, Stream};
use crate::time::{from_secs, Time};
use rand::Rng;
use rand_distr::{Distribution, Exp1};

fn arrivals() -> Vec<&'static str> {
    vec!["all", "poisson"]
}

crate::params! {
    /// Web sessions.
    pub struct HttpParams as "Http" {
        /// Sessions in the run.
        sessions: i64 = 1, unit "count", check int_in(1, 100_000_000);
        /// all: every session starts within start_window_s; poisson: sessions arrive at
        /// arrival_rate_per_s.
        arrival: String = "all".to_string(), unit "", check one_of(arrivals);
        /// Session arrival rate with arrival poisson.
        arrival_rate_per_s: f64 = 1.0, unit "1/s", check positive(1e9);
        /// Fewest pages per session.
        pages_min: i64 = 10, unit "count", check int_in(1, 1 << 30);
        /// Most pages per session.
        pages_max: i64 = 2000, unit "count", check int_in(1, 1 << 30);
        /// Mean time between the starts of a session's pages.
        inter_page_s: f64 = 1.0, unit "s", check positive(1e6);
        /// Fewest objects per page.
        objects_min: i64 = 1, unit "count", check int_in(1, 1 << 20);
        /// Most objects per page.
        objects_max: i64 = 5, unit "count", check int_in(1, 1 << 20);
        /// Mean time between the starts of a page's objects.
        inter_object_s: f64 = 0.01, unit "s", check positive(1e6);
        /// Mean object size (Pareto).
        object_mean_bytes: f64 = 10_000.0, unit "bytes", check positive(1e12);
        /// Shape of the object sizes' Pareto law (> 1).
        object_shape: f64 = 1.2, unit "1", check positive(1e3);
    }
}

pub const ENTRY: TrafficEntry = TrafficEntry {
    def: VariantDef {
        name: "http",
        doc: "web sessions of pages of Pareto-sized objects, each object a TCP transfer (ABS section 4.4)",
        params: HttpParams::specs,
        keys: HttpParams::KEYS,
        normalize: normalize::<HttpParams>,
    },
    tcp: true,
};

impl HttpParams {
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.pages_max < self.pages_min {
            return Err(ConfigError::at(
                "pages_max",
                format!("must be >= pages_min ({}), got {}", self.pages_min, self.pages_max),
            ));
        }
        if self.objects_max < self.objects_min {
            return Err(ConfigError::at(
                "objects_max",
                format!("must be >= objects_min ({}), got {}", self.objects_min, self.objects_max),
            ));
        }
        if self.object_shape <= 1.0 {
            return Err(ConfigError::at(
                "object_shape",
                format!(
                    "must be > 1 (a Pareto law of shape <= 1 has an \
                                                                 infinite mean), got {}",
                    self.object_shape
                ),
            ));
        }
        Ok(())
    }
}

/// One web session in progress: its client's RTT, the pages it has left, and the objects left
/// of its current page. Ended sessions' slots are reused (see `HttpGroup`).
pub struct Session {
    pub rtt_s: f64,
    pages_left: i64,
    objects_left: i64,
    page_start: Time,
    /// Objects launched of the current page.
    launched_in_page: u64,
    rng: SimRng,
}

/// What a session does at its event: launch an object of `size_bytes`, then wait until `next`
/// (None: the session is over).
pub struct Step {
    pub size_pkts: i64,
    pub size_bytes: f64,
    /// Names the object's sender stream: (group << 40) + a per-group object counter.
    pub sender_id: u64,
    pub next: Option<Time>,
}

/// An http group's session arrivals.
pub struct HttpGroup {
    pub p: HttpParams,
    sizes: SizeDist,
    rng: SimRng,
    seed: u64,
    group: usize,
    /// Sessions whose start was drawn, and sessions started.
    scheduled: u64,
    started: u64,
    /// The last start time (for `all`, the order statistics are drawn in sequence).
    last_start_s: f64,
    window_s: f64,
    objects: u64,
    /// Pages started at or after `warm` (first objects launched then).
    warm: Time,
    pages_in_window: u64,
}

impl HttpGroup {
    pub fn new(p: HttpParams, group: usize, seed: u64, start_window_s: f64, warm: Time) -> Self {
        let sizes = SizeDist::pareto(p.object_mean_bytes, p.object_shape);
        Self {
            p,
            sizes,
            rng: stream(seed, Stream::HttpSessions, group as u64),
            seed,
            group,
            scheduled: 0,
            started: 0,
            last_start_s: 0.0,
            window_s: start_window_s,
            objects: 0,
            warm,
            pages_in_window: 0,
        }
    }

    /// When the next session starts, or None once every session has. With `all`, the sessions'
    /// start times are uniform in the start window, drawn in increasing order (the k-th of n
    /// sorted uniforms given the one before, so no list of n times is kept); with `poisson`,
    /// exponential gaps at `arrival_rate_per_s`.
    pub fn next_start(&mut self) -> Option<Time> {
        let n = self.p.sessions as u64;
        if self.scheduled >= n {
            return None;
        }
        let u: f64 = self.rng.random();
        let t = if self.p.arrival == "poisson" {
            self.last_start_s + -(1.0 - u).ln() / self.p.arrival_rate_per_s
        } else {
            let left = (n - self.scheduled) as f64;
            self.last_start_s + (self.window_s - self.last_start_s) * (1.0 - (1.0 - u).powf(1.0 / left))
        };
        self.last_start_s = t;
        self.scheduled += 1;
        Some(from_secs(t))
    }

    /// A session starts now: its RTT (uniform in rtt_ms +/- rtt_spread_ms / 2) and page count.
    pub fn start_session(&mut self, now: Time, rtt: (f64, f64)) -> Session {
        let index = self.started;
        self.started += 1;
        let mut rng = stream(self.seed, Stream::HttpSession, ((self.group as u64) << 40) + index);
        let u: f64 = rng.random();
        let rtt_s = (rtt.0 + (u - 0.5) * rtt.1) / 1000.0;
        let pages_left = rng.random_range(self.p.pages_min..=self.p.pages_max);
        let objects_left = rng.random_range(self.p.objects_min..=self.p.objects_max);
        Session { rtt_s, pages_left, objects_left, page_start: now, launched_in_page: 0, rng }
    }

    pub fn pages_in_window(&self) -> u64 {
        self.pages_in_window
    }

    /// The session's event at `now`: one object, then its next event.
    pub fn step(&mut self, s: &mut Session, now: Time, pkt_bytes: u16) -> Step {
        if s.launched_in_page == 0 && now >= self.warm {
            self.pages_in_window += 1;
        }
        s.launched_in_page += 1;
        let size_pkts = self.sizes.sample_pkts(&mut s.rng, pkt_bytes);
        let sender_id = ((self.group as u64) << 40) + self.objects;
        self.objects += 1;
        s.objects_left -= 1;
        let exp = |rng: &mut SimRng, mean_s: f64| from_secs(Distribution::<f64>::sample(&Exp1, rng) * mean_s);
        let next = if s.objects_left > 0 {
            Some(now + exp(&mut s.rng, self.p.inter_object_s))
        } else {
            s.pages_left -= 1;
            if s.pages_left == 0 {
                None
            } else {
                s.page_start += exp(&mut s.rng, self.p.inter_page_s);
                s.objects_left = s.rng.random_range(self.p.objects_min..=self.p.objects_max);
                s.launched_in_page = 0;
                Some(s.page_start.max(now))
            }
        };
        Step { size_pkts, size_bytes: size_pkts as f64 * pkt_bytes as f64, sender_id, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Param;
    use crate::time::to_secs;

    fn params(arrival: &str, sessions: i64) -> HttpParams {
        let mut p = HttpParams::parse(&crate::params::Value::map(vec![])).unwrap();
        p.arrival = arrival.to_string();
        p.sessions = sessions;
        p
    }

    #[test]
    fn all_sessions_start_in_order_within_the_window_uniformly() {
        let mut g = HttpGroup::new(params("all", 10_000), 0, 1, 100.0, 0);
        let starts: Vec<f64> = std::iter::from_fn(|| g.next_start()).map(to_secs).collect();
        assert_eq!(starts.len(), 10_000);
        assert!(starts.windows(2).all(|w| w[0] <= w[1]) && *starts.last().unwrap() <= 100.0);
        let below_half = starts.iter().filter(|&&t| t < 50.0).count() as f64 / 1e4;
        assert!((below_half - 0.5).abs() < 0.02, "{below_half}");
    }

    #[test]
    fn pages_per_session_and_objects_per_page_are_uniform() {
        // ABS: pages uniform in [10, 2000], objects per page uniform in [1, 5].
        let mut g = HttpGroup::new(params("all", 20_000), 0, 7, 1.0, 0);
        let sessions: Vec<Session> = (0..20_000).map(|_| g.start_session(0, (100.0, 0.0))).collect();
        let pages: Vec<i64> = sessions.iter().map(|s| s.pages_left).collect();
        assert!(pages.iter().all(|&p| (10..=2000).contains(&p)));
        let mean = pages.iter().sum::<i64>() as f64 / pages.len() as f64;
        assert!((mean / 1005.0 - 1.0).abs() < 0.02, "mean pages {mean}");
        let below = pages.iter().filter(|&&p| p < 505).count() as f64 / pages.len() as f64;
        assert!((below - 0.25).abs() < 0.015, "a quarter below 505: {below}");
        let objects: Vec<i64> = sessions.iter().map(|s| s.objects_left).collect();
        for k in 1..=5 {
            let share = objects.iter().filter(|&&o| o == k).count() as f64 / objects.len() as f64;
            assert!((share - 0.2).abs() < 0.015, "{k} objects: {share}");
        }
    }

    #[test]
    fn a_session_has_its_pages_and_objects() {
        let mut p = params("all", 1);
        (p.pages_min, p.pages_max, p.objects_min, p.objects_max) = (3, 3, 2, 2);
        let mut g = HttpGroup::new(p, 0, 1, 1.0, 0);
        let mut s = g.start_session(0, (100.0, 0.0));
        let (mut now, mut objects) = (0, 0);
        loop {
            let step = g.step(&mut s, now, 1000);
            objects += 1;
            assert!(step.size_pkts >= 1);
            match step.next {
                Some(t) => now = t,
                None => break,
            }
        }
        assert_eq!(objects, 6, "3 pages of 2 objects");
        assert!((s.rtt_s - 0.1).abs() < 1e-12);
    }
}
