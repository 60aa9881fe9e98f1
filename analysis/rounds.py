"""A search's rounds as one sweep (issue 69): every round's probes are jobs of the same sweep,
keyed on what the search is, so that `--sweep latest` is the last search and a repeated search
finds its probes stored without starting a sweep. docs/analysis.md, "min-buffer"."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from analysis.db import NoResults, connect, ok_run_values, run_values
from sweeps.api import job_run_ids, run_points
from sweeps.heartbeat import clock


@dataclass
class Tally:
    """Probes a search simulated, and those it found stored (a repeated search's)."""

    simulated: int = 0
    """Probes sent to simulation (those of the round running included)."""
    stored: int = 0
    replicated: int = 0
    """Probes decided by replications (a replicated point's seeds, run or found stored)."""

    def text(self) -> str:
        if self.replicated:
            return f"{self.replicated} replicated probes"
        if not self.simulated:
            return f"nothing simulated, {self.stored} probes found stored"
        return f"{self.simulated} probes run" + (f", {self.stored} found stored" if self.stored else "")


def search_identity(base: list[str], points: list[dict[str, Any]], *how: Any) -> str:
    """What makes a search the same search (its settings, points and bounds): its sweep's
    identity, so that every round, and a repeat of the search, adds to one sweep. Where runs are
    logged (`mlflow.*`, `reproduce --no-mlflow`) is not what is searched, as a sweep's identity
    leaves it out too (`sweeps.launch.sweep_id_of`)."""
    what = sorted(o for o in base if not o.startswith("mlflow."))
    return hashlib.sha256(json.dumps([what, points, how], default=str).encode()).hexdigest()


def stored_or_run(
    base: list[str],
    asked: list[dict[str, Any]],
    results_dir: str,
    search: str,
    quiet: bool,
    tally: Tally | None,
    columns: tuple[str, ...],
) -> tuple[list[str], dict[str, tuple]]:
    """The run_ids of the probes `asked` and `columns` of those stored ok (by run_id), running
    those not stored as a round of `search`'s sweep: a round found stored starts no sweep (a
    repeated search answers in seconds)."""
    run_ids = job_run_ids(base, asked)
    try:
        got = _stored_values(results_dir, run_ids, columns)
    except NoResults:
        got = {}
    missing = len(set(run_ids) - set(got))
    if tally is not None:
        tally.simulated += missing
        tally.stored += len(run_ids) - missing
    if missing:
        start_ray_once()
        _, run_ids = run_points(base, asked, quiet=quiet, search=search)
        _STORED.pop(results_dir, None)
        got = ok_run_values(results_dir, run_ids, *columns)
    return run_ids, got


_STORED: dict[str, Any] = {}
"""results_dir -> a DuckDB connection to what it held at the last round that ran nothing."""


def _stored_values(results_dir: str, run_ids: list[str], columns: tuple[str, ...]) -> dict[str, tuple]:
    """`ok_run_values` on one connection per results_dir while the search stores nothing (a
    connection costs 0.15 s: a repeated search's 15 rounds took 5 s); a new one if another
    process moved the files meanwhile."""
    import duckdb

    for attempt in (0, 1):
        if results_dir not in _STORED:
            _STORED[results_dir] = connect(results_dir, documented=False)
        try:
            return run_values(_STORED[results_dir], run_ids, *columns)
        except duckdb.IOException:
            _STORED.pop(results_dir)
            if attempt:
                raise
    raise AssertionError("unreachable")


_RAY: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("lazy_ray", default=None)


@contextlib.contextmanager
def lazy_ray() -> Iterator[None]:
    """Ray for a search's rounds: started by the first round that simulates and kept for the
    others (a sweep alone would start and stop it each round), stopped at the end if started
    here; a search whose rounds are all stored starts none."""
    started = [False]
    token = _RAY.set(started)
    try:
        yield
    finally:
        _RAY.reset(token)
        if started[0]:
            import ray

            ray.shutdown()


def start_ray_once() -> None:
    started = _RAY.get()
    if started is not None and not started[0]:
        from sweeps.raycfg import start_ray

        started[0] = start_ray({})


class RoundClock:
    """A search's rounds in time, for its progress line: the round running, the points decided,
    and an ETA from the rounds' mean length times the bisection steps the slowest point has left."""

    def __init__(self) -> None:
        self.t0 = self.round_t0 = time.monotonic()
        self.round_no = 0
        self.lengths: list[float] = []

    def start(self, round_no: int) -> None:
        """Round `round_no` starts (0: the search ended)."""
        now = time.monotonic()
        if self.round_no:
            self.lengths.append(now - self.round_t0)
        self.round_no, self.round_t0 = round_no, now

    def text(self, searches: list[Any], final: bool = False) -> str:
        elapsed = clock(time.monotonic() - self.t0)
        if final:
            return f"{len(self.lengths)} rounds, {elapsed}"
        if not self.round_no:
            return f"starting ({elapsed})"
        decided = sum(s.done for s in searches)
        left = max((steps_left(s) for s in searches if not s.done), default=0)
        mean = sum(self.lengths) / len(self.lengths) if self.lengths else None
        eta = "eta ?" if mean is None else f"eta {clock(max(0.0, mean * left - (time.monotonic() - self.round_t0)))}"
        return (
            f"round {self.round_no} running ({clock(time.monotonic() - self.round_t0)}), {decided} of "
            f"{len(searches)} points decided, elapsed {elapsed}, {eta}"
        )


def steps_left(s: Any) -> int:
    """Rounds a bisection search (`analysis.search.Search`) has left, this one included: one to
    verify its guess (and one more per doubling, counted once), then one per halving of its bracket."""
    span = max(s.hi - max(s.lo, 0), 1)
    return (0 if s.verified else 1) + max(1, math.ceil(math.log2(span)))
