"""An atlas's outputs: a heatmap PNG per target (a panel per sender x discipline: B_min / BDP over
flows and speed at the middle RTT), the HTML page, and the MLflow parent run of its probes holding
them and the table (docs/atlas.md)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from analysis.atlas.page import render
from analysis.atlas.spec import AtlasSpec


def out_dir(results_dir: str, name: str) -> Path:
    return Path(results_dir) / "atlas" / name


def heatmaps(rows: list[dict[str, Any]], name: str, where: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    tcps, queues = sorted({r["tcp"] for r in rows}), sorted({r["queue"] for r in rows})
    rtts = sorted({r["rtt_ms"] for r in rows})
    rtt = rtts[len(rtts) // 2]
    for target in sorted({r["target"] for r in rows}):
        fig, axes = plt.subplots(len(tcps), len(queues), figsize=(3.2 * len(queues), 2.6 * len(tcps)), squeeze=False)
        for i, tcp in enumerate(tcps):
            for j, queue in enumerate(queues):
                _panel(
                    axes[i][j],
                    [
                        r
                        for r in rows
                        if (r["tcp"], r["queue"], r["target"], r["rtt_ms"], r["traffic"])
                        == (tcp, queue, target, rtt, "none")
                    ],
                    f"{tcp} / {queue}",
                )
        fig.suptitle(f"atlas {name}: minimum buffer / BDP for utilization >= {target:g} (RTT {rtt:g} ms; grey: none)")
        fig.tight_layout()
        path = where / f"atlas_{name}_{target:g}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        out.append(path)
    return out


def _panel(ax: Any, cells: list[dict[str, Any]], title: str) -> None:
    flows = sorted({r["flows"] for r in cells})
    speeds = sorted({r["core_mbps"] for r in cells})
    grid = [[math.nan] * len(flows) for _ in speeds]
    for r in cells:
        if r["min_buffer_bdp"] is not None:
            grid[speeds.index(r["core_mbps"])][flows.index(r["flows"])] = math.log2(r["min_buffer_bdp"])
    ax.imshow(grid, cmap="coolwarm", vmin=-8, vmax=3, origin="lower", aspect="auto")
    ax.set_facecolor("#ddd")
    for j, i in [(j, i) for j in range(len(speeds)) for i in range(len(flows))]:
        v = grid[j][i]
        ax.text(i, j, "-" if math.isnan(v) else f"{2**v:.2g}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(flows)), [str(f) for f in flows], fontsize=7)
    ax.set_yticks(range(len(speeds)), [f"{s:g}" for s in speeds], fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("flows", fontsize=7)
    ax.set_ylabel("Mb/s", fontsize=7)


def publish(spec: AtlasSpec, table: pa.Table, states: list[Any]) -> list[Path]:
    """Writes the PNGs and the page beside the table, and logs them, the table and a run per
    cell to MLflow."""
    rows = table.to_pylist()
    where = out_dir(spec.results_dir, spec.name)
    where.mkdir(parents=True, exist_ok=True)
    files = heatmaps(rows, spec.name, where)
    page = where / f"atlas_{spec.name}.html"
    page.write_text(render(spec.name, rows))
    files.append(page)
    log_cells(spec, rows, states, [*files, Path(spec.results_dir) / "atlas" / f"{spec.name}.parquet"])
    return files


def log_cells(spec: AtlasSpec, rows: list[dict[str, Any]], states: list[Any], files: list[Path]) -> None:
    """The atlas in MLflow (issue 70: a child run a probe, 5,388 for `small`, took 850 MB): one
    parent run with the table, page and heatmaps as artifacts, and one run a cell under it with
    its axes as params, each target's answer and bracket (`0.95/min_buffer_pkts`, `_lo_pkts`,
    `_hi_pkts`) and its probes as series over the buffer (`probe/utilization`,
    `probe/halfwidth`, `probe/seeds`, step = packets). A rebuild replaces the cells' runs."""
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    from analysis.atlas.probes import AtlasJobs, sweep_keys
    from sweeps import mlflow_bulk
    from sweeps.api import compose_config
    from sweeps.launch import sweep_id_of
    from sweeps.mlflow_points import sweep_runs
    from sweeps.tracking import experiment_id, parent_run, tracking_uri

    cfg = compose_config([*spec.base, *sweep_keys(spec)[:2]])
    if not cfg.mlflow.enabled:
        return
    name = f"atlas_{spec.name}"
    uri = tracking_uri(cfg.mlflow.tracking_uri)
    client = MlflowClient(tracking_uri=uri)
    exp = experiment_id(client, uri, cfg.mlflow.experiment or name)
    sweep_id = sweep_id_of(name, AtlasJobs(spec, [], {}))
    parent = parent_run(client, [exp], sweep_id)
    parent_id = (
        parent.info.run_id
        if parent
        else client.create_run(
            exp, run_name=name, tags={"sweep_id": sweep_id, "buffersweep_role": "parent", "atlas": spec.name}
        ).info.run_id
    )
    client.set_tag(
        parent_id, "mlflow.runName", f"{name}: {len(states)} cells, {sum(len(s.probes) for s in states)} probes"
    )
    for old in sweep_runs(client, exp, sweep_id, "cell"):
        client.delete_run(old.info.run_id)
    cells = [
        _cell_run(spec, s, [r for r in rows if _key(r) == _key(s.cell.__dict__)], parent_id, sweep_id) for s in states
    ]
    if mlflow_bulk.supported(uri):
        mlflow_bulk.BulkWriter(client, exp).write(cells, int(time.time() * 1000), lambda rid: "")
    else:
        for c in cells:
            run = client.create_run(exp, run_name=c.name, tags=c.tags)
            client.log_batch(
                run.info.run_id,
                metrics=[Metric(*m) for m in c.metrics],
                params=[Param(k, v) for k, v in c.params.items()],
            )
            client.set_terminated(run.info.run_id)
    for f in files:
        client.log_artifact(parent_id, str(f))
    client.set_terminated(parent_id)


