"""Replications in parallel (MRIP, issue 57): a sweep point whose `precision.max_seeds` is above 1
runs its seeds (seed, seed + 1, ...) at once on Ray and adds seeds until the t interval across
them of every named metric meets its target, as Akaroa-2 does for OMNeT++. docs/precision.md,
"Replications".

`MripGrid` expands each point of a grid into its max_seeds replications, so that every one is
validated and has its run_id before anything runs; `Mrip` decides which of them run. It reads a
point's seeds in order: the point stops at the smallest n >= min_seeds whose first n replications
meet every target. The answer therefore does not depend on which replication finished first,
and a rerun after a kill decides the same from what is stored (a replication past n that was
already running when the point stopped is stored, and not counted)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sim._core import PRECISION_METRICS, t_interval
from sweeps.errors import UsageError
from sweeps.schema import OPERATIONAL
from sweeps.store import POINTS_SCHEMA, Store

STOP_PRECISION = "precision"
STOP_DECIDED = "decided"
STOP_MAX_SEEDS = "max_seeds"
STOP_FAILED = "failed"

Values = tuple[float | None, ...]
"""A replication's PRECISION_METRICS, in that order."""


def replicated(grid: Any) -> bool:
    """Whether any point of the grid has replications (precision.max_seeds > 1)."""
    if any(k.startswith("precision.") and k.endswith("_seeds") for k in grid.swept()):
        return True
    first = next(iter(grid.jobs()))[2]
    return int((first.get("precision") or {}).get("max_seeds") or 1) > 1


@dataclass
class Point:
    """One point of the grid and what is known of its replications (k = seed - first seed)."""

    index: int
    overrides: list[str]
    seed: int
    offset: int
    """Its first replication's job index."""
    min_seeds: int
    max_seeds: int
    metrics: list[str]
    halfwidth: list[float]
    relative: float | None
    confidence: float
    decide_at: float | None = None
    """precision.decide_at: the point also stops once its first metric's interval excludes it."""
    values: dict[int, Values | None] = field(default_factory=dict)
    """Replication k's metrics, or None if it failed."""
    submitted: set[int] = field(default_factory=set)
    n: int = 0
    """The replications behind its answer, once it has stopped."""
    checked: int = 1
    """Prefixes up to this many replications are known to decide nothing (their values are final)."""
    stop: str | None = None
    widest: tuple[float, str] = (math.inf, "")
    """(the widest named interval over its target, that metric) at the last look."""

    def target(self, i: int, mean: float) -> float:
        """Metric i's target half-width (the engine's rule, `precision::PrecisionConfig::target`)."""
        return (
            self.relative * abs(mean) if self.relative is not None else self.halfwidth[min(i, len(self.halfwidth) - 1)]
        )

    def intervals(self, n: int) -> list[tuple[float, float] | None]:
        """(mean, half-width) of every PRECISION_METRICS over the first n replications (half-width
        NaN under two), or None where a value is missing."""
        out: list[tuple[float, float] | None] = []
        for m in range(len(PRECISION_METRICS)):
            vals = [self.values[k][m] for k in range(n)]  # type: ignore[index]
            if any(v is None or math.isnan(v) for v in vals) or not vals:
                out.append(None)
                continue
            iv = t_interval(vals, self.confidence)  # type: ignore[arg-type]
            out.append((iv[0], iv[1]) if iv else (vals[0], math.nan))  # type: ignore[list-item]
        return out

    def _meets(self, ivs: list[tuple[float, float] | None]) -> bool:
        worst = (0.0, "")
        for i, name in enumerate(self.metrics):
            iv = ivs[PRECISION_METRICS.index(name)]
            ratio = math.inf if iv is None or math.isnan(iv[1]) else iv[1] / max(self.target(i, iv[0]), 1e-300)
            worst = max(worst, (ratio, name))
        self.widest = worst
        return worst[0] <= 1.0

    def _decided(self, ivs: list[tuple[float, float] | None]) -> bool:
        """The first named metric's interval lies wholly above or below decide_at."""
        if self.decide_at is None:
            return False
        iv = ivs[PRECISION_METRICS.index(self.metrics[0])]
        return iv is not None and not math.isnan(iv[1]) and abs(iv[0] - self.decide_at) > iv[1]

    def decide(self) -> None:
        """Stops the point once its first n replications meet every target (n >= min_seeds, 2),
        all max_seeds have run, or one of them failed."""
        if self.stop is not None:
            return
        known = 0
        while known in self.values:
            known += 1
        failed = next((k for k in range(known) if self.values[k] is None), None)
        if failed is not None:
            self.stop, self.n = STOP_FAILED, failed
            return
        for n in range(max(self.min_seeds, 2, self.checked + 1), known + 1):
            ivs = self.intervals(n)
            if self._meets(ivs):
                self.stop, self.n = STOP_PRECISION, n
                return
            if self._decided(ivs):
                self.stop, self.n = STOP_DECIDED, n
                return
            self.checked = n
        if known >= self.max_seeds:
            self.stop, self.n = STOP_MAX_SEEDS, self.max_seeds

    def wanted(self, ahead: int, required_only: bool) -> int | None:
        """The next replication to start: any of the first min_seeds, then (unless required_only)
        the next seed while fewer than `ahead` are running."""
        if self.stop is not None:
            return None
        running = len(self.submitted - self.values.keys())
        for k in range(self.max_seeds):
            if k in self.values or k in self.submitted:
                continue
            if k < self.min_seeds:
                return k
            return None if required_only or running >= ahead else k
        return None


