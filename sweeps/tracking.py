"""MLflow tracking from the sweep driver, the single writer: one experiment per preset, one
parent run per sweep (reused when the same sweep is rerun), one child run per stored run.
Child runs are logged by a separate process fed after each Parquet flush, so logging neither
stalls the workers nor competes with the driver loop for the GIL, a flush's runs in one
transaction on a SQLite store (`mlflow_bulk.py`); they are keyed by the `run_id` tag, so a rerun
logs only what is missing. docs/sweeps.md ("MLflow exactly once", the benchmark)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import queue as queue_module
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sweeps import arrowpack
from sweeps.mlflow_points import CHILD_ROLE, point_view, sweep_runs

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MAX_STEPS = 20  # time-series points logged as step metrics (ts_*) per run; all are in Parquet
STEP_METRICS = (
    "time_s",
    "utilization",
    "goodput_mbps",
    "arrivals",
    "drops",
    "queue_mean_pkts",
    "queue_max_pkts",
    "buffer_pkts",
    "mean_cwnd_pkts",
)
"""Every time-series column, logged as ts_<column> with step = the sample's time in milliseconds
(the end of its interval), so a run's charts read in time; ts_time_s holds it in seconds. The
bottleneck link's rows."""
CHART_METRICS = ("ts_queue_mean_pkts", "ts_utilization")
"""The curves a child run's description links to (its chart_route)."""
VIEW_METRICS = ("utilization", "loss_rate", "mean_queue_pkts", "goodput_mbps", "jain_fairness")
"""The metrics a sweep's shared view shows as columns (every metric is one click away)."""
EXPERIMENT_KIND = ("mlflow.experimentKind", "custom_model_development")
"""The experiment's type as MLflow 3 labels it (machine learning, not GenAI). MLflow 3.17's UI
does not read it to choose a page: that is `WORKFLOW` (docs/analysis.md, "MLflow")."""
WORKFLOW = "workflowType=machine_learning"
"""The URL parameter that makes MLflow 3.17's UI show the model-training pages: without it (or the
toggle's saved choice) it shows the GenAI ones, and an experiment opens on an empty traces
overview with a "Detect Issues" pop-up (its `useWorkflowType`: URL, then localStorage, then genai)."""
LOGGER_PROCESSES = 1
"""Logger processes of a large sweep (start_loggers)."""
LOGGER_QUEUE_MESSAGES = 2
"""Messages (a Parquet flush's runs each) that may wait for a logger; past them `submit` waits,
and the sweep's jobs with it. The workers outrun the logger (400-650 jobs/s against 200-240), and
an unbounded queue held the difference: a 100,000-job sweep's driver passed 1.2 GB."""
INLINE_LOGGING_MAX_JOBS = 64
"""Sweeps of at most this many jobs log from a thread of the driver: a logger process costs
about 3 s to spawn and import MLflow on 2 cores, more than such a sweep takes to log (a
bisection round of the Stanford reproduction stored and logged 2 runs in 7-9 s, 1 s in a thread)."""


def column_of(key: str) -> str:
    """The runs column a swept key lands in: `tcp.init_cwnd_pkts` -> `tcp_init_cwnd_pkts`,
    `topology.links.1.buffer_pkts` -> `topology_links`."""
    parts = key.split(".")
    return "_".join(parts[:2]) if len(parts) > 1 and parts[0] not in ("mlflow", "ray", "debug") else key


def tracking_uri(configured: str | None) -> str:
    """`mlflow.tracking_uri`, else $MLFLOW_TRACKING_URI, else mlflow.db in the current directory,
    beside the default `results/` (made absolute: Ray's workers run elsewhere)."""
    uri = configured or os.environ.get("MLFLOW_TRACKING_URI")
    return uri or f"sqlite:///{Path.cwd().resolve() / 'mlflow.db'}"


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _sqlite_wal(uri: str) -> None:
    """Write-ahead logging for a SQLite store: a commit no longer waits for a full fsync of the
    database, which raises child-run logging from ~30 to ~42 runs/s here. The mode is stored in
    the database file, and readers (the MLflow UI) are unaffected."""
    import sqlite3

    if uri.startswith("sqlite:///"):
        con = sqlite3.connect(uri[len("sqlite:///") :])
        try:
            con.execute("PRAGMA journal_mode=WAL")
        finally:
            con.close()


