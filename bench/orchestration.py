"""Orchestration benchmark: `python -m bench.orchestration` (part of `make bench`).

1,000 jobs of a near-empty simulation on an embedded local Ray, with MLflow off and on: jobs
per second (execution; and until everything is stored and logged) and driver peak memory.
Then a 100,000-point grid: seconds until jobs stream (first results stored), then the same grid
run to its end, with MLflow off and on (jobs per second, and the driver's peak memory: about 8
minutes and 2.5 GB of temporary files with MLflow on). Targets on the 2-core machine (issue
34): >= 250 jobs/s without MLflow, >= 100 with, streaming within 30 s, driver < 1 GB.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
TINY = ["flows=1", "core_mbps=1", "duration_s=0.2", "warmup_s=0.1", "start_window_s=0", "wmax_pkts=4", "rtt_ms=10"]


def _peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _run(tmp: Path, args: list[str], stop_when_streaming: bool = False) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "sweeps",
        "-m",
        *args,
        f"results_dir={tmp / 'results'}",
        f"mlflow.tracking_uri=sqlite:///{tmp / 'mlflow.db'}",
    ]
    env = dict(os.environ, RAY_AUTH_MODE="disabled")
    t0 = time.monotonic()
    # Ctrl-C must reach the sweep: a shell that runs `make bench` in the background (`&` without
    # job control) starts it with SIGINT ignored, and Python then keeps ignoring it, so the
    # streaming case ran its 100,000 jobs to the end.
    proc = subprocess.Popen(
        cmd,
        cwd=tmp,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    peak = 0.0
    streaming_s = None
    while proc.poll() is None:
        peak = max(peak, _peak_rss_mb(proc.pid))
        if stop_when_streaming and streaming_s is None and list((tmp / "results" / "runs").rglob("*.parquet")):
            streaming_s = time.monotonic() - t0
            proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
    err = proc.stderr.read() if proc.stderr else ""
    m = re.search(
        r"ran (\d+) jobs in ([\d.]+) s \(([\d.]+) jobs/s\); stored and logged in ([\d.]+) s "
        r"\(([\d.]+) jobs/s\)",
        err,
    )
    return {
        "wall_s": time.monotonic() - t0,
        "peak_mb": peak,
        "streaming_s": streaming_s,
        "exec_jobs_s": float(m.group(3)) if m else float("nan"),
        "all_jobs_s": float(m.group(5)) if m else float("nan"),
        "rc": proc.returncode,
        "stderr": err,
    }


def duckdb_group_by(tmp: Path) -> tuple[float, float]:
    """10,000 stored runs written as 100 flushes of 100: GROUP BY time (median of 5) over the
    uncompacted parts and after compaction."""
    import datetime as dt
    import statistics

    import pyarrow as pa

    from analysis.db import connect
    from sweeps.store import DETAIL_TABLES, RUNS_SCHEMA, SCHEMAS, Store

    store = Store(str(tmp / "results"))
    now = dt.datetime.now(dt.UTC)
    for f in range(100):
        rows = [
            {
                "run_id": f"r{f}-{i}",
                "exec_id": f"e{f}-{i}",
                "status": "ok",
                "started_at": now,
                "tcp": ("reno", "paced")[i % 2],
                "buffer_pkts": i % 20,
                "flows": 10 * (f % 5 + 1),
                "utilization": (i % 97) / 97,
            }
            for i in range(100)
        ]
        store.flush(
            "bench",
            pa.Table.from_pylist(rows, schema=RUNS_SCHEMA),
            {t: SCHEMAS[t].empty_table() for t in DETAIL_TABLES},
        )
    q = "SELECT tcp, buffer_pkts, flows, avg(utilization), count(*) FROM runs GROUP BY ALL"

    def timed() -> float:
        con = connect(tmp / "results")
        times = []
        for _ in range(5):
            t = time.perf_counter()
            con.execute(q).fetchall()
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    before = timed()
    store.rewrite("bench")
    return before, timed()


def main() -> None:
    console = Console(width=150)
    table = Table(title="sweep orchestration benchmark (embedded local Ray, 2 cores)")
    for col in ("case", "jobs", "exec jobs/s", "stored+logged jobs/s", "wall s", "driver peak MB", "streaming after s"):
        table.add_column(col, justify="right" if col != "case" else "left")
    with tempfile.TemporaryDirectory() as d, console.status("running..."):
        for case, extra in (("MLflow off", ["mlflow.enabled=false"]), ("MLflow on", [])):
            tmp = Path(d) / case.replace(" ", "_")
            tmp.mkdir()
            r = _run(tmp, ["seed=range(0,1000)", *TINY, *extra])
            if r["rc"] != 0:
                console.print(r["stderr"])
            table.add_row(
                case,
                "1,000",
                f"{r['exec_jobs_s']:.0f}",
                f"{r['all_jobs_s']:.0f}",
                f"{r['wall_s']:.1f}",
                f"{r['peak_mb']:.0f}",
                "",
            )
            if not extra:
                from mlflow.tracking import MlflowClient

                client = MlflowClient(f"sqlite:///{tmp / 'mlflow.db'}")
                exp = client.get_experiment_by_name("sweeps")
                found = client.search_runs([exp.experiment_id], max_results=5000)
                children = sum(r.data.tags.get("buffersweep_role") == "child" for r in found)
                console.print(
                    f"MLflow: {children} child runs under "
                    f"{sum(r.data.tags.get('buffersweep_role') == 'parent' for r in found)} parent"
                )
        grid = ["seed=range(0,1000)", "flows=range(1,101)", *TINY[1:], "confirm=false"]
        for case, streaming, extra in (
            ("stopped once streaming", True, ["mlflow.enabled=false"]),
            ("to the end", False, ["mlflow.enabled=false"]),
            ("to the end, MLflow on", False, []),
        ):
            tmp = Path(d) / f"grid100k-{len(case)}-{streaming}"
            tmp.mkdir()
            r = _run(tmp, [*grid, *extra], stop_when_streaming=streaming)
            table.add_row(
                f"100,000-point grid ({case})",
                "100,000",
                "" if streaming else f"{r['exec_jobs_s']:.0f}",
                "" if streaming else f"{r['all_jobs_s']:.0f}",
                f"{r['wall_s']:.1f}",
                f"{r['peak_mb']:.0f}",
                (f"{r['streaming_s']:.1f}" if r["streaming_s"] else "never") if streaming else "",
            )
    console.print(table)
    with tempfile.TemporaryDirectory() as d:
        before, after = duckdb_group_by(Path(d))
    console.print(
        f"DuckDB GROUP BY over 10,000 runs: {before * 1e3:.1f} ms over 100 flush files, "
        f"{after * 1e3:.1f} ms after compaction (target < 100 ms)"
    )


if __name__ == "__main__":
    main()