def point_of(index: int, overrides: list[str], job: dict[str, Any], offset: int) -> Point:
    p = job.get("precision") or {}
    halfwidth = p.get("halfwidth") or []
    return Point(
        index=index,
        overrides=[
            o for o in overrides if o.lstrip("+").split("=")[0] != "seed" and not o.lstrip("+").startswith(OPERATIONAL)
        ],
        seed=int(job["seed"]),
        offset=offset,
        min_seeds=int(p.get("min_seeds") or 1),
        max_seeds=int(p.get("max_seeds") or 1),
        metrics=list(p.get("metrics") or []),
        halfwidth=[float(h) for h in (halfwidth if isinstance(halfwidth, list) else [halfwidth])],
        relative=p.get("relative"),
        confidence=float(p.get("confidence") or 0.95),
        decide_at=p.get("decide_at"),
    )


class MripGrid:
    """A grid whose every point is expanded into its replications: job index = the point's
    offset + k, with seed = the point's seed + k."""

    def __init__(self, grid: Any) -> None:
        if len(grid.swept().get("seed", ())) > 1:  # one seed for every point (a search's) is no axis
            raise UsageError(
                "seed: give one seed with precision.max_seeds > 1 (its replications are seed, seed + 1, ...)"
            )
        self.inner = grid
        self.points: list[Point] = []
        self._jobs: list[dict[str, Any]] = []
        offset = 0
        for i, overrides, job in grid.jobs():
            self.points.append(point_of(i, overrides, job, offset))
            self._jobs.append(job)
            offset += self.points[-1].max_seeds
        self._offsets = [p.offset for p in self.points]
        self._n = offset

    def __len__(self) -> int:
        return self._n

    def locate(self, i: int) -> tuple[Point, int]:
        """(the point, k) of job i."""
        p = self.points[bisect.bisect_right(self._offsets, i) - 1]
        return p, i - p.offset

    def job_at(self, i: int) -> dict[str, Any]:
        p, k = self.locate(i)
        return {**self._jobs[p.index], "seed": p.seed + k}

    def overrides_at(self, i: int) -> list[str]:
        p, k = self.locate(i)
        return [*p.overrides, f"seed={p.seed + k}"]

    def jobs(self) -> Iterator[tuple[int, list[str], dict[str, Any]]]:
        for i in range(self._n):
            yield i, self.overrides_at(i), self.job_at(i)

    def __getitem__(self, i: int) -> list[str]:
        return self.overrides_at(i)

    def swept(self) -> dict[str, list[Any]]:
        seeds = sorted({p.seed + k for p in self.points for k in range(p.max_seeds)})
        return {**self.inner.swept(), "seed": seeds}


