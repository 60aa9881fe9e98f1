"""`python -m analysis atlas build +atlas=NAME [overrides]`: every cell's minimum buffer for every
target, searched in rounds (one sweep of every undecided cell's next probes on Ray), stored as
the `atlas` table, and logged as one MLflow parent run (docs/atlas.md)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analysis.atlas.cycle import length
from analysis.atlas.probes import METRICS, Asked, measure
from analysis.atlas.search import CONFIDENCE, Answer, Ask, Probe, step
from analysis.atlas.spec import AtlasSpec, Cell

MAX_ROUNDS = 64


@dataclass
class CellState:
    cell: Cell
    start: int
    cap: int
    runs: dict[int, dict[int, dict[str, float] | None]] = field(default_factory=dict)
    """buffer -> seed -> the run's metrics (None: it failed)."""
    probes: dict[int, Probe] = field(default_factory=dict)
    """buffer -> its probe over the seeds run (`probe_of`)."""

    def asks(self, spec: AtlasSpec) -> dict[int, int]:
        """buffer -> the seeds each target's search wants there next (none: every target decided)."""
        out: dict[int, int] = {}
        for t in spec.targets:
            got = step(self.probes, t, self.start, self.cap, spec.seed_range(), spec.far_rule())
            if isinstance(got, Ask):
                out[got.buffer_pkts] = max(out.get(got.buffer_pkts, 0), got.seeds)
        return out

    def record(self, spec: AtlasSpec, buffer_pkts: int, seed: int, metrics: dict[str, float] | None) -> None:
        self.runs.setdefault(buffer_pkts, {})[seed] = metrics
        self.probes[buffer_pkts] = probe_of(spec, self.runs[buffer_pkts])


@dataclass
class BuildStats:
    cells: int = 0
    rounds: int = 0
    probes: int = 0
    """Distinct (cell, buffer) probes the searches asked for."""
    runs: int = 0
    """Runs (a probe's seeds) the searches asked for, stored or not."""
    runs_new: int = 0
    """Runs simulated by this build; the others were stored already."""
    packets: int = 0
    wall_s: float = 0.0


def search(
    spec: AtlasSpec,
    progress: Callable[[int, int, int, BuildStats], None] | None = None,
    watch: Callable[[Any], None] | None = None,
) -> tuple[list[CellState], BuildStats]:
    """Rounds until every cell's every target is decided (or MAX_ROUNDS); `progress(round, cells
    decided, cells, stats so far)` before each round; `watch` gets each round's sweep counts
    (`sweeps.launch.run_sweep`). A round runs every cell's asked probes' missing seeds as one
    sweep."""
    t0 = time.monotonic()
    states = [CellState(c, spec.first_guess(c), spec.cap(c)) for c in spec.cells()]
    stats = BuildStats(cells=len(states))
    bases: dict[tuple[str, ...], dict[str, Any]] = {}
    stored_ok: set[str] = set()
    for round_no in range(1, MAX_ROUNDS + 1):
        wanted = [(s, asks) for s in states if (asks := s.asks(spec))]
        if not wanted:
            break
        if progress:
            progress(round_no, len(states) - len(wanted), len(states), stats)
        owners = [(s, b, seed) for s, asks in wanted for b, n in sorted(asks.items()) for seed in spec.seeds[:n]]
        owners = [(s, b, seed) for s, b, seed in owners if seed not in s.runs.get(b, {})]
        owners.sort(key=lambda o: -_packets(spec, o[0].cell, o[1]))  # longest first: a round's tail is short
        asked: list[Asked] = [(s.cell, b, seed) for s, b, seed in owners]
        got, new, packets = measure(spec, asked, bases, stored_ok, watch=watch)
        for (s, b, seed), metrics in zip(owners, got):
            s.record(spec, b, seed, metrics)
        stats.rounds, stats.runs = round_no, stats.runs + len(asked)
        stats.runs_new, stats.packets = stats.runs_new + new, stats.packets + packets
        stats.probes = sum(len(s.probes) for s in states)
    stats.wall_s = time.monotonic() - t0
    return states, stats


def _packets(spec: AtlasSpec, cell: Cell, buffer_pkts: int) -> float:
    """A probe's packets at the link's rate, the measure of its cost the round is ordered by."""
    return length(spec, cell, buffer_pkts)["duration_s"] * cell.core_mbps


def probe_of(spec: AtlasSpec, runs: dict[int, dict[str, float] | None]) -> Probe:
    """A buffer's probe over its seeds: NaN if any failed; the means of every metric, and under
    `decide: interval` the 95% t interval of utilization across two or more seeds."""
    from sim._core import t_interval

    if any(m is None for m in runs.values()):
        return Probe(math.nan, None, len(runs))
    values = [m["utilization"] for m in runs.values()]
    metrics = {k: _mean([m.get(k) for m in runs.values()]) for k in METRICS}
    iv = t_interval(values, CONFIDENCE) if spec.decide == "interval" and len(values) > 1 else None
    return Probe(metrics["utilization"] or 0.0, iv[1] if iv else None, len(values), metrics)


def _mean(values: list[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(vals) / len(vals) if vals else None


def answers(spec: AtlasSpec, states: list[CellState]) -> list[tuple[CellState, float, Answer]]:
    """Every (cell, target)'s answer; a search cut short by MAX_ROUNDS is flagged, not answered."""
    out = []
    for s in states:
        for t in spec.targets:
            a = step(s.probes, t, s.start, s.cap, spec.seed_range(), spec.far_rule())  # as the search decided
            if isinstance(a, Ask):
                a = Answer(None, 0, None, ["undecided"], f"not decided in {MAX_ROUNDS} rounds")
            out.append((s, t, a))
    return out