def experiment_id(client: Any, uri: str, name: str) -> str:
    """The MLflow experiment `name`, created if new, opening on its runs table (EXPERIMENT_KIND)."""
    exp = client.get_experiment_by_name(name)
    if exp is None:
        location = None
        if uri.startswith("sqlite:///"):
            # Artifacts next to the database file (MLflow would use ./mlruns of the cwd).
            location = (Path(uri[len("sqlite:///") :]).parent / "mlruns").as_uri()
        return client.create_experiment(name, artifact_location=location, tags=dict([EXPERIMENT_KIND]))
    if exp.tags.get(EXPERIMENT_KIND[0]) != EXPERIMENT_KIND[1]:
        client.set_experiment_tag(exp.experiment_id, *EXPERIMENT_KIND)
    return exp.experiment_id


REPRODUCTIONS_EXPERIMENT = "reproductions"


def log_report(uri: str, name: str, files: list[Path], tags: dict[str, str]) -> str:
    """One finished run named `name` in the experiment `reproductions`, with `files` (a
    reproduction's report and figure) as its artifacts; returns its MLflow run id. Each
    `python -m analysis reproduce NAME` adds one, so a report's history stays browsable."""
    import logging

    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    client = MlflowClient(tracking_uri=uri)
    exp = experiment_id(client, uri, REPRODUCTIONS_EXPERIMENT)
    run = client.create_run(exp, run_name=name, tags={**tags, "git_commit": _git_commit(), "reproduction": name})
    for f in files:
        client.log_artifact(run.info.run_id, str(f))
    client.set_terminated(run.info.run_id, status="FINISHED")
    return run.info.run_id


def chart_route(experiment_id: str, mlflow_run_id: str, keys: tuple[str, ...] = CHART_METRICS) -> str:
    """The UI route of a child run's time-series chart, step (= simulated ms) on its x axis
    (MLflow 3.17's metric page: #/metric?runs=[..]&metric=".."&experiments=[..]&x_axis=step)."""
    q = {
        "runs": json.dumps([mlflow_run_id]),
        "metric": json.dumps(keys[0]),
        "experiments": json.dumps([experiment_id]),
        "plot_metric_keys": json.dumps(list(keys)),
        "x_axis": "step",
    }
    return "#/metric?" + "&".join(f"{k}={quote(v)}" for k, v in q.items())


def run_note(experiment_id: str, mlflow_run_id: str) -> str:
    """A child run's description (its Overview tab): how to read its curves, and a link to them."""
    link = chart_route(experiment_id, mlflow_run_id)
    return (
        "Time series of the bottleneck: metrics `ts_*`, whose step is the simulated time in "
        f"milliseconds. [Queue and utilization over time]({link}). The whole series is in Parquet."
    )


def parent_run(client: Any, experiment_ids: list[str], sweep_id: str) -> Any | None:
    """A sweep's parent run (tags sweep_id and buffersweep_role), if it has one."""
    where = f"tags.sweep_id = '{sweep_id}' and tags.buffersweep_role = 'parent'"
    found = client.search_runs(experiment_ids, filter_string=where, max_results=1)
    return found[0] if found else None


def child_runs(client: Any, experiment_id: str, parent_id: str) -> list[Any]:
    """Every live child run of a sweep's parent run."""
    out, token = [], None
    while True:
        where = f"tags.mlflow.parentRunId = '{parent_id}'"
        page = client.search_runs([experiment_id], filter_string=where, max_results=5000, page_token=token)
        out += list(page)
        token = page.token
        if not token:
            return out


def complete(run: Any) -> bool:
    """A child run logged to its end: ended, and with its summary metrics if its run is ok (the
    logger ends a child last, after its metrics and artifacts; a failed run may have none)."""
    ended = run.info.status in ("FINISHED", "FAILED")
    return ended and (run.data.tags.get("status") != "ok" or bool(run.data.metrics))


