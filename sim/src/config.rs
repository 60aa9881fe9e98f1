//! The run configuration and its validation. Python passes the fields of `sim.SimConfig` as a
//! dict; everything is checked here, once, before any state is built, so a bad value fails
//! with the field's name and its allowed range and nothing runs.

use crate::controller;
use crate::tcp;

/// Field names are the platform's parameter names (the same as the sweep axes).
/// Integers are i64 so that negative input reaches `validate` instead of failing to convert.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject))]
#[cfg_attr(feature = "python", pyo3(from_item_all))]
pub struct SimConfig {
    pub tcp: String,
    pub flows: i64,
    pub buffer_pkts: i64,
    /// Byte-limited bottleneck queue instead of `buffer_pkts`, when set.
    pub buffer_bytes: Option<i64>,
    pub wmax_pkts: i64,
    /// None = no access link (senders are attached straight to the bottleneck).
    pub access_mbps: Option<f64>,
    pub access_buffer_pkts: i64,
    pub core_mbps: f64,
    pub rtt_ms: f64,
    pub rtt_spread_ms: f64,
    /// Explicit per-flow RTTs (one per flow); overrides rtt_ms / rtt_spread_ms.
    pub rtts_ms: Option<Vec<f64>>,
    pub pkt_bytes: i64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub seed: i64,
    pub start_window_s: f64,
    pub init_cwnd_pkts: f64,
    /// None = the receiver window (ns-2 sets ssthresh_ to window_).
    pub init_ssthresh_pkts: Option<f64>,
    pub min_rto_ms: f64,
    pub max_rto_s: f64,
    pub init_rto_s: f64,
    pub tick_ms: f64,
    pub delayed_ack: bool,
    pub delack_ms: f64,
    pub limited_transmit: bool,
    pub max_burst_pkts: i64,
    pub poisson_mbps: f64,
    pub cbr_mbps: f64,
    pub open_loop_bytes: Option<i64>,
    /// Offered load of short TCP flows: Poisson arrivals of `short_flow_pkts`-packet transfers.
    pub short_mbps: f64,
    pub short_flow_pkts: i64,
    pub controller: String,
    pub controller_interval_ms: f64,
    /// (time_s, buffer_pkts) steps for the `schedule` controller.
    pub buffer_schedule: Vec<(f64, i64)>,
    pub sample_interval_s: f64,
    pub trace_max_events: i64,
    pub trace_start_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

fn err<T>(field: &str, message: String) -> Result<T, ConfigError> {
    Err(ConfigError { field: field.to_string(), message })
}

fn finite(field: &str, v: f64) -> Result<f64, ConfigError> {
    if v.is_finite() {
        Ok(v)
    } else {
        err(field, format!("must be a finite number, got {v}"))
    }
}

fn positive(field: &str, v: f64) -> Result<(), ConfigError> {
    if finite(field, v)? > 0.0 {
        Ok(())
    } else {
        err(field, format!("must be > 0, got {v}"))
    }
}

fn non_negative(field: &str, v: f64) -> Result<(), ConfigError> {
    if finite(field, v)? >= 0.0 {
        Ok(())
    } else {
        err(field, format!("must be >= 0, got {v}"))
    }
}

fn int_range(field: &str, v: i64, lo: i64, hi: i64) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        err(field, format!("must be an integer in [{lo}, {hi}], got {v}"))
    }
}

pub const MAX_FLOWS: i64 = 1_000_000;
pub const MAX_PKTS: i64 = 1 << 40;

