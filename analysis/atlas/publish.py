"""An atlas's outputs: a heatmap PNG per target (a panel per sender x discipline: B_min / BDP over
flows and speed at the middle RTT), the HTML page, and the MLflow parent run of its probes holding
them and the table (docs/atlas.md)."""

from __future__ import annotations

import math
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


def publish(spec: AtlasSpec, table: pa.Table) -> list[Path]:
    """Writes the PNGs and the page beside the table, and logs them with it to MLflow."""
    rows = table.to_pylist()
    where = out_dir(spec.results_dir, spec.name)
    where.mkdir(parents=True, exist_ok=True)
    files = heatmaps(rows, spec.name, where)
    page = where / f"atlas_{spec.name}.html"
    page.write_text(render(spec.name, rows))
    files.append(page)
    _log_parent(spec, [*files, Path(spec.results_dir) / "atlas" / f"{spec.name}.parquet"])
    return files


def _log_parent(spec: AtlasSpec, files: list[Path]) -> None:
    """The artifacts on the MLflow parent run whose children are the atlas's probes (created if
    every probe was stored before and no sweep opened it)."""
    from mlflow.tracking import MlflowClient

    from analysis.atlas.probes import AtlasJobs, sweep_keys
    from sweeps.api import compose_config
    from sweeps.launch import sweep_id_of
    from sweeps.tracking import experiment_id, parent_run, tracking_uri

    cfg = compose_config([*spec.base, *sweep_keys(spec)])
    if not cfg.mlflow.enabled:
        return
    name = f"atlas_{spec.name}"
    uri = tracking_uri(cfg.mlflow.tracking_uri)
    client = MlflowClient(tracking_uri=uri)
    exp = experiment_id(client, uri, cfg.mlflow.experiment or name)
    sweep_id = sweep_id_of(name, AtlasJobs(spec, [], {}))
    parent = parent_run(client, [exp], sweep_id)
    run_id = (
        parent.info.run_id
        if parent
        else client.create_run(
            exp, run_name=name, tags={"sweep_id": sweep_id, "buffersweep_role": "parent"}
        ).info.run_id
    )
    for f in files:
        client.log_artifact(run_id, str(f))
    client.set_tag(run_id, "atlas", spec.name)
