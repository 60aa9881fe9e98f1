"""`python -m analysis atlas build +atlas=NAME [overrides]`: every cell's minimum buffer for every
target, searched in rounds (one sweep of every undecided cell's next probes on Ray), stored as
the `atlas` table, and logged as one MLflow parent run (docs/atlas.md)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analysis.atlas.probes import METRICS, Asked, measure
from analysis.atlas.search import Answer, Probe, decided, next_buffer
from analysis.atlas.spec import AtlasSpec, Cell

MAX_ROUNDS = 64


@dataclass
class CellState:
    cell: Cell
    start: int
    cap: int
    probes: dict[int, Probe] = field(default_factory=dict)

    def wanted(self, targets: list[float]) -> set[int]:
        return {b for t in targets if (b := next_buffer(self.probes, t, self.start, self.cap)) is not None}


@dataclass
class BuildStats:
    cells: int = 0
    rounds: int = 0
    probes: int = 0
    """Distinct (cell, buffer) probes the searches asked for (each run once per seed)."""
    runs_new: int = 0
    """Runs simulated by this build; the others were stored already."""
    packets: int = 0
    wall_s: float = 0.0


def search(
    spec: AtlasSpec, progress: Callable[[int, int, int, BuildStats], None] | None = None
) -> tuple[list[CellState], BuildStats]:
    """Rounds until every cell's every target is decided (or MAX_ROUNDS); `progress(round, cells
    decided, cells, stats so far)` before each round."""
    t0 = time.monotonic()
    states = [CellState(c, spec.first_guess(c), spec.cap(c)) for c in spec.cells()]
    stats = BuildStats(cells=len(states))
    bases: dict[tuple[str, ...], dict[str, Any]] = {}
    stored_ok: set[str] = set()
    for round_no in range(1, MAX_ROUNDS + 1):
        wanted = [(s, b) for s in states for b in sorted(s.wanted(spec.targets))]
        if not wanted:
            break
        if progress:
            progress(round_no, sum(not s.wanted(spec.targets) for s in states), len(states), stats)
        asked: list[Asked] = [(s.cell, b, seed) for s, b in wanted for seed in spec.seeds]
        got, new, packets = measure(spec, asked, bases, stored_ok)
        n = len(spec.seeds)
        for k, (s, b) in enumerate(wanted):
            s.probes[b] = mean_probe(got[k * n : (k + 1) * n])
        stats.rounds, stats.probes = round_no, stats.probes + len(wanted)
        stats.runs_new, stats.packets = stats.runs_new + new, stats.packets + packets
    stats.wall_s = time.monotonic() - t0
    return states, stats


def mean_probe(probes: list[Probe]) -> Probe:
    """The mean over seeds (NaN if any seed's run failed); one seed keeps its interval."""
    if any(math.isnan(p.utilization) for p in probes):
        return Probe(math.nan)
    n = len(probes)
    metrics = {m: _mean([p.metrics.get(m) for p in probes]) for m in METRICS}
    return Probe(metrics["utilization"] or 0.0, probes[0].halfwidth if n == 1 else 0.0, metrics)


def _mean(values: list[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(vals) / len(vals) if vals else None


def answers(spec: AtlasSpec, states: list[CellState]) -> list[tuple[CellState, float, Answer]]:
    """Every (cell, target)'s answer; a search cut short by MAX_ROUNDS is flagged, not answered."""
    out = []
    for s in states:
        for t in spec.targets:
            a = decided(s.probes, t, s.cap) or Answer(None, 0, None, ["undecided"], f"not decided in {MAX_ROUNDS}")
            out.append((s, t, a))
    return out
