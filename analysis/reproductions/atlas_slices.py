"""The atlas against two reproductions it overlaps (issue 59, acceptance 3): Dick's table and
Appenzeller et al.'s minimum buffers for 95%, each built as an atlas preset on their set-ups
(conf/atlas/dick.yaml, appenzeller.yaml) and set beside what `dick_table` and
`stanford_min_buffer` measure (docs/atlas.md, "Spot checks")."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from analysis.atlas.search import RESOLUTION
from analysis.reproductions.common import Report, plain_log_x, ray_session, status_note, stored, sweep_cli
from analysis.reproductions.dick import engine_points
from analysis.reproductions.stanford import STANFORD_PROFILES, profile_min_buffers

NAME = "atlas_slices"
SLICES = ("dick", "appenzeller")


def crossing(curve: list[tuple[int, float]], target: float) -> tuple[str, float]:
    """Where a utilization curve [(buffer, utilization)] first reaches `target`: ("at", buffer),
    log-linear between the two measured points around it; ("below", smallest buffer) if that one
    reaches it already; ("above", largest buffer) if none does."""
    curve = sorted(curve)
    if curve[0][1] >= target:
        return "below", curve[0][0]
    for (b0, u0), (b1, u1) in zip(curve, curve[1:]):
        if u1 >= target:
            frac = (target - u0) / (u1 - u0)
            return "at", math.exp(math.log(b0) + frac * (math.log(b1) - math.log(b0)))
    return "above", curve[-1][0]


def agrees(row: dict[str, Any], where: str, ref: float | None) -> bool:
    """An atlas answer B (its largest miss `lo_pkts`) agrees with a reference buffer within one of
    its bisection steps (B / RESOLUTION to B x RESOLUTION) or inside its bracket; a reference
    bound ("below" or "above" the measured buffers) agrees when B is on its side, to one step."""
    b = row["min_buffer_pkts"]
    if b is None or ref is None:
        return b is None and (ref is None or where == "above")
    if where == "below":
        return b <= ref * RESOLUTION
    if where == "above":
        return b >= ref / RESOLUTION
    return b / RESOLUTION <= ref <= b * RESOLUTION or row["lo_pkts"] <= ref <= b


def build(results: str, preset: str, grid: tuple[str, ...]) -> list[dict[str, Any]]:
    """One slice's atlas, built (its stored probes reused) and written; its table's rows."""
    from analysis.atlas.build import answers, search
    from analysis.atlas.spec import load
    from analysis.atlas.table import rows, write

    spec = load([f"+atlas={preset}", *grid, f"results_dir={results}"])
    states, _ = search(spec)
    table = rows(spec, answers(spec, states))
    write(spec.results_dir, spec.name, table)
    return table.to_pylist()


def dick_rows(results: str, rerun: bool, atlas: list[dict[str, Any]]) -> tuple[list[list[Any]], int]:
    """Each Dick cell and target: the atlas's answer against where `dick_table`'s utilization over
    0.5x-3x RTT x C / sqrt(N) reaches the target (the same cells, seeds and set-up)."""
    tcps = sorted({r["tcp"] for r in atlas})
    flows = sorted({r["flows"] for r in atlas})
    rc = sweep_cli("dick_table", results, rerun, [f"tcp={','.join(tcps)}", f"flows={','.join(map(str, flows))}"])
    points = engine_points(stored(results, None, "dick_table"), "dick_table")
    out = []
    for r in atlas:
        curve = [(b, u) for (t, n, _), (b, (u, _)) in points.items() if (t, n) == (r["tcp"], r["flows"])]
        where, ref = crossing(curve, r["target"]) if curve else ("above", None)
        out.append(_row("dick", r, where, ref))
    return out, rc


def appenzeller_rows(results: str, rerun: bool, atlas: list[dict[str, Any]]) -> list[list[Any]]:
    """Each Appenzeller cell: the atlas's answer against `stanford_min_buffer`'s bisection to the
    packet (ns-2 2.35's RTO defaults; the same seeds and set-up)."""
    name, _, extra = STANFORD_PROFILES[0]
    found, _ = profile_min_buffers(results, name, extra, tuple(sorted({r["flows"] for r in atlas})), rerun)
    return [_row("appenzeller", r, "at", found.get(r["flows"])) for r in atlas]


def _row(slice_: str, r: dict[str, Any], where: str, ref: float | None) -> list[Any]:
    b = r["min_buffer_pkts"]
    shown = "none" if ref is None else f"{'< ' if where == 'below' else '> ' if where == 'above' else ''}{ref:.0f}"
    ratio = b / ref if b is not None and ref and where == "at" else None
    return [slice_, r["tcp"], r["flows"], r["target"], b, r["lo_pkts"], shown, ratio, agrees(r, where, ref)]


HEADER = [
    "slice",
    "tcp",
    "flows",
    "target",
    "atlas B_min",
    "atlas's largest miss",
    "reproduction",
    "atlas / it",
    "agrees",
]


def atlas_slices(
    results: str, rerun: bool, grid: dict[str, tuple[str, ...]] | None = None
) -> tuple[Report, Callable[[], None]]:
    """`grid`: per slice, axis overrides narrowing its preset (the tests' reduced slices)."""
    grid = grid or {}
    with ray_session():
        atlas = {s: build(results, s, grid.get(s, ())) for s in SLICES}
        rows = appenzeller_rows(results, rerun, atlas["appenzeller"])
    dick, rc = dick_rows(results, rerun, atlas["dick"])
    rows = dick + rows
    agree = sum(1 for r in rows if r[-1])
    ratios = [r[7] for r in rows if r[7] is not None]
    reading = (
        f"{agree} of {len(rows)} answers agree within one bisection step ({RESOLUTION:.3f}x) or inside the "
        f"atlas's bracket; where both give a number, atlas / reproduction is {min(ratios):.2f}-{max(ratios):.2f}."
        if ratios
        else f"{agree} of {len(rows)} answers agree."
    )
    report = Report(
        name=NAME,
        title="The atlas's Dick and Appenzeller slices against their reproductions (issue 59)",
        command=f"python -m analysis reproduce {NAME}",
        header=HEADER,
        rows=[[*r[:-1], "yes" if r[-1] else "no"] for r in rows],
        notes=[
            "Each slice is an atlas preset on its reproduction's set-up (conf/atlas/dick.yaml, appenzeller.yaml). "
            "Dick: the reproduction's buffer is where dick_table's utilization (mean of 3 seeds at 0.5x-3x "
            "RTT x C / sqrt(N)) reaches the target, log-linear between its points ('<' or '>': outside them). "
            "Appenzeller: stanford_min_buffer's bisection to the packet (mean of 2 seeds, min RTO 200 ms)."
        ],
        reading=reading + status_note(rc),
    )
    return report, lambda: _plot(rows)


def _plot(rows: list[list[Any]]) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, slice_ in zip(axes, SLICES):
        keys = sorted({(r[1], r[3]) for r in rows if r[0] == slice_})
        for tcp, target in keys:
            r = sorted((x for x in rows if x[:2] == [slice_, tcp] and x[3] == target), key=lambda x: x[2])
            (line,) = ax.plot([x[2] for x in r], [x[4] for x in r], "o-", label=f"{tcp} {target:g}: atlas")
            refs = [(x[2], float(x[6])) for x in r if x[6][0].isdigit()]
            if refs:
                ax.plot(*zip(*refs), "x", color=line.get_color(), ms=9, label=f"{tcp} {target:g}: reproduction")
        plain_log_x(ax)
        ax.set_yscale("log")
        flows = sorted({r[2] for r in rows if r[0] == slice_})
        ax.set_xticks(flows, [str(f) for f in flows])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.set_xlabel("flows")
        ax.set_ylabel("minimum buffer (packets)")
        ax.set_title({"dick": "Dick 2005: 45 Mb/s, RTT 80-120 ms", "appenzeller": "Appenzeller 2004: 155 Mb/s"}[slice_])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
