"""What crosses between the sweep's processes: a batch's tables packed as one Arrow IPC stream
(worker to driver, driver to MLflow logger), and child runs written to a SQLite MLflow store in
one transaction (`sweeps.mlflow_bulk`), which must read back through MLflow's client exactly as
runs logged through its API do."""

from __future__ import annotations

import pyarrow as pa

import sim
from sweeps import arrowpack
from sweeps.backends.engine import run as engine_run
from sweeps.worker import JobResult, pack, unpack


def _cfg(i: int) -> sim.SimConfig:
    return sim.SimConfig(flows=1 + i, core_mbps=1, duration_s=0.3, warmup_s=0.1, start_window_s=0, seed=i)


def _result(i: int, details: bool = True) -> JobResult:
    res = engine_run(_cfg(i))
    return JobResult(i, f"r{i}", "ok", None, None, "n", 0.0, 0.0, res.metrics, res.details if details else None)


def test_tables_cross_in_one_stream_and_come_back_equal():
    tables = [pa.table({"a": [1, 2]}), None, pa.table({"a": []}, schema=pa.schema([("a", pa.int64())]))]
    tables.append(pa.table({"a": [3]}))
    back = arrowpack.unpack(arrowpack.pack(tables))
    assert [t is None for t in back] == [t is None for t in tables]
    assert all(b.equals(t) for b, t in zip(back, tables) if t is not None)
    assert arrowpack.pack([pa.table({"a": [1]}), pa.table({"b": ["x"]})]) is None  # two schemas
    assert arrowpack.unpack(arrowpack.pack([None, None])) == [None, None]


def test_a_batch_of_results_crosses_packed_and_comes_back_equal():
    import pickle

    results = [_result(0), _result(1, details=False), _result(2)]
    packed = pickle.loads(pickle.dumps(pack(results)))  # as Ray sends it
    assert all(r.details is None for r in packed.results)  # only the streams carry tables
    back = unpack(packed)
    assert back[1].details is None
    for orig, got in zip(results, back):
        assert got.summary == orig.summary and got.run_id == orig.run_id
        if orig.details is not None:
            assert orig.details.keys() == got.details.keys()
            assert all(got.details[k].equals(orig.details[k]) for k in orig.details)


def test_bulk_child_runs_read_back_as_the_apis_do(tmp_path):
    """The same stored runs logged through the client API (`log`) and in bulk: MLflow's client
    reads back the same tags, params, metrics (latest and history) and artifacts, and status."""
    from mlflow.tracking import MlflowClient

    from sweeps import tracking

    rows = []
    for i in range(3):
        res = _result(i)
        row = sim.result.config_row(_cfg(i))
        row.update(res.summary, run_id=f"r{i}", sweep_id="s", status="ok" if i else "failed", name=None)
        row.update(buffer_policy="fixed", backend="engine")
        rows.append((row, res.details["timeseries"].to_pydict(), res.details["flows"]))
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    client = MlflowClient(uri)
    exp = tracking.experiment_id(client, uri, "x")
    parent = client.create_run(exp).info.run_id
    logger = tracking._ChildLogger(uri, exp, parent, {"seed"}, False)
    for row, ts, flows in rows:
        logger.log(row, ts, flows, None)
    assert logger.log_many([(row, ts, flows, None) for row, ts, flows in rows]) == []

    def view(run):
        rid = run.info.run_id
        tags = {k: v.replace(rid, "ID") for k, v in run.data.tags.items() if k != "mlflow.user"}
        history = {k: [(m.step, m.value) for m in client.get_metric_history(rid, k)] for k in run.data.metrics}
        arts = sorted(a.path for a in client.list_artifacts(rid))
        return (run.info.status, run.info.run_name, tags, run.data.params, run.data.metrics, history, arts)

    found = client.search_runs([exp], filter_string=f"tags.mlflow.parentRunId = '{parent}'")
    by_run: dict[str, list] = {}
    for r in found:
        by_run.setdefault(r.data.tags["run_id"], []).append(view(r))
    assert sorted(by_run) == ["r0", "r1", "r2"]
    for rid, (a, b) in by_run.items():
        assert a == b, rid
    assert {v[0] for views in by_run.values() for v in views} == {"FINISHED", "FAILED"}
    assert any(k.startswith("ts_") for k in by_run["r1"][0][5])  # time series as histories
