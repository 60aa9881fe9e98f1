//! PyO3 bindings: config dicts in, validation, the run (GIL released, Ctrl-C honoured), the schema.
//! Details: docs/engine.md, `python.rs`.

use crate::config::SimConfig;
use crate::output::tables;
use crate::params::{ConfigError, Param, ParamSpec, Setting, TypeDesc, Value};
use crate::python_columns::{table, ROW_WISE_MAX_ROWS};
use crate::topology::Network;
use crate::world::World;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// A Python object as a config value; bools are not numbers, strings are not lists.
fn to_value(obj: &Bound<'_, PyAny>) -> Result<Value, ConfigError> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().map(Value::Int).map_err(|_| {
            ConfigError::new(format!(
                "must be an integer in [-2^63, 2^63), got {}",
                obj.str().map_or("?".into(), |s| s.to_string())
            ))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_string()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut out = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k.cast::<PyString>().map_err(|_| ConfigError::new("mapping keys must be strings"))?.to_string();
            let value = to_value(&v).map_err(|e| e.under(&key))?;
            out.push((key, value));
        }
        return Ok(Value::Map(out));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, item) in obj.try_iter().map_err(|_| ConfigError::new("unreadable list"))?.enumerate() {
            let item = item.map_err(|_| ConfigError::new("unreadable list"))?;
            out.push(to_value(&item).map_err(|e| e.under(&i.to_string()))?);
        }
        return Ok(Value::List(out));
    }
    // numpy scalars and the like
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Value::Float(f));
    }
    let ty = obj.get_type().name().map_or("?".into(), |n| n.to_string());
    Err(ConfigError::new(format!("unsupported value of type {ty}")))
}

fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.into_pyobject(py)?.into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Map(entries) => {
            let d = PyDict::new(py);
            for (k, x) in entries {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

fn config_of(cfg: &Bound<'_, PyAny>) -> PyResult<(SimConfig, crate::topology::Network)> {
    let v = to_value(cfg).map_err(|e| PyValueError::new_err(e.to_string()))?;
    SimConfig::from_value(&v).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Raises ValueError naming the first invalid key and what is allowed.
#[pyfunction]
fn validate(cfg: &Bound<'_, PyAny>) -> PyResult<()> {
    config_of(cfg).map(|_| ())
}

/// A run's cost from its config, before it runs (`estimate.rs`): {"packets", "events", "work",
/// "memory_bytes", "packet_drivers": [(key, packets)], "memory_drivers": [(key, bytes)],
/// "window_cap_utilization": float or None}.
#[pyfunction]
fn estimate<'py>(py: Python<'py>, cfg: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let (c, net) = config_of(cfg)?;
    estimate_dict(py, &c, &net)
}

fn estimate_dict<'py>(py: Python<'py>, c: &SimConfig, net: &Network) -> PyResult<Bound<'py, PyDict>> {
    let e = crate::estimate::estimate(c, net);
    let out = PyDict::new(py);
    out.set_item("packets", e.packets)?;
    out.set_item("events", e.events)?;
    out.set_item("work", e.work)?;
    out.set_item("memory_bytes", e.memory_bytes)?;
    out.set_item("packet_drivers", e.packet_drivers)?;
    out.set_item("memory_drivers", e.memory_drivers)?;
    out.set_item("window_cap_utilization", e.window_cap_utilization)?;
    Ok(out)
}

/// The validated config with every default filled in, the labels of its sections and its cost
/// ({"config": {...}, "labels": {"tcp": "reno", "topology": "dumbbell", "buffer_policy": None},
/// "estimate": as `estimate`}): one parse gives every config its estimate.
#[pyfunction]
fn normalize<'py>(py: Python<'py>, cfg: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let (c, net) = config_of(cfg)?;
    let labels = PyDict::new(py);
    labels.set_item("tcp", c.tcp.0.label)?;
    labels.set_item("topology", c.topology.0.label)?;
    labels.set_item("buffer_policy", c.buffer_policy.0.label)?;
    labels.set_item("queue", c.queue.0.label)?;
    let out = PyDict::new(py);
    out.set_item("config", to_py(py, &c.value())?)?;
    out.set_item("labels", labels)?;
    out.set_item("estimate", estimate_dict(py, &c, &net)?)?;
    Ok(out)
}