def _preference(run: Any) -> tuple[bool, int]:
    """Of two complete children of one run: an ok one, then the earlier."""
    return (run.data.tags.get("status") == "ok", -run.info.start_time)


def parent_name(experiment: str, swept: list[str], n_jobs: int) -> str:
    """What a sweep's parent run is called: `dick_table: tcp x flows x buffer_policy.factor (96)`."""
    return f"{experiment}: {' x '.join(swept) or 'one run'} ({n_jobs})"


def child_name(row: dict[str, Any], swept: set[str]) -> str:
    """A child run's name: its values of the swept axes, in command order (`tcp=reno flows=4`)."""
    point = [
        o.lstrip("+") for o in (row.get("overrides") or "").split() if column_of(o.lstrip("+").split("=")[0]) in swept
    ]
    return " ".join(point) or row["run_id"]


class Tracker:
    def __init__(
        self,
        uri: str,
        experiment: str,
        sweep_id: str,
        swept: list[str] = (),
        n_jobs: int = 0,
        run_plots: bool = False,
        rename: bool = True,
    ) -> None:
        """`swept`: the grid's axes in command order; `run_plots`: a time-series PNG per child;
        `rename`: name an existing parent run after this sweep's axes (not for a repair)."""
        import logging

        from mlflow.tracking import MlflowClient

        # MLflow's INFO lines (creating the database tables...) would cut into the progress bar.
        logging.getLogger("mlflow").setLevel(logging.WARNING)
        self.client = MlflowClient(tracking_uri=uri)
        self.uri, self.sweep_id = uri, sweep_id
        self.swept = {column_of(k) for k in swept}
        self.experiment, self.experiment_id = experiment, experiment_id(self.client, uri, experiment)
        found = parent_run(self.client, [self.experiment_id], sweep_id)
        self.axes = [column_of(k) for k in swept]
        self.view_key = ""
        self.points = 0
        """Replicated points logged (`log_points`): the shared view shows them."""
        name = parent_name(experiment, self.axes, n_jobs)
        if found:
            self.parent_id = found.info.run_id
            if rename:
                self.client.set_tag(self.parent_id, "mlflow.runName", name)
        else:
            parent = self.client.create_run(
                self.experiment_id,
                run_name=name,
                tags={
                    "sweep_id": sweep_id,
                    "buffersweep_role": "parent",
                    "command": " ".join(sys.argv),
                    "git_commit": _git_commit(),
                },
            )
            self.parent_id = parent.info.run_id
        _sqlite_wal(uri)
        self.replaced = 0
        """Child runs deleted by the reconciliation: duplicates, and runs left RUNNING or without
        their metrics by an earlier attempt (their runs are logged again, once)."""
        self.logged = self._reconcile()
        self._inline, self._run_plots = n_jobs <= INLINE_LOGGING_MAX_JOBS, run_plots
        self._queues: list[Any] = []
        self._procs: list[Any] = []
        self._errors: Any = None
        self.errors: list[str] = []
        self._submitted = 0
        self._dead: set[int] = set()  # loggers found dead: what they would have logged waits for a rerun

    def start_loggers(self) -> None:
        """The loggers, started before the jobs (their imports overlap Ray's start-up) or with
        the first run to log (a rerun with nothing to log starts none). One process: it writes a
        flush's runs in one transaction (`mlflow_bulk`), and a second took CPU from the workers
        for nothing. A small sweep logs from a thread instead (INLINE_LOGGING_MAX_JOBS)."""
        if self._queues:
            return
        spawn = mp.get_context("spawn")
        inline = self._inline
        make_queue, start = (queue_module.Queue, threading.Thread) if inline else (spawn.Queue, spawn.Process)
        self._errors = make_queue()
        self._queues = [make_queue(LOGGER_QUEUE_MESSAGES) for _ in range(1 if inline else LOGGER_PROCESSES)]
        args = (self.uri, self.experiment_id, self.parent_id, self.swept, self._run_plots)
        driver = None if inline else os.getpid()
        self._procs = [
            start(target=_logger_main, name=f"mlflow-logger-{i}", daemon=True, args=(*args, q, self._errors, driver))
            for i, q in enumerate(self._queues)
        ]
        for proc in self._procs:
            proc.start()

    def _reconcile(self) -> dict[str, tuple[str, str]]:
        """buffersweep run_id -> (MLflow run id, status) of this sweep's complete child runs, one
        each. What an earlier attempt left (a child RUNNING, or ended without its metrics, or a
        second child of the same run_id) is deleted, so its run is logged again once: MLflow
        exactly once after any crash (issue 36)."""
        keep: dict[str, Any] = {}
        drop = []
        # Its children, and a replicated point's replications, which are nested under the point.
        for r in sweep_runs(self.client, self.experiment_id, self.sweep_id, CHILD_ROLE):
            rid = r.data.tags.get("run_id", "")
            if not complete(r):
                drop.append(r)
            elif rid in keep:
                drop.append(min(keep[rid], r, key=_preference))
                keep[rid] = max(keep[rid], r, key=_preference)
            else:
                keep[rid] = r
        for r in drop:
            self.client.delete_run(r.info.run_id)
        self.replaced = len(drop)
        return {rid: (r.info.run_id, r.data.tags.get("status", "")) for rid, r in keep.items()}

    def submit(self, rows: list[dict[str, Any]], timeseries: list[Any], flows: list[Any]) -> None:
        """Queues stored runs (runs rows, and each run's time-series and flows tables, or None)
        for logging, as one message. A run already logged is logged again only if it failed before
        and succeeded now (into the same child)."""
        items = []
        for row, ts, fl in zip(rows, timeseries, flows):
            known = self.logged.get(row["run_id"])
            if known is not None and not (known[1] == "failed" and row["status"] == "ok"):
                continue
            self.logged[row["run_id"]] = (known[0] if known else "", row["status"])
            items.append((row, ts, fl, known[0] if known else None))
        if not items:
            return
        self.start_loggers()
        for i in range(len(self._queues)):
            part = items[i :: len(self._queues)]
            if part:
                self._put(i, _message(part))
        self._submitted += len(items)

    def _put(self, i: int, message: Any) -> None:
        """Queues a message for logger `i`, waiting while its queue is full, unless the logger
        died: its runs are stored, and a rerun of the command logs them (`backfill`)."""
        while i not in self._dead:
            try:
                self._queues[i].put(message, timeout=1.0)
                return
            except queue_module.Full:
                if not self._procs[i].is_alive():
                    self._dead.add(i)
                    self.errors.append(f"logger {i} died; rerun the command to log the runs it did not")

    def submitted(self) -> int:
        return self._submitted

    def drain(self) -> None:
        """Waits for the loggers to log every child run submitted (then `log_points` may move
        them); `close` does it too."""
        for i in range(len(self._queues)):
            self._put(i, None)
        for proc in self._procs:
            proc.join()
        self._queues, self._procs = [], []
        while self._errors is not None and not self._errors.empty():
            self.errors.append(self._errors.get())

    def close(self, failed: bool, sweep_metrics: dict[str, float] | None = None, name: str | None = None) -> None:
        """Waits for the child runs, logs the sweep's own metrics on the parent, names it after
        what it holds (`name`), and ends it."""
        from mlflow.entities import Metric

        self.drain()
        now = int(time.time() * 1000)
        metrics = [Metric(k, float(v), now, 0) for k, v in (sweep_metrics or {}).items() if v is not None]
        if metrics:
            self.client.log_batch(self.parent_id, metrics=metrics)
        if name:
            self.client.set_tag(self.parent_id, "mlflow.runName", name)
        self.client.set_terminated(self.parent_id, status="FAILED" if failed else "FINISHED")

    def log_points(self, rows: list[dict[str, Any]], replications: dict[int, list[str]]) -> None:
        """A run per replicated point with its replications under it (`mlflow_points`), once
        the loggers have logged them."""
        from sweeps import mlflow_bulk, mlflow_points

        self.drain()
        bulk = mlflow_bulk.BulkWriter(self.client, self.experiment_id) if mlflow_bulk.supported(self.uri) else None

        def axes_of(row: dict[str, Any]) -> list[str]:
            return [
                o.lstrip("+") for o in row["overrides"].split() if column_of(o.lstrip("+").split("=")[0]) in self.swept
            ]

        mlflow_points.log_points(self, rows, replications, axes_of, bulk)
        self.points = len(rows)

    def log_sweep_plot(self, rows: list[dict[str, Any]]) -> None:
        """The sweep's summary plot (`sweep_plot.py`) as `sweep_summary.png` on the parent run."""
        import tempfile

        from sweeps.sweep_plot import summary_png

        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "sweep_summary.png"
            if summary_png(rows, self.axes, path):
                self.client.log_artifact(self.parent_id, str(path))

    def share_view(self, sweep_id: str, metrics: tuple[str, ...] = VIEW_METRICS) -> None:
        """Stores a view of this sweep's runs on the experiment, the way MLflow's "Share" button
        does (tag mlflow.sharedViewState.<key>, read back by `?viewStateShareKey=<key>`): its
        child runs, with the swept axes and the main metrics as columns. The UI otherwise opens
        on a collapsed parent with Dataset / Source / Models columns."""
        columns = [f"params.`{k}`" for k in self.axes] + [f"metrics.`{m}`" for m in metrics]
        # A filter and a metric order also make the table flat (MLflow nests child runs only
        # when unfiltered and ordered by time): this sweep's runs, best utilization first.
        state: dict[str, Any] = {
            "selectedColumns": columns,
            "searchFilter": f"tags.sweep_id = '{sweep_id}' and tags.buffersweep_role = '{CHILD_ROLE}'",
            "orderByKey": f"metrics.`{metrics[0]}`",
            "orderByAsc": False,
        }
        if self.points:  # a replicated sweep: each point's run (its intervals) above its replications
            state |= point_view(sweep_id, [a for a in self.axes if a != "seed"])
        self.client.set_experiment_tag(self.experiment_id, f"mlflow.sharedViewState.{sweep_id}", json.dumps(state))
        self.view_key = sweep_id

    def abort(self) -> None:
        """Ends the sweep's logging after an error: the loggers finish what they hold, the parent
        run is marked FAILED (not left RUNNING)."""
        for i in range(len(self._queues)):
            self._put(i, None)
        for proc in self._procs:
            proc.join(timeout=30)
        self.client.set_terminated(self.parent_id, status="FAILED")

    def urls(self, ui: str) -> tuple[str, str]:
        """The runs table of the experiment, and a compare-runs page of this sweep's child runs
        (MLflow's UI routes: #/experiments/ID/runs and #/compare-runs?runs=[...]&experiments=[...])."""
        # 100 runs: a search loads every run it returns, whole (2 s for 1,000 runs).
        where = f"tags.mlflow.parentRunId = '{self.parent_id}'"
        children = self.client.search_runs([self.experiment_id], filter_string=where, max_results=100)
        runs = json.dumps(sorted(r.info.run_id for r in children))
        exps = json.dumps([self.experiment_id])
        view = f"?viewStateShareKey={self.view_key}&{WORKFLOW}" if self.view_key else f"?{WORKFLOW}"
        return (
            f"{ui}/#/experiments/{self.experiment_id}/runs{view}",
            f"{ui}/#/compare-runs?runs={quote(runs)}&experiments={quote(exps)}&{WORKFLOW}",
        )


