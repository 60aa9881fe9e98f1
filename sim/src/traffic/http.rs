//! `http`: web sessions as ABS section 4.4 describes them (the model of ns-2's `WebTraf`): a
//! session downloads n_p pages (uniform in [pages_min, pages_max]) with exponential inter-page
//! times (mean inter_page_s); a page has n_o objects (uniform in [objects_min, objects_max]) with
//! exponential inter-object times (mean inter_object_s); object sizes are Pareto (mean
//! object_mean_bytes, shape object_shape); every object is one TCP transfer of the group's TCP.
//! Pages and objects start on their own clocks, not when the previous one completes (open loop,
//! as `WebTraf` launches them).
//!
//! Sessions start all at once (`arrival: all`, uniformly within the run's start window) or as a
//! Poisson process (`arrival: poisson`, at `arrival_rate_per_s` until `sessions` have started).
//! ABS runs a fixed population beside its FTP flows ("20 FTP, 20 HTTP, and 20 UDP flows"), which
//! is `all`. Its section 4.4 speaks of 100,000 HTTP sessions on a 10 Mb/s link; at about three
//! 10 KB objects a second each, 100,000 concurrent sessions would offer 24 Gb/s, so we read the
//! figure's "100000 HTTP flows" as object transfers over the run: about 28 sessions over 1,200 s
//! (conf/experiment/abs_web.yaml).

use super::TrafficEntry;
use crate::params::{int_in, normalize, one_of, positive, ConfigError, VariantDef};

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
            return Err(ConfigError::at("pages_max", format!("must be >= pages_min ({}), got {}", self.pages_min,
                                                             self.pages_max)));
        }
        if self.objects_max < self.objects_min {
            return Err(ConfigError::at("objects_max", format!("must be >= objects_min ({}), got {}",
                                                               self.objects_min, self.objects_max)));
        }
        if self.object_shape <= 1.0 {
            return Err(ConfigError::at("object_shape", format!("must be > 1 (a Pareto law of shape <= 1 has an \
                                                                 infinite mean), got {}", self.object_shape)));
        }
        Ok(())
    }
}