/// Runs one simulation; returns {table: {column: [values]}} for summary, timeseries, flows,
/// links, classes, control and trace. `timeout_s` stops it (TimeoutError) once it has run that
/// long in wall time, as Ctrl-C does (the engine polls every 2^18 events); past `budget_bytes`
/// more memory it stops with MemoryError (`memory.rs`).
#[pyfunction]
#[pyo3(signature = (cfg, timeout_s = None, budget_bytes = None))]
fn run<'py>(
    py: Python<'py>,
    cfg: &Bound<'py, PyAny>,
    timeout_s: Option<f64>,
    budget_bytes: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let (cfg, net) = config_of(cfg)?;
    let mut signal: Option<PyErr> = None;
    let deadline = timeout_s.map(|s| std::time::Instant::now() + std::time::Duration::from_secs_f64(s.max(0.0)));
    let out = py.detach(|| {
        let mut poll = || {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                signal = Some(PyTimeoutError::new_err(format!("timeout after {} s", timeout_s.unwrap_or(0.0))));
                return true;
            }
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    signal = Some(e);
                    true
                }
            })
        };
        crate::memory::set_budget(budget_bytes);
        let out = World::new(&cfg, net).map_err(|e| (e, 0.0)).and_then(|w| w.run(&mut poll));
        crate::memory::set_budget(None);
        out
    });
    let out = out.map_err(|(e, at_s)| {
        let when = if at_s > 0.0 { format!(" at {at_s:.3} s of simulated time") } else { String::new() };
        PyMemoryError::new_err(format!("{e}{when}"))
    })?;
    if out.interrupted {
        return Err(signal.unwrap_or_else(|| PyKeyboardInterrupt::new_err("simulation interrupted")));
    }
    use crate::output::{ClassRow, ControlRow, FlowRow, LinkRow, RunOutput, Summary, TimeseriesRow};
    let RunOutput { summary, timeseries, flows, links, classes, control, trace, .. } = out;
    let result = PyDict::new(py);
    // Each table's rows go as soon as they are columns (a million flows' rows are 300 MB).
    result.set_item("summary", table(py, Summary::columns(std::slice::from_ref(&summary)))?)?;
    let cols = TimeseriesRow::columns(&timeseries);
    drop(timeseries);
    result.set_item("timeseries", table(py, cols)?)?;
    let cols = FlowRow::columns(&flows);
    drop(flows);
    result.set_item("flows", table(py, cols)?)?;
    result.set_item("links", table(py, LinkRow::columns(&links))?)?;
    result.set_item("classes", table(py, ClassRow::columns(&classes))?)?;
    result.set_item("control", table(py, ControlRow::columns(&control))?)?;
    result.set_item("trace", table(py, trace)?)?;
    Ok(result)
}

fn spec<'py>(py: Python<'py>, s: &ParamSpec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key", s.key)?;
    d.set_item("type", desc(py, &s.ty)?)?;
    d.set_item("default", to_py(py, &s.default)?)?;
    d.set_item("unit", s.unit)?;
    d.set_item("doc", &s.doc)?;
    d.set_item("allowed", &s.allowed)?;
    Ok(d)
}

fn specs<'py>(py: Python<'py>, list: &[ParamSpec]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for s in list {
        out.append(spec(py, s)?)?;
    }
    Ok(out)
}