class Mrip:
    """Which replications run, and each point's answer. `known`: run_id -> metrics of the
    replications stored ok; `ahead`: replications a point may have running past its first
    min_seeds (the cluster's cores: one point alone keeps every core busy)."""

    def __init__(self, grid: MripGrid, run_ids: list[str], known: dict[str, Values], ahead: int = 1) -> None:
        self.grid, self.run_ids, self.ahead = grid, run_ids, max(1, ahead)
        self.running: set[str] = set()
        self.of_run: dict[str, list[tuple[Point, int]]] = {}
        for i, rid in enumerate(run_ids):
            p, k = grid.locate(i)
            self.of_run.setdefault(rid, []).append((p, k))
            if rid in known:
                p.values[k] = known[rid]
        for p in grid.points:
            p.decide()
        self.cached = sum(len(p.values) for p in grid.points)

    @property
    def points(self) -> list[Point]:
        return self.grid.points

    def done(self) -> bool:
        return all(p.stop is not None for p in self.points)

    def feed(self, build: Callable[[int], Any]) -> Iterator[Any]:
        """The jobs to run, as `build(job index)`, in the order they are wanted; None while every
        wanted replication is running (the caller waits for a result, then asks again)."""
        while not self.done():
            made = False
            for required_only in (True, False):
                for p in self.points:
                    while (k := p.wanted(self.ahead, required_only)) is not None:
                        p.submitted.add(k)
                        rid = self.run_ids[p.offset + k]
                        if rid in self.running:  # another point's identical replication: its result serves both
                            continue
                        self.running.add(rid)
                        made = True
                        yield build(p.offset + k)
            if not made:
                if not self.running:
                    raise RuntimeError("MRIP: points undecided with no replication running")  # a bug, not a wait
                yield None

    def record(self, run_id: str, ok: bool, summary: dict[str, Any] | None) -> None:
        self.running.discard(run_id)
        values = tuple((summary or {}).get(m) for m in PRECISION_METRICS) if ok else None
        for p, k in self.of_run.get(run_id, []):
            p.values[k] = values
            p.decide()

    def planned(self) -> int:
        """Replications run, stored or still wanted (at least min_seeds a point): the progress total."""
        return sum(max(len(p.values.keys() | p.submitted), p.min_seeds) for p in self.points)

    def status(self) -> str:
        """What the sweep waits for: points stopped, replications running, the widest interval."""
        stopped = [p for p in self.points if p.stop is not None]
        at_max = sum(p.stop == STOP_MAX_SEEDS for p in stopped)
        text = f"points at target {len(stopped) - at_max} of {len(self.points)}"
        if at_max:
            text += f", at max_seeds {at_max}"
        open_ = [p for p in self.points if p.stop is None and p.widest[1]]
        if open_:
            ratio, name = max(p.widest for p in open_)
            text += f", widest {name} {ratio:.1f}x its target"
        return text + f", replications running {len(self.running)}"

    def table(self) -> pa.Table:
        """The stopped points as rows of POINTS_SCHEMA."""
        rows = []
        for p in self.points:
            if p.stop is None:
                continue
            row: dict[str, Any] = {
                "point_index": p.index,
                "overrides": " ".join([*p.overrides, f"seed={p.seed}"]),
                "seed": p.seed,
                "replications": p.n,
                "min_seeds": p.min_seeds,
                "max_seeds": p.max_seeds,
                "stop_reason": p.stop,
                "metrics": ",".join(p.metrics),
                "confidence": p.confidence,
                "run_ids": [self.run_ids[p.offset + k] for k in range(p.n)],
            }
            for m, iv in zip(PRECISION_METRICS, p.intervals(p.n) if p.n else [None] * len(PRECISION_METRICS)):
                row[f"{m}_mean"] = iv[0] if iv else None
                row[f"{m}_halfwidth"] = iv[1] if iv and not math.isnan(iv[1]) else None
                i = p.metrics.index(m) if m in p.metrics else None
                row[f"{m}_target"] = p.target(i, iv[0]) if i is not None and iv else None
            rows.append(row)
        return pa.Table.from_pylist(rows, schema=POINTS_SCHEMA)


def stored_values(store: Store, run_ids: list[str]) -> dict[str, tuple[float | None, ...]]:
    """run_id -> PRECISION_METRICS of the runs among `run_ids` stored ok (in any sweep)."""
    import pyarrow.compute as pc

    data = store.dataset("runs")
    if data is None:
        return {}
    want = pa.array(sorted(set(run_ids)), pa.string())
    rows = data.to_table(
        columns=["run_id", *PRECISION_METRICS],
        filter=pc.field("run_id").isin(want) & (pc.field("status") == "ok"),
    ).to_pylist()
    return {r["run_id"]: tuple(r[m] for m in PRECISION_METRICS) for r in rows}


def store_points(mrip: Mrip, store: Store, sweep_id: str, console: Any) -> tuple[list[dict], dict[int, list[str]]]:
    """The stopped points: stored (`points` table) and the first few printed. Returns their rows
    and, by point_index, the run_ids of every replication each has stored, counted or not (what
    MLflow nests under it: `Tracker.log_points`)."""
    table = mrip.table()
    store.write_points(sweep_id, table)
    rows = table.to_pylist()
    replications = {p.index: [mrip.run_ids[p.offset + k] for k in sorted(p.values)] for p in mrip.points}
    for r in rows[:10]:
        said = ", ".join(
            f"{m} {r[m + '_mean']:.4g} ± {r[m + '_halfwidth']:.2g}"
            if r[m + "_halfwidth"] is not None
            else f"{m} {r[m + '_mean']}"
            for m in r["metrics"].split(",")
            if r[m + "_mean"] is not None
        )
        console.print(
            f"point {r['overrides']}: {said} ({r['replications']} replications, {r['stop_reason']})",
            markup=False,
            highlight=False,
        )
    if len(rows) > 10:
        console.print(f"... {len(rows) - 10} more points: SELECT * FROM points")
    return rows, replications
