//! A run's output columns as handed to Python: short tables as lists of Python values (pyarrow
//! converts a short table fastest as one struct array of rows, `sim/result.py`), long ones as
//! Arrow buffers in `bytes`, so that a million rows cost their bytes rather than a Python object
//! a value (a million flows' table took 1.1 KB a flow in lists). Written here because arrow-rs's
//! pyarrow bridge would bring the whole arrow crate to fill a few flat buffers.
//! Details: docs/engine.md, "Output".

use crate::output::Column;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Tables of at most this many rows go to Python as lists (`sim.result.ROW_WISE_MAX_ROWS`).
pub const ROW_WISE_MAX_ROWS: usize = 64;

/// A column as Python values: a list of floats, ints, bools, strings or lists.
fn as_list<'py>(py: Python<'py>, c: Column) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Column::F64(v) => v.into_pyobject(py)?.into_any(),
        Column::OptF64(v) => v.into_pyobject(py)?.into_any(),
        Column::I64(v) => v.into_pyobject(py)?.into_any(),
        Column::OptI64(v) => v.into_pyobject(py)?.into_any(),
        Column::Bool(v) => v.into_pyobject(py)?.into_any(),
        Column::Str(v) => v.into_pyobject(py)?.into_any(),
        Column::OptStr(v) => v.into_pyobject(py)?.into_any(),
        Column::ListI64(v) => v.into_pyobject(py)?.into_any(),
        Column::ListF64(v) => v.into_pyobject(py)?.into_any(),
        Column::ListStr(v) => v.into_pyobject(py)?.into_any(),
        Column::Label(v) => v.into_pyobject(py)?.into_any(),
    })
}

/// Little-endian values as one `bytes`, written in place.
fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    v: &[T],
    to_le: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len() * N, |b| {
        for (chunk, &x) in b.chunks_exact_mut(N).zip(v) {
            chunk.copy_from_slice(&to_le(x));
        }
        Ok(())
    })
}

/// An Arrow bitmap (least significant bit first) of `bits`.
fn bitmap<'py>(py: Python<'py>, n: usize, bit: impl Fn(usize) -> bool) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, n.div_ceil(8), |b| {
        for (i, byte) in b.iter_mut().enumerate() {
            *byte = (0..8).filter(|k| i * 8 + k < n && bit(i * 8 + k)).fold(0, |acc, k| acc | (1 << k));
        }
        Ok(())
    })
}

/// Arrow's int32 offsets of consecutive items of the given lengths; None past 2^31.
fn offsets(lens: impl Iterator<Item = usize>) -> Option<Vec<i32>> {
    let mut out = vec![0i32];
    let mut end = 0usize;
    for len in lens {
        end += len;
        out.push(i32::try_from(end).ok()?);
    }
    Some(out)
}

/// (length, validity bitmap or None, data, int32 offsets or None, dictionary or None), the buffers
/// of one Arrow array (`sim.result.from_buffers`).
type Buffers<'py> =
    (usize, Option<Bound<'py, PyBytes>>, Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>, Option<Vec<&'static str>>);

/// A column as Arrow buffers; None for one that goes as a list (lists of strings, and strings or
/// lists past int32 offsets).
fn buffers<'py>(py: Python<'py>, c: &Column) -> PyResult<Option<Buffers<'py>>> {
    let i32s = |v: &[i32]| le_bytes(py, v, i32::to_le_bytes);
    let opt_validity = |n: usize, some: &dyn Fn(usize) -> bool| -> PyResult<Option<Bound<'py, PyBytes>>> {
        Ok(if (0..n).all(some) { None } else { Some(bitmap(py, n, some)?) })
    };
    let n = c.len();
    Ok(Some(match c {
        Column::F64(v) => (n, None, le_bytes(py, v, f64::to_le_bytes)?, None, None),
        Column::I64(v) => (n, None, le_bytes(py, v, i64::to_le_bytes)?, None, None),
        Column::OptF64(v) => {
            let data: Vec<f64> = v.iter().map(|x| x.unwrap_or(0.0)).collect();
            (n, opt_validity(v.len(), &|i| v[i].is_some())?, le_bytes(py, &data, f64::to_le_bytes)?, None, None)
        }
        Column::OptI64(v) => {
            let data: Vec<i64> = v.iter().map(|x| x.unwrap_or(0)).collect();
            (n, opt_validity(v.len(), &|i| v[i].is_some())?, le_bytes(py, &data, i64::to_le_bytes)?, None, None)
        }
        Column::Bool(v) => (n, None, bitmap(py, n, |i| v[i])?, None, None),
        Column::Str(v) => {
            let Some(offs) = offsets(v.iter().map(String::len)) else { return Ok(None) };
            let data = PyBytes::new(py, v.concat().as_bytes());
            (n, None, data, Some(i32s(&offs)?), None)
        }
        Column::ListI64(v) => {
            let Some(offs) = offsets(v.iter().map(Vec::len)) else { return Ok(None) };
            (n, None, le_bytes(py, &v.concat(), i64::to_le_bytes)?, Some(i32s(&offs)?), None)
        }
        Column::ListF64(v) => {
            let Some(offs) = offsets(v.iter().map(Vec::len)) else { return Ok(None) };
            (n, None, le_bytes(py, &v.concat(), f64::to_le_bytes)?, Some(i32s(&offs)?), None)
        }
        Column::ListStr(_) | Column::OptStr(_) => return Ok(None), // as lists: short tables only
        Column::Label(v) => {
            // int8 indices into the names in order of first appearance (the schema's dictionary).
            let mut names: Vec<&'static str> = Vec::new();
            let mut idx = Vec::with_capacity(v.len());
            for &s in v {
                let i = names.iter().position(|&n| n == s).unwrap_or_else(|| {
                    names.push(s);
                    names.len() - 1
                });
                let Ok(i) = i8::try_from(i) else { return Ok(None) };
                idx.push(i);
            }
            (n, None, le_bytes(py, &idx, i8::to_le_bytes)?, None, Some(names))
        }
    }))
}

/// A table as {column: values}: lists for a table of at most ROW_WISE_MAX_ROWS rows, buffers
/// (see `Buffers`) for a longer one. Each column is freed once converted.
pub fn table<'py>(py: Python<'py>, cols: Vec<(&'static str, Column)>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    let rows = cols.first().map_or(0, |(_, c)| c.len());
    for (name, c) in cols {
        if rows > ROW_WISE_MAX_ROWS {
            if let Some(b) = buffers(py, &c)? {
                d.set_item(name, b)?;
                continue;
            }
        }
        d.set_item(name, as_list(py, c)?)?;
    }
    Ok(d)
}
