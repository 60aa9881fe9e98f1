"""Issue 72, items 2 and 3: BBR, CUBIC and Reno with Linux's settings on the engine, this host's
kernel and ns-3, on the points of bbr_shallow_loss's and modern_backends' grids the kernel can run
in real time (`conf/experiment/kernel_grid*.yaml`). The engine is held to the kernel with
kernel_vs_engine's bounds (issue 72's); ns-3 stands beside them where it runs the sender: CUBIC,
and BBR without the long-term mode its TcpBbr lacks (docs/fidelity.md, "Against the kernel")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, fmt, status_note, stored, sweep_cli, without_backend
from analysis.reproductions.crosscheck import points
from analysis.reproductions.kernel_vs_engine import CHECKS, bounds_text, equality_axes, verdicts
from analysis.reproductions.kernel_vs_engine import METRICS as PAIR_METRICS
from sweeps.backends import BACKENDS

NAME = "kernel_grid"
NS3_PRESETS = {"cubic": "kernel_grid_ns3", "bbr": "kernel_grid_ns3_bbr"}
"""ns-3's side, per sender: CUBIC on kernel_grid's configs, and BBR with `tcp.long_term=false`."""
TITLE = "BBR, CUBIC and Reno: the engine, this host's Linux TCP and ns-3 (issue 72)"
COMMAND = f"python -m analysis reproduce {NAME}   # as root (the kernel backend); ns-3's side if it is installed"
KEYS = ("tcp", "core_mbps", "flows", "buffer_policy_factor")
SHOWN = (*CHECKS, "retrans")
METRICS = {**PAIR_METRICS, "retrans": "avg(retransmits / flows)"}
"""kernel_vs_engine's, and each flow's retransmissions in the measured time."""


def kernel_grid(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides narrowing every preset's grid (the tests' reduced one)."""
    if skipped := without_backend("kernel", NAME, TITLE, COMMAND):
        return skipped
    rc = sweep_cli(NAME, results, rerun, grid)
    data = points(
        stored(results, None, NAME), NAME, KEYS, BACKENDS["kernel"].version(), METRICS, "runs", "kernel", verdicts
    )
    ns3 = BACKENDS["ns3"].missing() is None
    asked = next((g.removeprefix("tcp=").split(",") for g in grid if g.startswith("tcp=")), list(NS3_PRESETS))
    rest = tuple(g for g in grid if not g.startswith("tcp="))  # each ns-3 preset has its own sender
    for preset in [p for tcp, p in NS3_PRESETS.items() if tcp in asked] if ns3 else []:
        rc = max(rc, sweep_cli(preset, results, rerun, rest))
        for key, means in ns3_means(results, preset).items():
            if key in data:
                data[key]["ns3"] = means
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=[
            "tcp",
            "Mb/s",
            "N",
            "x BDP",
            *(f"{m} kernel / engine / ns-3" for m in SHOWN),
            "engine within (u, l, j, d)",
        ],
        rows=[_row(k, by) for k, by in data.items()],
        reading=reading(data, ns3) + status_note(rc),
    )
    return report, lambda: plot(data)


def ns3_means(results: str, preset: str) -> dict[tuple, dict[str, Any]]:
    """ns-3's seed means per point of `preset` (its own configs: BBR's differ from kernel_grid's)."""
    con = stored(results, "ns3", preset)
    cols, aggs = ", ".join(KEYS), ", ".join(f"{sql} AS {k}" for k, sql in METRICS.items())
    rows = con.execute(
        f"SELECT {cols}, {aggs} FROM runs WHERE name = ? AND status = 'ok' AND backend_version = ? GROUP BY ALL",
        [preset, BACKENDS["ns3"].version()],
    ).fetchall()
    return {tuple(r[: len(KEYS)]): dict(zip(METRICS, r[len(KEYS) :])) for r in rows}


def _row(key: tuple, by: dict[str, Any]) -> list[Any]:
    tcp, mbps, flows, factor = key
    n = by.get("ns3", {})
    cells = [f"{fmt(by['kernel'][m])} / {fmt(by['engine'][m])} / {fmt(n.get(m))}" for m in SHOWN]
    marks = " ".join({True: m, False: "**no**", None: "-"}[v] for m, v in zip("uljd", by["check"]))
    return [tcp, f"{mbps:g}", flows, f"{factor:g}", *cells, marks]


def reading(data: dict[tuple, dict[str, Any]], ns3: bool) -> str:
    if not data:
        return "No point ran on both the engine and the kernel."
    within = {k for k, by in data.items() if all(v is not False for v in by["check"])}
    text = (
        f"Bounds (issue 72's, as kernel_vs_engine's): {bounds_text()}. **The engine: {len(within)} of {len(data)} "
        "points within every bound.**\n"
    )
    for tcp in sorted({k[0] for k in data}):
        mine = [k for k in data if k[0] == tcp]
        line = f"\n- {tcp}: the engine {sum(k in within for k in mine)} of {len(mine)}"
        theirs = [k for k in mine if "ns3" in data[k]]
        if theirs:
            near = sum(all(v is not False for v in verdicts(data[k]["ns3"], data[k]["kernel"])) for k in theirs)
            line += f"; ns-3 {near} of {len(theirs)}" + (" (without the long-term mode)" if tcp == "bbr" else "")
        text += line
    if not ns3:
        text += f"\n\nns-3's side not run: {BACKENDS['ns3'].missing()}"
    beyond = [(k, by) for k, by in data.items() if k not in within]
    if beyond:
        text += "\n\nEvery point where the engine is beyond a bound (kernel / engine):\n\n"
        for (tcp, mbps, flows, factor), by in beyond:
            missed = [
                f"{m} {fmt(by['kernel'][m])} / {fmt(by['engine'][m])}"
                for m, v in zip(CHECKS, by["check"])
                if v is False
            ]
            text += f"- {tcp}, {mbps:g} Mb/s, {flows} flows, {factor:g} BDP: {'; '.join(missed)}\n"
    return text


def plot(data: dict[tuple, dict[str, Any]]) -> None:
    labels = {"utilization": "utilization", "loss": "loss rate", "jain": "Jain's fairness"}
    labels |= {"delay": "queueing delay (ms)", "retrans": "retransmits a flow"}
    fig, axes = plt.subplots(1, len(labels), figsize=(23, 4.6))
    for ax, (metric, label) in zip(axes, labels.items()):
        for backend, marker in (("engine", "o"), ("ns3", "x")):
            for i, tcp in enumerate(sorted({k[0] for k in data})):
                xy = [
                    (by["kernel"][metric], by[backend][metric])
                    for k, by in data.items()
                    if k[0] == tcp and backend in by
                ]
                xy = [(x, y) for x, y in xy if x is not None and y is not None]
                if xy:
                    ax.plot(*zip(*xy), marker, color=f"C{i}", mfc="none", label=f"{tcp}, {backend}")
        equality_axes(ax, metric, f"kernel: {label}", f"engine (o), ns-3 (x): {label}")
    axes[0].legend(fontsize=7)
    fig.suptitle("Each point: one set-up (sender, speed, flows, buffer), mean of its seeds; the line is equality")
    fig.tight_layout()
