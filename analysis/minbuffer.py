"""`python -m analysis min-buffer target=0.95 flows=100,200,300 core_mbps=100 ...`: the smallest
buffer (packets) reaching a target bottleneck utilization at one point or at each point of a
grid (docs/analysis.md, "min-buffer").

Arguments are sweep overrides: a comma list (or range()) is an axis of the grid, a single value
applies to every point; `target` (default 0.95), `seeds` (default 1; the probe's utilization is
the mean over seeds) and `results_dir` are the search's own. Each point is bisected over
buffer_pkts (`analysis/search.py`), starting from its bandwidth-delay product; every probe is a
stored run (named `min_buffer` unless `name=` is given), so repeating a search reuses them. A
point whose windows cap utilization below the target is unreachable before any probe runs.

With a precision (`precision.metrics=[utilization] precision.halfwidth=0.005`, and
`precision.min_seeds`/`max_seeds` for replications), every probe decides with its interval, and a
point whose probe stays within noise of the target is reported undecidable (`analysis/precise.py`).
"""

from __future__ import annotations

import itertools
import math
import sys
import textwrap
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from analysis.rules import bdp_pkts, stanford_pkts
from sweeps.errors import exit_usage

OWN_KEYS = ("target", "seeds", "results_dir")
EXIT_CODES = {0: "every point has its buffer", 1: "some point is unreachable or undecidable", 2: "bad input"}


def help_text() -> str:
    """`min-buffer --help`: its own keys, the precision keys a probe decides by, exit codes."""
    from sim.schema import lookup

    precision = ", ".join(f"precision.{f['key']}" for f in lookup("precision")["fields"])  # type: ignore[index]
    codes = "; ".join(f"{k}: {v}" for k, v in EXIT_CODES.items())
    return "\n".join(
        textwrap.fill(para, 100)
        for para in (
            "The smallest buffer (packets) whose bottleneck utilization reaches a target, at one point or "
            'at each point of a grid, by bisection from the BDP (docs/analysis.md, "min-buffer").\n\n'
            "Its own keys: target= (utilization, default 0.95), seeds= (default 1; a probe reads the mean "
            "of its seeds), results_dir= (default results), name= (the sweep's name, default min_buffer).\n"
            "Every other key is a sweep key (python -m sweeps --help): a single value for every point, a "
            "comma list or range() for a grid axis. buffer_pkts is what it searches.\n"
            f"With a precision every probe decides by its interval ({precision}; docs/precision.md): "
            "precision.metrics=[utilization] precision.halfwidth=0.005, and precision.max_seeds for "
            "replications.\n"
            f"Exit codes: {codes}."
        ).split("\n")
    )


def parse(args: list[str]) -> tuple[dict[str, Any], list[str], dict[str, list[Any]]]:
    """(the search's own settings, base overrides, grid axes) from key=value arguments."""
    try:
        overrides = OverridesParser.create().parse_overrides(args)
    except HydraException as e:
        exit_usage(str(e).splitlines()[0])
    own: dict[str, Any] = {"target": 0.95, "seeds": [1], "results_dir": "results"}
    base: list[str] = []
    axes: dict[str, list[Any]] = {}
    for text, o in zip(args, overrides):
        values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
        key = o.key_or_group
        if key == "buffer_pkts":
            exit_usage("buffer_pkts: is what min-buffer searches; leave it out")
        if key in OWN_KEYS:
            own[key] = values if key == "seeds" else values[0]
        elif o.is_sweep_override():
            axes[key] = values
        else:
            base.append(text)
    target = own["target"]
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target <= 1:
        exit_usage(f"target: must be a utilization in (0, 1], got {target!r}")
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in own["seeds"]):
        exit_usage(f"seeds: must be integers >= 0, got {own['seeds']!r}")
    return own, base, axes


def window_limits(configs: list, target: float) -> list[str | None]:
    """Per point, why the target is out of reach before any probe: its windows cap utilization
    below it (`sim.estimate`); None where they do not."""
    import sim
    from sweeps.api import JobList

    return [sim.estimate(JobList(c, [{}]).specs()[0].sim).window_warning(below=target) for c in configs]


def precision_of(configs: list, own: dict[str, Any]) -> dict[str, Any] | None:
    """The precision the probes decide at (the base config's section), or None; exit 2 if it
    cannot decide a search."""
    from omegaconf import OmegaConf

    p = OmegaConf.to_container(configs[0].precision, resolve=True) if configs else {}
    assert isinstance(p, dict)
    if not p.get("metrics"):
        if int(p.get("max_seeds") or 1) > 1:
            exit_usage("precision.metrics: name utilization, whose interval decides each probe")
        return None
    if "utilization" not in p["metrics"]:
        exit_usage(f"precision.metrics: must name utilization, which min-buffer decides on, got {p['metrics']}")
    if int(p.get("max_seeds") or 1) > 1 and len(own["seeds"]) > 1:
        exit_usage("seeds: give one seed with precision.max_seeds > 1 (its replications are seed, seed + 1, ...)")
    return p