fn desc<'py>(py: Python<'py>, t: &TypeDesc) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match t {
        TypeDesc::Bool => d.set_item("type", "bool")?,
        TypeDesc::Int => d.set_item("type", "int")?,
        TypeDesc::Float => d.set_item("type", "float")?,
        TypeDesc::Str => d.set_item("type", "str")?,
        TypeDesc::Optional(of) => {
            d.set_item("type", "optional")?;
            d.set_item("of", desc(py, of)?)?;
        }
        TypeDesc::List(of) => {
            d.set_item("type", "list")?;
            d.set_item("of", desc(py, of)?)?;
        }
        TypeDesc::OneOrList(of) => {
            d.set_item("type", "list")?;
            d.set_item("of", desc(py, of)?)?;
            d.set_item("one", true)?; // one value stands for a list of it
        }
        TypeDesc::Record { name, doc, fields } => {
            d.set_item("type", "record")?;
            d.set_item("name", name)?;
            d.set_item("doc", doc)?;
            d.set_item("fields", specs(py, fields)?)?;
        }
        TypeDesc::Union(u) => {
            d.set_item("type", "union")?;
            d.set_item("name", u.name)?;
            d.set_item("tag", u.tag)?;
            d.set_item("default_tag", u.default_tag)?;
            d.set_item("common", specs(py, &u.common)?)?;
            let variants = PyList::empty(py);
            for (name, doc, fields) in &u.variants {
                let v = PyDict::new(py);
                v.set_item("name", name)?;
                v.set_item("doc", doc)?;
                v.set_item("fields", specs(py, fields)?)?;
                variants.append(v)?;
            }
            d.set_item("variants", variants)?;
            let presets = PyList::empty(py);
            for (name, doc, set) in &u.presets {
                let p = PyDict::new(py);
                p.set_item("name", name)?;
                p.set_item("doc", doc)?;
                let s = PyDict::new(py);
                for (k, v) in set {
                    match v {
                        Setting::Str(x) => s.set_item(k, x)?,
                        Setting::Num(x) => s.set_item(k, x)?,
                        Setting::Bool(x) => s.set_item(k, x)?,
                    }
                }
                p.set_item("set", s)?;
                presets.append(p)?;
            }
            d.set_item("presets", presets)?;
            d.set_item("renamed", PyDict::from_sequence(&PyList::new(py, &u.renamed)?.into_any())?)?;
        }
    }
    Ok(d)
}

/// Every parameter (a record type description) and every output table's columns.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("config", desc(py, &SimConfig::desc())?)?;
    let t = PyDict::new(py);
    for (name, cols) in tables() {
        let list = PyList::empty(py);
        for c in cols {
            let d = PyDict::new(py);
            d.set_item("name", c.name)?;
            d.set_item("type", c.ty)?;
            d.set_item("unit", c.unit)?;
            d.set_item("doc", c.doc)?;
            list.append(d)?;
        }
        t.set_item(name, list)?;
    }
    out.set_item("tables", t)?;
    let adaptive: Vec<&str> = crate::policy::POLICIES.iter().filter(|e| e.adaptive).map(|e| e.def.name).collect();
    out.set_item("adaptive_policies", adaptive)?;
    Ok(out)
}

/// Student's t interval at `confidence` over independent values (a sweep point's replications):
/// (mean, half-width, count), or None under two values. The engine's own rule
/// (`precision::stats::t_interval`), so that a run and a point decide alike.
#[pyfunction]
fn t_interval(values: Vec<f64>, confidence: f64) -> Option<(f64, f64, usize)> {
    crate::precision::stats::t_interval(&values, confidence).map(|i| (i.mean, i.halfwidth, i.batches))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(t_interval, m)?)?;
    m.add("ENGINE_VERSION", crate::ENGINE_VERSION)?;
    m.add("PRECISION_METRICS", crate::precision::METRICS.to_vec())?;
    m.add("FQ_CODEL_QUANTUM_BYTES", crate::queue::fq_codel::LINUX_QUANTUM_BYTES)?;
    m.add("ROW_WISE_MAX_ROWS", ROW_WISE_MAX_ROWS)?;
    Ok(())
}
