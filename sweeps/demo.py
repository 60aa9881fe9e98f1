"""`make demo`: runs the smoke grid on embedded defaults (local Ray, Parquet under results/,
MLflow in mlflow.db), prints the results, and the commands to go further."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
from rich.console import Console
from rich.table import Table

from sweeps.tracking import PROJECT_ROOT


def main() -> None:
    console = Console(soft_wrap=True)
    res = subprocess.run(
        [sys.executable, "-m", "sweeps", "-m", "+experiment=smoke"],
        cwd=PROJECT_ROOT,
        env=dict(os.environ, RAY_AUTH_MODE="disabled"),
    )
    if res.returncode != 0:
        sys.exit(res.returncode)
    con = duckdb.connect()
    rows = con.execute(
        "SELECT tcp, flows, buffer_pkts, round(avg(utilization), 3), round(avg(loss_rate), 4), "
        "round(avg(mean_queue_pkts), 1) FROM read_parquet(?, hive_partitioning = true) "
        "WHERE name = 'smoke' GROUP BY ALL ORDER BY ALL",
        [str(PROJECT_ROOT / "results/runs/**/*.parquet")],
    ).fetchall()
    table = Table(title="smoke sweep: results/runs")
    for col in ("tcp", "flows", "buffer_pkts", "utilization", "loss_rate", "mean_queue_pkts"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(*map(str, r))
    console.print(table)
    console.print(
        "\nNext:\n"
        "  .venv/bin/python -m sweeps -m tcp=reno,paced flows=10,40 buffer_pkts=5,20 wmax_pkts=32 core_mbps=100\n"
        '  .venv/bin/python -m analysis sql "SELECT tcp, buffer_pkts, avg(utilization) FROM runs GROUP BY ALL"\n'
        f"  .venv/bin/mlflow ui --backend-store-uri sqlite:///{PROJECT_ROOT / 'mlflow.db'} --host 127.0.0.1\n"
    )


if __name__ == "__main__":
    main()