def main(args: list[str]) -> int:
    from rich.console import Console

    from analysis.rounds import RoundClock, Tally, lazy_ray
    from analysis.search import min_buffer_search
    from sweeps.api import compose_config
    from sweeps.heartbeat import Heartbeat
    from sweeps.precheck import precheck

    own, base, axes = parse(args)
    precheck(["-m", *base, *(f"{k}={','.join(map(str, v))}" for k, v in axes.items())])  # bad keys: exit 2
    base = (
        base
        + [f"results_dir={own['results_dir']}"]
        + ([] if any(b.startswith("name=") for b in base) else ["name=min_buffer"])
    )
    points = [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    configs = [compose_config(base + [f"{k}={v}" for k, v in p.items()]) for p in points]
    hi = [max(1, math.ceil(bdp_pkts(c.core_mbps, c.rtt_ms, c.pkt_bytes))) for c in configs]
    target = float(own["target"])
    why = window_limits(configs, target)
    precision = precision_of(configs, own)
    tally, rounds = Tally(), RoundClock()

    def describe() -> str:
        return f"min-buffer: {rounds.text(searches_now)}, {tally.text()}"

    searches_now: list = []

    def progress(round_no: int, searches: list) -> None:
        searches_now[:] = searches
        rounds.start(round_no)

    with Heartbeat(Console(stderr=True), describe), lazy_ray():
        searches = min_buffer_search(
            base,
            points,
            target,
            hi,
            tuple(own["seeds"]),
            own["results_dir"],
            why,
            quiet=True,
            progress=progress,
            precision=precision,
            tally=tally,
        )
    rounds.start(0)
    print(f"min-buffer: {len(searches)} points in {rounds.text(searches, final=True)}; {tally.text()}", file=sys.stderr)
    _print(searches, configs, own, base, precision)
    return 0 if all(s.min_buffer_pkts is not None for s in searches) else 1


def _how(own: dict[str, Any], precision: dict[str, Any] | None) -> str:
    """How each probe decides, for the table's title."""
    if precision is None:
        return f"mean of seeds {own['seeds']}"
    hw = f"±{precision['relative']:.0%}" if precision.get("relative") is not None else f"±{precision['halfwidth']}"
    seeds = f", {precision['min_seeds']}-{precision['max_seeds']} seeds" if int(precision["max_seeds"]) > 1 else ""
    return f"interval {hw} at {precision['confidence']:.0%}{seeds}"


def _print(
    searches: list, configs: list, own: dict[str, Any], base: list[str], precision: dict[str, Any] | None = None
) -> None:
    """The answer as one table, and why any point has none."""
    from rich.console import Console
    from rich.table import Table

    given = " ".join(b for b in base if not b.startswith(("results_dir=", "name=", "precision.")))
    table = Table(title=f"minimum buffer for utilization >= {own['target']} ({_how(own, precision)}) {given}")
    keys = list(searches[0].point) if searches else []
    for col in (*keys, "min buffer pkts", "x BDP", "utilization", "BDP pkts", "Stanford pkts", "probes", "packets"):
        table.add_column(col, justify="right")
    console = Console(file=sys.stdout, width=160)
    notes = []
    for s, c in zip(searches, configs):
        bdp = bdp_pkts(c.core_mbps, c.rtt_ms, c.pkt_bytes)
        b = s.min_buffer_pkts
        hw = s.halfwidths.get(b, 0.0) if b is not None else 0.0
        table.add_row(
            *(str(s.point[k]) for k in keys),
            ("undecidable" if s.undecidable else "unreachable") if b is None else f"{b:,}",
            "" if b is None else f"{b / bdp:.3g}",
            "" if b is None else f"{s.probes[b]:.3f}" + (f" ± {hw:.3f}" if hw else ""),
            f"{bdp:,.0f}",
            f"{stanford_pkts(c.core_mbps, c.rtt_ms, c.flows, c.pkt_bytes):,.1f}",
            str(len(s.probes)),
            f"{s.packets:.3g}",
        )
        if b is None:
            where = " ".join(f"{k}={v}" for k, v in s.point.items())
            kind = "undecidable" if s.undecidable else "unreachable"
            notes.append(f"{kind}: {where + ': ' if where else ''}{s.undecidable or s.unreachable}")
    console.print(table)
    for note in notes:
        console.print(note, markup=False, highlight=False)
