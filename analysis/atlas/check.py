"""`python -m analysis atlas check +atlas=small cells=20 check_seeds=5`: spot checks of a built
atlas against independent searches (issue 59, acceptance 3). Random cells are searched again from
scratch by `min-buffer`'s linear bisection (`analysis/search.py`, a different search) over more
seeds (from CHECK_SEED: none is the atlas's); an answer agrees when the check lands within one of
the atlas's bisection steps of it, between its largest miss and its answer x RESOLUTION
(docs/atlas.md, "Spot checks")."""

from __future__ import annotations

import math
import random
from typing import Any

from analysis.atlas.search import RESOLUTION
from analysis.atlas.spec import AtlasSpec, load
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
    agree = total = 0
    with atlas_ray(spec):
        for key in picked:
            cell = next(c for c in spec.cells() if (c.tcp, c.queue, c.flows, c.core_mbps, c.rtt_ms, c.traffic) == key)
            base = [*spec.base, *spec.groups(cell), *sweep_keys(spec)]
            point = spec.point(cell)
            for r in (
                r for r in rows if (r["tcp"], r["queue"], r["flows"], r["core_mbps"], r["rtt_ms"], r["traffic"]) == key
            ):
                s = min_buffer_search(
                    base, [point], r["target"], [spec.first_guess(cell)], seeds, spec.results_dir, quiet=True
                )[0]
                ok = agrees(r, s.min_buffer_pkts)
                agree, total = agree + ok, total + 1
                print(
                    f"{' '.join(map(str, key))} target {r['target']:g}: atlas {r['min_buffer_pkts']} "
                    f"(missed {r['lo_pkts']}), {len(seeds)} seeds {s.min_buffer_pkts}: {'agrees' if ok else 'DIFFERS'}"
                )
    print(f"{agree} of {total} answers agree within one bisection step")
    return 0 if agree == total else 1