def job_times_ms(row: dict[str, Any]) -> tuple[int | None, int | None]:
    """(start, end) of a run's job in ms since the epoch, from its row's `started_at` and
    `job_wall_s`: MLflow's run table shows the job's real start and duration (they showed 0 ms,
    the moment of logging, when runs were logged after they ran)."""
    started, wall = row.get("started_at"), row.get("job_wall_s")
    if started is None:
        return None, None
    # Whole ms, as the store keeps `started_at`.
    start = int(started.timestamp() * 1000) if hasattr(started, "timestamp") else int(float(started) * 1000)
    return start, start + round((wall or 0.0) * 1000)


def _message(items: list[tuple]) -> tuple:
    """(row, timeseries, flows, existing MLflow id) items as one queue message, their tables
    packed (`arrowpack`: multiprocessing would pickle each column of each table)."""
    rows, ts, flows, existing = (list(x) for x in zip(*items))
    return rows, existing, arrowpack.pack(ts) or ts, arrowpack.pack(flows) or flows


def _items(message: tuple) -> list[tuple]:
    """A message's items again, each time series as columns of Python lists."""
    rows, existing, ts, flows = message
    ts = arrowpack.unpack(ts) if isinstance(ts, arrowpack.Packed) else ts
    flows = arrowpack.unpack(flows) if isinstance(flows, arrowpack.Packed) else flows
    return [(r, t.to_pydict() if t is not None else {}, f, e) for r, t, f, e in zip(rows, ts, flows, existing)]


