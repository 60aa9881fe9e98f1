"""Dick's 0.5x rows on the engine with ns-3's TCP rules (`tcp.compat=ns3`), on ns-3 3.44 and on
the engine with its own rules (issue 58): whether the SACK gap is the rules' (docs/fidelity.md,
"The SACK gap"). Grid: `conf/experiment/dick_ns3.yaml`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, status_note, stored, sweep_cli, without_ns3
from sweeps.backends import BACKENDS

NAME = "dick_ns3"
TITLE = "Dick's 0.5x rows: the engine with ns-3's TCP rules against ns-3 3.44 (issue 58)"
COMMAND = f"python -m analysis reproduce {NAME}   # needs ns-3: pip install -e '.[ns3]'"
TOL = 0.015
"""Issue 58's bound on each row's utilization (means of the seeds), compat=ns3 against ns-3."""
OWN_RULES = ("tcp.compat=none", "backend=engine")
"""The engine with its own rules, beside: ns-3 runs its rules whatever tcp.compat says."""
SIDES = {("ns3", "ns3"): "ns-3", ("engine", "ns3"): "ours, compat=ns3", ("engine", "none"): "ours, own rules"}


def dick_ns3(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    if skipped := without_ns3(NAME, TITLE, COMMAND):
        return skipped
    rc = max(sweep_cli(NAME, results, rerun, grid), sweep_cli(NAME, results, rerun, (*grid, *OWN_RULES)))
    data = rows_by_side(stored(results, None, NAME), BACKENDS["ns3"].version())
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=["N", "seeds", "util ns-3", "compat=ns3", "own rules", "loss ns-3", "compat=ns3", "own rules"]
        + ["timeouts/run ns-3", "compat=ns3", "own rules", "fast rexmits/run ns-3", "compat=ns3", "own rules"],
        rows=[_row(n, by) for n, by in sorted(data.items())],
        reading=reading(data) + status_note(rc),
    )
    return report, lambda: plot(data)


def rows_by_side(con: Any, ns3_version: str) -> dict[int, dict[str, dict[str, float]]]:
    """Per flow count, per side (`SIDES`), the means over its seeds; only rows all three sides ran,
    over the seeds ns-3 ran (ns-3's runs of `ns3_version` only)."""
    rows = con.execute(
        """WITH ok AS (SELECT * FROM runs WHERE name = ? AND status = 'ok'
                       AND (backend = 'engine' OR backend_version = ?)),
                ns3_seeds AS (SELECT DISTINCT flows, seed FROM ok WHERE backend = 'ns3')
           SELECT backend, tcp_compat, flows, avg(utilization), avg(loss_rate), avg(timeouts),
                  avg(fast_retransmits), count(DISTINCT seed)
           FROM ok JOIN ns3_seeds USING (flows, seed) GROUP BY ALL ORDER BY ALL""",
        [NAME, ns3_version],
    ).fetchall()
    out: dict[int, dict[str, dict[str, float]]] = {}
    for backend, compat, flows, *values in rows:
        side = SIDES.get((backend, compat))
        if side:
            out.setdefault(flows, {})[side] = dict(zip(("util", "loss", "timeouts", "fr", "seeds"), values))
    return {n: by for n, by in out.items() if len(by) == len(SIDES)}


def _row(flows: int, by: dict[str, dict[str, float]]) -> list[Any]:
    sides = list(SIDES.values())
    cells: list[Any] = [flows, by["ns-3"]["seeds"]]
    for metric in ("util", "loss", "timeouts", "fr"):
        cells += [by[side][metric] for side in sides]
    return cells


def gaps(data: dict[int, dict[str, dict[str, float]]], side: str) -> dict[int, float]:
    """Per row, `side`'s utilization less ns-3's."""
    return {n: by[side]["util"] - by["ns-3"]["util"] for n, by in data.items()}


def reading(data: dict[int, dict[str, dict[str, float]]]) -> str:
    if not data:
        return "No row ran on ns-3 and on the engine both ways."
    text = f"Utilization, each side the mean of its seeds, less ns-3's (bound ±{TOL}):\n\n"
    for side in ("ours, compat=ns3", "ours, own rules"):
        by_row = gaps(data, side)
        within = sum(abs(g) <= TOL for g in by_row.values())
        listed = ", ".join(f"N = {n}: {g:+.3f}" for n, g in sorted(by_row.items()))
        text += f"- {side}: {listed}; {within} of {len(by_row)} rows within ±{TOL}\n"
    ratios = {
        side: [by[side]["timeouts"] / by["ns-3"]["timeouts"] for by in data.values()]
        for side in ("ours, compat=ns3", "ours, own rules")
    }
    text += "\nTimeouts per run against ns-3's: " + ", ".join(
        f"{side} {min(r):.2f}-{max(r):.2f}x" for side, r in ratios.items()
    )
    text += ". What each rule does and why ours are the defaults: docs/fidelity.md (The SACK gap)."
    return text


def plot(data: dict[int, dict[str, dict[str, float]]]) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    flows = sorted(data)
    for side, style in zip(SIDES.values(), ("k-o", "C0--s", "C1:^")):
        ax.plot(flows, [data[n][side]["util"] for n in flows], style, label=side)
    ax.set_xlabel("flows N (buffer 0.5 x RTT x C / sqrt(N))")
    ax.set_ylabel("utilization (mean of seeds)")
    ax.set_title("Dick's 0.5x rows, SACK NewReno")
    ax.legend()
    fig.tight_layout()
