"""Jitter as a real host has it (issue 72, item 4): Jain's index and the top flow's share behind
drop-tail on this host's kernel, beside the engine's at each send jitter (`tcp.send_jitter_ms`),
at phase_effects' points with `tcp=cubic`. Grid: `conf/experiment/phase_kernel.yaml`; the kernel
runs its points once, without the engine's jitter. docs/fidelity.md, "Phase effects"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, fmt, status_note, stored, sweep_cli, without_backend
from analysis.reproductions.phase_effects import PER_RUN_SHARES

NAME = "phase_kernel"
TITLE = "Phase effects on a real host: the kernel's fairness beside the engine's send jitter (issue 72)"
COMMAND = f"python -m analysis reproduce {NAME}   # as root: the kernel backend builds network namespaces"
METRICS = ("jain", "top", "loss", "util", "seeds")
KERNEL = "kernel"


def phase_kernel(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    if skipped := without_backend("kernel", NAME, TITLE, COMMAND):
        return skipped
    rc_engine = sweep_cli(NAME, results, rerun, grid)
    rc = sweep_cli(NAME, results, rerun, (*grid, f"backend={KERNEL}", "tcp.send_jitter_ms=0")) or rc_engine
    data = points(stored(results, None, NAME))
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=["backend", "N", "jitter ms", "Jain", "top share", "loss rate", "utilization", "seeds"],
        rows=[[*key, *(by[m] for m in METRICS)] for key, by in sorted(data.items())],
        reading=reading(data) + status_note(rc),
    )
    return report, lambda: plot(data)


def points(con: Any) -> dict[tuple, dict[str, float]]:
    """Per (backend, flows, jitter), means over the seeds: Jain's index of the flows' goodputs,
    the largest flow's share of them, loss rate, utilization; and the seeds counted."""
    rows = con.execute(
        f"""{PER_RUN_SHARES}
           SELECT backend, flows, tcp_send_jitter_ms, avg(jain), avg(top), avg(loss_rate), avg(utilization),
                  count(*)
           FROM runs JOIN f USING (run_id, exec_id) WHERE name = ? AND status = 'ok' GROUP BY ALL""",
        [NAME],
    ).fetchall()
    return {tuple(r[:3]): dict(zip(METRICS, r[3:])) for r in rows}


def nearest(data: dict[tuple, dict[str, float]]) -> dict[int, tuple[float, float]]:
    """Per flow count the kernel ran: the engine's jitter whose (Jain, top share) lies nearest the
    kernel's (Euclidean), and that distance."""
    out = {}
    for (backend, n, _), k in data.items():
        engine = {j: by for (b, m, j), by in data.items() if b != KERNEL and m == n}
        if backend == KERNEL and engine:
            dist = {j: ((by["jain"] - k["jain"]) ** 2 + (by["top"] - k["top"]) ** 2) ** 0.5 for j, by in engine.items()}
            best = min(dist, key=dist.__getitem__)
            out[n] = (best, dist[best])
    return out


def reading(data: dict[tuple, dict[str, float]]) -> str:
    kern = {n: by for (b, n, _), by in data.items() if b == KERNEL}
    if not kern:
        return "No kernel run stored."
    text = "Behind drop-tail, means of the seeds (kernel; engine without jitter; engine at the nearest jitter):\n\n"
    for n, (j, d) in sorted(nearest(data).items()):
        k, still, near = kern[n], data.get(("engine", n, 0.0)), data[("engine", n, j)]
        text += f"- {n} flows: Jain {fmt(k['jain'])}, top share {fmt(k['top'])} on the kernel; "
        if still:
            text += f"{fmt(still['jain'])} and {fmt(still['top'])} on the engine without jitter; "
        text += f"nearest at {j:g} ms ({fmt(near['jain'])}, {fmt(near['top'])}; distance {d:.3f})\n"
    return text


def plot(data: dict[tuple, dict[str, float]]) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, metric, label in ((axes[0], "jain", "Jain's index"), (axes[1], "top", "top flow's share")):
        for i, n in enumerate(sorted({k[1] for k in data})):
            keys = sorted(k for k in data if k[1] == n and k[0] != KERNEL)
            ax.plot([k[2] for k in keys], [data[k][metric] for k in keys], "o-", color=f"C{i}", label=f"engine, {n}")
            for k in (k for k in data if k[1] == n and k[0] == KERNEL):
                ax.axhline(data[k][metric], color=f"C{i}", ls="--", lw=1, label=f"kernel, {n}")
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlabel("engine's send jitter, ms (at most)")
        ax.set_ylabel(f"{label} (mean of seeds)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