def _logger_main(
    uri: str, experiment_id: str, parent_id: str, swept: set[str], run_plots: bool, q: Any, errors: Any, driver: Any
) -> None:
    """The logging process: logs child runs, a message (a Parquet flush's runs) at a time,
    until it receives None, or until the driver that started it is gone (killed with -9, it
    sends nothing: audit D6 found loggers left running). `driver`: its pid, passed in, as a
    driver killed while this process starts would leave getppid() the reaper's; None for a
    thread of the driver."""
    import queue

    logger = _ChildLogger(uri, experiment_id, parent_id, swept, run_plots)
    while True:
        try:
            message = q.get(timeout=1.0)
        except queue.Empty:
            if driver is not None and os.getppid() != driver:  # re-parented: the driver died
                return
            continue
        if message is None:
            return
        for err in logger.log_many(_items(message)):
            errors.put(err)


def _param_text(value: Any) -> str:
    """A param's text: 250, not 250.0, for a whole number of packets."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)[:500]


class _ChildLogger:
    def __init__(self, uri: str, experiment_id: str, parent_id: str, swept: set[str], run_plots: bool) -> None:
        from mlflow.tracking import MlflowClient

        import sim
        from sim.result import config_row
        from sweeps import mlflow_bulk

        self.client = MlflowClient(tracking_uri=uri)
        self.experiment_id, self.parent_id, self.swept, self.run_plots = experiment_id, parent_id, swept, run_plots
        self._defaults = config_row(sim.SimConfig())
        self._defaults.pop("engine_version")
        self.bulk = mlflow_bulk.BulkWriter(self.client, experiment_id) if mlflow_bulk.supported(uri) else None

    def _params(self, row: dict[str, Any]) -> dict[str, str]:
        """The sweep axes, every field that differs from the engine defaults, and the buffer
        policy. (The full resolved config is the run's config.json artifact: logging ~40 params
        per run would halve the logging rate of a SQLite store.)"""
        out = {k: row[k] for k in self._defaults if k in self.swept or row.get(k) != self._defaults[k]}
        always = ("tcp", "buffer_pkts", "flows", "buffer_policy", "name", "backend")
        out.update({k: row[k] for k in always if row.get(k) is not None})  # a failed run has no buffer_pkts
        out.update({k: row[k] for k in self.swept if k in row})
        for echo in [k for k in out if k.startswith("config_")]:  # config_buffer_pkts: only where it did not run
            if out[echo] == row.get(echo.removeprefix("config_")):
                del out[echo]
        return {k: _param_text(v) for k, v in out.items()}

    def child(self, row: dict[str, Any], ts: dict[str, list], flows: Any, now: int) -> Any:
        """The child run of a stored run: tags, params, metrics and artifacts."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from sim.result import SUMMARY_NUMBERS
        from sweeps.mlflow_bulk import ChildRun
        from sweeps.sweep_plot import bottleneck_rows

        # Six significant digits: readable in the UI's table; the exact values are in Parquet.
        metrics = [
            (k, float(f"{float(row[k]):.6g}"), now, 0)
            for k in SUMMARY_NUMBERS
            if row.get(k) is not None and row[k] == row[k]
        ]
        rows = bottleneck_rows(ts)
        n = len(rows)
        if n:
            stride = max(1, -(-n // MAX_STEPS))
            for i in rows[stride - 1 :: stride]:
                step = round(ts["time_s"][i] * 1000)  # MLflow's charts then read in milliseconds
                for k in STEP_METRICS:
                    v = ts[k][i]
                    if v is not None and v == v:
                        metrics.append((f"ts_{k}", float(v), now, step))
        # The flows table (a few kB) beside the config: per-flow goodput, RTT, losses.
        files = {"config.json": json.dumps(row, default=str).encode()}  # indent: 10x slower (pure Python)
        if flows is not None:
            sink = pa.BufferOutputStream()
            # Without statistics, dictionaries, compression or page index: a few kB either
            # way, and 0.7 ms a run instead of 1.1 (the logger's largest cost).
            pq.write_table(flows, sink, write_statistics=False, use_dictionary=False, compression="NONE")
            files["flows.parquet"] = sink.getvalue().to_pybytes()
        if self.run_plots:
            import tempfile

            from sweeps.sweep_plot import timeseries_png

            with tempfile.TemporaryDirectory() as d:
                timeseries_png(ts, Path(d) / "timeseries.png")
                files["timeseries.png"] = (Path(d) / "timeseries.png").read_bytes()
        tags = {
            "mlflow.parentRunId": self.parent_id,
            "run_id": row["run_id"],
            "sweep_id": row["sweep_id"],
            "status": row["status"],
            "buffersweep_role": "child",
        }
        if row.get("stop_reason"):  # a run that stops on precision says why it stopped
            tags["stop_reason"] = row["stop_reason"]
        status = "FINISHED" if row["status"] == "ok" else "FAILED"
        start_ms, end_ms = job_times_ms(row)
        return ChildRun(
            child_name(row, self.swept)[:250], tags, self._params(row), metrics[:1000], status, files, start_ms, end_ms
        )

    def log_many(self, items: list[tuple]) -> list[str]:
        """Logs (row, timeseries, flows, existing MLflow id) items; returns the errors. New runs go
        in one transaction on a SQLite store; a run logged before (a failed run retried), or a
        batch the bulk path refused, through the client API, one by one."""
        now = int(time.time() * 1000)
        errors = []
        one_by_one = [it for it in items if it[3] or self.bulk is None]
        fresh = [it for it in items if not (it[3] or self.bulk is None)]
        if fresh:
            try:
                runs = [self.child(row, ts, flows, now) for row, ts, flows, _ in fresh]
                self.bulk.write(runs, now, lambda rid: run_note(self.experiment_id, rid))
            except Exception as e:  # noqa: BLE001 - the transaction left nothing: log them one by one
                errors.append(f"bulk logging of {len(fresh)} runs failed, logged one by one: {type(e).__name__}: {e}")
                one_by_one += fresh
        for it in one_by_one:
            try:
                self.log(*it)
            except Exception as e:  # noqa: BLE001 - tracking must not kill the sweep
                errors.append(f"{type(e).__name__}: {e}")
        return errors

    def log(self, row: dict[str, Any], ts: dict[str, list], flows: Any, existing: str | None) -> None:
        """One run through the client API."""
        from mlflow.entities import Metric, Param, RunTag

        from sweeps.mlflow_bulk import NOTE, write_artifacts

        child = self.child(row, ts, flows, int(time.time() * 1000))
        if existing:
            rid = existing
            self.client.set_tag(rid, "status", row["status"])
            params = []  # MLflow params are immutable; a run_id's config never changes
            # A failed run that succeeded now: its artifacts are this run's (the flows table).
            artifact_uri = self.client.get_run(rid).info.artifact_uri
        else:
            run = self.client.create_run(
                self.experiment_id, run_name=child.name, tags=child.tags, start_time=child.start_ms
            )
            rid = run.info.run_id
            artifact_uri = run.info.artifact_uri
            params = [Param(k, v) for k, v in child.params.items()]
        tags = [RunTag(NOTE, run_note(self.experiment_id, rid))]
        metrics = [Metric(k, v, t, step) for k, v, t, step in child.metrics]
        self.client.log_batch(rid, metrics=metrics, params=params[:100], tags=tags)
        if artifact_uri:
            write_artifacts(artifact_uri, child.files)
        self.client.set_terminated(rid, status=child.status, end_time=child.end_ms)
