"""`python -m analysis atlas check +atlas=small cells=20 check_seeds=5`: spot checks of a built
atlas against independent searches (issue 59, acceptance 3). Random cells are searched again from
scratch by `min-buffer`'s linear bisection (`analysis/search.py`, a different search, started at
RTT x C / sqrt(N) and capped where the atlas is) over more seeds (from CHECK_SEED: none is the
atlas's). An answer agrees when the check lands within one of the atlas's bisection steps of it,
between its largest miss and its answer x RESOLUTION, or when the check's own seeds cannot tell
them apart: the atlas's step overlaps the range that the check's 95% intervals leave open
(docs/atlas.md, "Spot checks")."""

from __future__ import annotations

import math
import random
from typing import Any

from analysis.atlas.search import RESOLUTION
from analysis.atlas.spec import AtlasSpec, Cell, load
from sweeps.errors import exit_usage

OWN = ("cells", "check_seeds", "pick_seed")
CHECK_SEED = 101
"""The checks' first seed: their runs share none with the atlas's (seeds from 1)."""


def _own(args: list[str]) -> tuple[dict[str, int], list[str]]:
    own = {"cells": 20, "check_seeds": 5, "pick_seed": 1}
    rest = []
    for a in args:
        key, _, value = a.partition("=")
        if key in OWN:
            if not value.isdigit() or int(value) < 1:
                exit_usage(f"{key}: must be a whole number >= 1, got {value!r}")
            own[key] = int(value)
        else:
            rest.append(a)
    return own, rest


def agrees(atlas_row: dict[str, Any], checked: int | None) -> bool:
    if checked is None or atlas_row["min_buffer_pkts"] is None:
        return checked is None and atlas_row["min_buffer_pkts"] is None
    lo, hi = atlas_row["lo_pkts"], atlas_row["min_buffer_pkts"]
    return lo - 1 <= checked <= math.ceil(hi * RESOLUTION)


def settled(values: dict[int, list[float]], target: float) -> tuple[int, int | None]:
    """(largest probed buffer whose interval over the seeds lies below `target`, under the second
    (0: none); smallest probed buffer whose interval lies above it (None: none)): at 95%, the
    minimum buffer is above the first and, if there is one, no more than the second."""
    from sim._core import t_interval

    def interval(v: list[float]) -> tuple[float, float]:
        got = t_interval(v, 0.95) if len(v) > 1 else None
        return (got[0] - got[1], got[0] + got[1]) if got else (-math.inf, math.inf)

    bounds = {b: interval(v) for b, v in values.items() if v}
    above = min((b for b, (low, _) in bounds.items() if low >= target), default=None)
    below = max((b for b, (_, up) in bounds.items() if up < target and (above is None or b < above)), default=0)
    return below, above


def within_noise(atlas_row: dict[str, Any], below: int, above: int | None) -> bool:
    """The atlas's step [largest miss - 1, answer x RESOLUTION] overlaps the check's open range
    (below, above]; an unreachable answer needs a check that never surely meets the target."""
    if atlas_row["min_buffer_pkts"] is None:
        return above is None
    return below < math.ceil(atlas_row["min_buffer_pkts"] * RESOLUTION) and (
        above is None or above >= atlas_row["lo_pkts"] - 1
    )


def main(args: list[str]) -> int:
    from analysis.atlas.probes import atlas_ray, sweep_keys
    from analysis.db import connect
    from analysis.search import min_buffer_search

    own, rest = _own(args)
    spec: AtlasSpec = load(rest)
    cur = connect(spec.results_dir).execute("SELECT * FROM atlas WHERE atlas = ?", [spec.name])
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    cells = sorted({(r["tcp"], r["queue"], r["flows"], r["core_mbps"], r["rtt_ms"], r["traffic"]) for r in rows})
    if not cells:
        exit_usage(f"atlas: {spec.name!r} is not built in {spec.results_dir}; build it first")
    picked = random.Random(own["pick_seed"]).sample(cells, min(own["cells"], len(cells)))
    seeds = tuple(range(CHECK_SEED, CHECK_SEED + own["check_seeds"]))  # none the atlas's own
    agree = noisy = total = 0
    with atlas_ray(spec):
        for key in picked:
            cell = next(c for c in spec.cells() if (c.tcp, c.queue, c.flows, c.core_mbps, c.rtt_ms, c.traffic) == key)
            base = [*spec.base, *spec.groups(cell), *sweep_keys(spec)]
            point = spec.point(cell)
            for r in (
                r for r in rows if (r["tcp"], r["queue"], r["flows"], r["core_mbps"], r["rtt_ms"], r["traffic"]) == key
            ):
                s = min_buffer_search(
                    base,
                    [point],
                    r["target"],
                    [first_guess(spec, cell)],
                    seeds,
                    spec.results_dir,
                    quiet=True,
                    caps=[spec.cap(cell)],
                )[0]
                below, above = settled(s.seed_values, r["target"])
                step, close = agrees(r, s.min_buffer_pkts), within_noise(r, below, above)
                agree, noisy, total = agree + step, noisy + (close and not step), total + 1
                said = "agrees" if step else "agrees within the check's intervals" if close else "DIFFERS"
                print(
                    f"{' '.join(map(str, key))} target {r['target']:g}: atlas {r['min_buffer_pkts']} "
                    f"(missed {r['lo_pkts']}), {len(seeds)} seeds {s.min_buffer_pkts} "
                    f"(95%: above {below}, at most {above}): {said}"
                )
    print(f"{agree + noisy} of {total} answers agree: {agree} within one bisection step, {noisy} within the intervals")
    return 0 if agree + noisy == total else 1


def first_guess(spec: AtlasSpec, cell: Cell) -> int:
    """RTT x C / sqrt(N): the atlas starts at the BDP, so the check starts elsewhere, and a cell
    whose utilization dips at the BDP (DCTCP's many flows) is still searched from below it."""
    from analysis.rules import stanford_pkts

    return max(1, round(stanford_pkts(cell.core_mbps, cell.rtt_ms, cell.flows, spec.pkt_bytes())))
