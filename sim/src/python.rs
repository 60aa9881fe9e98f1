//! PyO3 bindings: validation, the run entry point (GIL released, Ctrl-C honoured) and the
//! registries. Outputs are plain columns; the Python package turns them into Arrow tables.

use crate::config::SimConfig;
use crate::world::World;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn check(cfg: &SimConfig) -> PyResult<()> {
    cfg.validate().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Raises ValueError naming the first invalid field.
#[pyfunction]
fn validate(cfg: SimConfig) -> PyResult<()> {
    check(&cfg)
}

/// Runs one simulation; returns {"summary": {...}, "timeseries": {...}, "flows": {...},
/// "trace": {...}} with one list per column.
#[pyfunction]
fn run(py: Python<'_>, cfg: SimConfig) -> PyResult<Py<PyDict>> {
    check(&cfg)?;
    let mut signal: Option<PyErr> = None;
    let out = py.detach(|| {
        let mut poll = || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    signal = Some(e);
                    true
                }
            })
        };
        World::new(&cfg).run(&mut poll)
    });
    if out.interrupted {
        return Err(signal.unwrap_or_else(|| PyKeyboardInterrupt::new_err("simulation interrupted")));
    }

    let summary = PyDict::new(py);
    for (k, v) in &out.summary {
        summary.set_item(*k, *v)?;
    }
    let ts = PyDict::new(py);
    let t = &out.timeseries;
    ts.set_item("time_s", &t.time_s)?;
    ts.set_item("utilization", &t.utilization)?;
    ts.set_item("goodput_mbps", &t.goodput_mbps)?;
    ts.set_item("arrivals", &t.arrivals)?;
    ts.set_item("drops", &t.drops)?;
    ts.set_item("queue_mean_pkts", &t.queue_mean_pkts)?;
    ts.set_item("queue_max_pkts", &t.queue_max_pkts)?;
    ts.set_item("buffer_pkts", &t.buffer_pkts)?;
    ts.set_item("mean_cwnd_pkts", &t.mean_cwnd_pkts)?;
    let flows = PyDict::new(py);
    let f = &out.flows;
    flows.set_item("flow_id", &f.flow_id)?;
    flows.set_item("rtt_ms", &f.rtt_ms)?;
    flows.set_item("start_s", &f.start_s)?;
    flows.set_item("goodput_mbps", &f.goodput_mbps)?;
    flows.set_item("retransmits", &f.retransmits)?;
    flows.set_item("timeouts", &f.timeouts)?;
    flows.set_item("fast_retransmits", &f.fast_retransmits)?;
    flows.set_item("mean_cwnd_pkts", &f.mean_cwnd_pkts)?;
    flows.set_item("sent_pkts", &f.sent_pkts)?;
    flows.set_item("delivered_pkts", &f.delivered_pkts)?;
    flows.set_item("dropped_pkts", &f.dropped_pkts)?;
    flows.set_item("in_flight_pkts", &f.in_flight_pkts)?;
    let trace = PyDict::new(py);
    let tr = &out.trace;
    trace.set_item("time_s", &tr.time_s)?;
    trace.set_item("event", &tr.event)?;
    trace.set_item("open_loop", &tr.open_loop)?;
    trace.set_item("flow", &tr.flow)?;
    trace.set_item("seq", &tr.seq)?;
    trace.set_item("queue_pkts", &tr.queue_pkts)?;

    let result = PyDict::new(py);
    result.set_item("summary", summary)?;
    result.set_item("timeseries", ts)?;
    result.set_item("flows", flows)?;
    result.set_item("trace", trace)?;
    Ok(result.unbind())
}

#[pyfunction]
fn variants() -> Vec<&'static str> {
    crate::tcp::variant_names()
}

#[pyfunction]
fn controllers() -> Vec<&'static str> {
    crate::controller::names()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add("ENGINE_VERSION", crate::ENGINE_VERSION)?;
    Ok(())
}