def _key(r: dict[str, Any]) -> tuple:
    return tuple(
        r[k] if k in ("tcp", "queue", "traffic") else float(r[k])
        for k in ("tcp", "queue", "flows", "core_mbps", "rtt_ms", "traffic")
    )


def _cell_run(spec: AtlasSpec, state: Any, rows: list[dict[str, Any]], parent_id: str, sweep_id: str) -> Any:
    from sweeps.mlflow_bulk import ChildRun

    c = state.cell
    now = int(time.time() * 1000)
    metrics: list[tuple[str, float, int, int]] = []
    for r in rows:
        for col in ("min_buffer_pkts", "lo_pkts", "hi_pkts"):
            if r[col] is not None:
                metrics.append((f"{r['target']:g}/{col}", float(r[col]), now, 0))
    for b, p in sorted(state.probes.items()):
        if not math.isnan(p.utilization):
            metrics.append(("probe/utilization", float(f"{p.utilization:.6g}"), now, b))
        if p.halfwidth is not None:
            metrics.append(("probe/halfwidth", float(f"{p.halfwidth:.6g}"), now, b))
        metrics.append(("probe/seeds", float(p.seeds), now, b))
    flags = sorted({f for r in rows for f in (r["flags"] or "").split(",") if f})
    axes = {
        "tcp": c.tcp,
        "queue": c.queue,
        "flows": c.flows,
        "core_mbps": c.core_mbps,
        "rtt_ms": c.rtt_ms,
        "traffic": c.traffic,
    }
    name = " ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in axes.items() if k != "traffic" or v != "none"
    )
    tags = {
        "mlflow.parentRunId": parent_id,
        "sweep_id": sweep_id,
        "buffersweep_role": "cell",
        "atlas": spec.name,
        "flags": ",".join(flags),
    }
    params = {k: str(v) for k, v in {**axes, "pkt_bytes": spec.pkt_bytes()}.items()}
    return ChildRun(name, tags, params, metrics, "FINISHED")