impl SimConfig {
    /// A config with the library defaults (ns-2 one-way TCP defaults where they apply).
    pub fn defaults() -> Self {
        Self {
            tcp: "reno".into(),
            flows: 1,
            buffer_pkts: 100,
            buffer_bytes: None,
            wmax_pkts: 64,
            access_mbps: None,
            access_buffer_pkts: 10_000,
            core_mbps: 100.0,
            rtt_ms: 100.0,
            rtt_spread_ms: 0.0,
            rtts_ms: None,
            pkt_bytes: 1000,
            duration_s: 60.0,
            warmup_s: 10.0,
            seed: 1,
            start_window_s: 1.0,
            init_cwnd_pkts: 2.0,
            init_ssthresh_pkts: None,
            min_rto_ms: 200.0,
            max_rto_s: 60.0,
            init_rto_s: 3.0,
            tick_ms: 10.0,
            delayed_ack: false,
            delack_ms: 100.0,
            limited_transmit: true,
            max_burst_pkts: 0,
            poisson_mbps: 0.0,
            cbr_mbps: 0.0,
            open_loop_bytes: None,
            short_mbps: 0.0,
            short_flow_pkts: 14,
            controller: "none".into(),
            controller_interval_ms: 100.0,
            buffer_schedule: vec![],
            sample_interval_s: 0.1,
            trace_max_events: 0,
            trace_start_s: None,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let names = tcp::variant_names();
        if !names.contains(&self.tcp.as_str()) {
            return err("tcp", format!("unknown variant {:?}; allowed: {}", self.tcp, names.join(", ")));
        }
        int_range("flows", self.flows, 0, MAX_FLOWS)?;
        int_range("buffer_pkts", self.buffer_pkts, 0, MAX_PKTS)?;
        if let Some(b) = self.buffer_bytes {
            int_range("buffer_bytes", b, 0, MAX_PKTS)?;
        }
        int_range("wmax_pkts", self.wmax_pkts, 1, 1 << 30)?;
        if let Some(a) = self.access_mbps {
            positive("access_mbps", a)?;
        }
        int_range("access_buffer_pkts", self.access_buffer_pkts, 0, MAX_PKTS)?;
        positive("core_mbps", self.core_mbps)?;
        positive("rtt_ms", self.rtt_ms)?;
        non_negative("rtt_spread_ms", self.rtt_spread_ms)?;
        if self.rtt_spread_ms >= 2.0 * self.rtt_ms {
            return err(
                "rtt_spread_ms",
                format!("must be < 2 x rtt_ms ({}) so every RTT stays positive, got {}", 2.0 * self.rtt_ms, self.rtt_spread_ms),
            );
        }
        if let Some(rtts) = &self.rtts_ms {
            if rtts.len() as i64 != self.flows {
                return err("rtts_ms", format!("must list one RTT per flow ({}), got {}", self.flows, rtts.len()));
            }
            for &r in rtts {
                positive("rtts_ms", r)?;
            }
        }
        int_range("pkt_bytes", self.pkt_bytes, 41, 1 << 20)?;
        positive("duration_s", self.duration_s)?;
        non_negative("warmup_s", self.warmup_s)?;
        if self.warmup_s >= self.duration_s {
            return err("warmup_s", format!("must be < duration_s ({}), got {}", self.duration_s, self.warmup_s));
        }
        if self.duration_s > 1e6 {
            return err("duration_s", format!("must be <= 1e6 s, got {}", self.duration_s));
        }
        int_range("seed", self.seed, 0, i64::MAX)?;
        non_negative("start_window_s", self.start_window_s)?;
        if self.start_window_s >= self.duration_s {
            return err("start_window_s", format!("must be < duration_s ({}), got {}", self.duration_s, self.start_window_s));
        }
        finite("init_cwnd_pkts", self.init_cwnd_pkts)?;
        if self.init_cwnd_pkts < 1.0 {
            return err("init_cwnd_pkts", format!("must be >= 1, got {}", self.init_cwnd_pkts));
        }
        if let Some(s) = self.init_ssthresh_pkts {
            finite("init_ssthresh_pkts", s)?;
            if s < 2.0 {
                return err("init_ssthresh_pkts", format!("must be >= 2, got {s}"));
            }
        }
        positive("min_rto_ms", self.min_rto_ms)?;
        positive("max_rto_s", self.max_rto_s)?;
        if self.max_rto_s * 1000.0 < self.min_rto_ms {
            return err("max_rto_s", format!("must be >= min_rto_ms / 1000 ({}), got {}", self.min_rto_ms / 1000.0, self.max_rto_s));
        }
        positive("init_rto_s", self.init_rto_s)?;
        non_negative("tick_ms", self.tick_ms)?;
        positive("delack_ms", self.delack_ms)?;
        int_range("max_burst_pkts", self.max_burst_pkts, 0, 1 << 30)?;
        non_negative("poisson_mbps", self.poisson_mbps)?;
        non_negative("cbr_mbps", self.cbr_mbps)?;
        if let Some(b) = self.open_loop_bytes {
            int_range("open_loop_bytes", b, 1, 1 << 20)?;
        }
        non_negative("short_mbps", self.short_mbps)?;
        int_range("short_flow_pkts", self.short_flow_pkts, 1, 1 << 30)?;
        if self.flows == 0 && self.poisson_mbps == 0.0 && self.cbr_mbps == 0.0 && self.short_mbps == 0.0 {
            return err(
                "flows",
                "is 0 and there is no other traffic (poisson_mbps, cbr_mbps, short_mbps): nothing to simulate".into(),
            );
        }
        let controllers = controller::names();
        if !controllers.contains(&self.controller.as_str()) {
            return err(
                "controller",
                format!("unknown controller {:?}; allowed: {}", self.controller, controllers.join(", ")),
            );
        }
        positive("controller_interval_ms", self.controller_interval_ms)?;
        for &(t, b) in &self.buffer_schedule {
            non_negative("buffer_schedule", t)?;
            int_range("buffer_schedule", b, 0, MAX_PKTS)?;
        }
        if self.controller == "schedule" && self.buffer_schedule.is_empty() {
            return err("buffer_schedule", "must list (time_s, buffer_pkts) steps for controller=schedule".into());
        }
        positive("sample_interval_s", self.sample_interval_s)?;
        if self.duration_s / self.sample_interval_s > 1e7 {
            return err("sample_interval_s", format!("gives more than 1e7 samples over duration_s; got {}", self.sample_interval_s));
        }
        int_range("trace_max_events", self.trace_max_events, 0, 100_000_000)?;
        if let Some(t) = self.trace_start_s {
            non_negative("trace_start_s", t)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        SimConfig::defaults().validate().unwrap();
    }

    #[test]
    fn errors_name_the_field() {
        let mut c = SimConfig::defaults();
        c.tcp = "vegas".into();
        assert_eq!(c.validate().unwrap_err().field, "tcp");
        let mut c = SimConfig::defaults();
        c.buffer_pkts = -1;
        assert_eq!(c.validate().unwrap_err().field, "buffer_pkts");
        let mut c = SimConfig::defaults();
        c.core_mbps = 0.0;
        assert_eq!(c.validate().unwrap_err().field, "core_mbps");
        let mut c = SimConfig::defaults();
        c.warmup_s = c.duration_s;
        assert_eq!(c.validate().unwrap_err().field, "warmup_s");
        let mut c = SimConfig::defaults();
        c.rtt_ms = f64::NAN;
        assert_eq!(c.validate().unwrap_err().field, "rtt_ms");
        let mut c = SimConfig::defaults();
        c.short_flow_pkts = 0;
        assert_eq!(c.validate().unwrap_err().field, "short_flow_pkts");
        let mut c = SimConfig::defaults();
        c.short_mbps = -1.0;
        assert_eq!(c.validate().unwrap_err().field, "short_mbps");
    }
}
