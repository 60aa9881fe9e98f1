"""What every reproduction shares: the report record, running a preset or a job list, and small
plotting and statistics helpers."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import matplotlib

matplotlib.use("Agg")

import sim  # noqa: E402
from analysis.db import connect, counted_replications  # noqa: E402
from sweeps.api import run_points  # noqa: E402
from sweeps.backends import BACKENDS  # noqa: E402


@dataclass
class Report:
    name: str
    title: str
    command: str
    rows: list[list[Any]] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    reading: str = ""
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        out = [
            f"# {self.title}",
            "",
            f"Engine version: `{sim.ENGINE_VERSION}`.",
            "",
            "Reproduce with:",
            "",
            "```sh",
            self.command,
            "```",
            "",
            f"![{self.name}]({self.name}.png)",
            "",
        ]
        if self.rows:
            out += ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
            out += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in self.rows]
            out.append("")
        out += [*self.notes, "", "## Reading", "", self.reading, ""]
        return "\n".join(out)


def fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


OTHER_BACKENDS: ContextVar[tuple[str, ...]] = ContextVar("other_backends", default=())
"""Backends besides the engine that a reproduction also runs its grid on (`python -m analysis
reproduce NAME --backends ns2`); its report shows every backend stored, whether run now or before."""


STORED_ONLY: ContextVar[bool] = ContextVar("stored_only", default=False)
"""`python -m analysis reproduce NAME --stored`: run nothing, and report the runs stored (a long
ns-3 grid part done). The sweeps are skipped; a reproduction that searches as it runs (a
min-buffer bisection) cannot report without running, and raises `NeedsRuns`."""


MLFLOW: ContextVar[bool] = ContextVar("mlflow", default=True)
"""`python -m analysis reproduce NAME --no-mlflow`: besides the report, the reproduction's own
sweeps and builds leave MLflow alone (`mlflow_overrides`)."""


def mlflow_overrides() -> list[str]:
    """The sweep override that keeps a reproduction's jobs out of MLflow under `--no-mlflow`."""
    return [] if MLFLOW.get() else ["mlflow.enabled=false"]


class NeedsRuns(RuntimeError):
    """A reproduction asked to run jobs under `--stored`."""


def stored(results: str, backend: str | None, name: str) -> Any:
    """The DuckDB views over `results`, limited to preset `name`'s runs (those another preset
    stored first included), to this engine version's runs (every backend's run_id keys on it; a
    preset re-run after a version bump keeps its sweep_id, and the older runs stay stored beside
    the new ones), if given to one backend's, and for a replicated preset to the replications its
    points counted (as their intervals do)."""
    con = connect(results, name=name, backend=backend, engine_version=sim.ENGINE_VERSION)
    counted_replications(con)
    return con


def backend_override() -> list[str]:
    """The sweep override that adds the other backends to a preset's grid (none by default)."""
    extra = OTHER_BACKENDS.get()
    return [f"backend={','.join(('engine', *extra))}"] if extra else []


def backend_means(con: Any, name: str, keys: Sequence[str], metric: str) -> dict[str, dict[tuple, list[float]]]:
    """Per backend, per value of `keys`, the `metric` of every ok run of preset `name` (seeds apart)."""
    cols = ", ".join(keys)
    out: dict[str, dict[tuple, list[float]]] = {}
    for backend, *key, values in con.execute(
        f"SELECT backend, {cols}, list({metric}) FROM runs WHERE name = ? AND status = 'ok' GROUP BY ALL", [name]
    ).fetchall():
        out.setdefault(backend, {})[tuple(key)] = values
    return out


def sweep_cli(preset: str, results: str, rerun: bool, overrides: Sequence[str] = ()) -> int:
    """Runs a preset through the command line, exactly as a user would (with `overrides` after it:
    the tests' reduced grids). Under `--stored` (`STORED_ONLY`) it runs nothing."""
    cmd = [sys.executable, "-m", "sweeps", "-m", f"+experiment={preset}", f"results_dir={results}", *overrides]
    cmd += mlflow_overrides()
    if STORED_ONLY.get():
        print(f"--stored: not run: {' '.join(cmd[2:])}", file=sys.stderr)
        if not stored(results, None, preset).execute("SELECT count(*) FROM runs").fetchone()[0]:
            raise NeedsRuns(f"no run of preset {preset} is stored in {results}")
        return 0
    if rerun:
        cmd.append("force=true")
    proc = subprocess.Popen(cmd, env=dict(os.environ, RAY_AUTH_MODE="disabled"))
    try:
        return proc.wait()
    finally:  # stopped (SIGTERM, Ctrl-C): the sweep stops too, ending its Ray and jobs itself
        if proc.poll() is None:
            proc.terminate()
            proc.wait()


@contextmanager
def ray_session() -> Iterator[None]:
    """One Ray instance for all the sweeps of a reproduction (bisection rounds, job lists);
    reuses one already running, and stops only what it started. Every job a reproduction runs
    in-process runs in one: under `--stored` it refuses (`NeedsRuns`)."""
    import ray

    if STORED_ONLY.get():
        raise NeedsRuns("it searches as it runs, so it cannot report from stored runs alone")

    from sweeps.raycfg import start_ray

    started = start_ray({})
    try:
        yield
    finally:
        if started:
            ray.shutdown()


def run_jobs(base: list[str], points: list[dict[str, Any]]) -> tuple[int, list[str]]:
    with ray_session():
        return run_points([*base, *mlflow_overrides()], points)


def plain_log_x(ax: Any) -> None:
    """A log x-axis labelled 1, 10, 100 rather than 10^0, 10^1, 10^2."""
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))


def log_x_at(ax: Any, values: Sequence[float]) -> None:
    """A log x-axis with a tick, labelled plainly, at each of `values` and no minor labels (for
    grids like 0.25 to 8 x BDP, where `plain_log_x`'s decades would crowd)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(values, [f"{v:g}" for v in values])


def without_backend(
    backend: str, name: str, title: str, command: str, advice: str = "."
) -> tuple[Report, Callable[[], None]] | None:
    """For a reproduction that compares with `backend`: if it cannot run here, a report and figure
    that say why (rather than fail `reproduce all`), ending with `advice`; None when it can."""
    missing = BACKENDS[backend].missing()
    if not missing:
        return None
    import matplotlib.pyplot as plt

    why = f"Not run: {missing}{advice}"
    return Report(name=name, title=title, command=command, reading=why), lambda: plt.figure().text(
        0.5, 0.5, why, ha="center", wrap=True
    )


def without_ns3(name: str, title: str, command: str) -> tuple[Report, Callable[[], None]] | None:
    """`without_backend` for ns-3, saying how to install it."""
    advice = f"; install it with `{BACKENDS['ns3'].install}` and run this again."
    return without_backend("ns3", name, title, command, advice)


def status_note(rc: int) -> str:
    return "" if rc == 0 else f" (The sweep exited with status {rc}: some runs failed.)"


def mean_sd(values: list[float]) -> tuple[float, float]:
    n = len(values)
    if n == 0:
        return math.nan, 0.0
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return m, sd
