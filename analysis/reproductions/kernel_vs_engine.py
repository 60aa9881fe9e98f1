"""Issue 71's cross-check: the engine against this host's Linux TCP (`backend=kernel`), every
point of `conf/experiment/kernel_vs_engine.yaml` the mean of its seeds on both, with issue 72's
bounds (docs/kernel.md, "Engine against kernel"). Points beyond a bound are listed; their
mechanisms are issue 72's work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, fmt, status_note, stored, sweep_cli, without_backend
from analysis.reproductions.crosscheck import ok, points
from sweeps.backends import BACKENDS

NAME = "kernel_vs_engine"
TITLE = "The engine against this host's Linux TCP (issue 71)"
COMMAND = f"python -m analysis reproduce {NAME}   # as root: the kernel backend builds network namespaces"
KEYS = ("tcp", "flows", "buffer_policy_factor")
UTIL_ABS, LOSS_REL, JAIN_ABS, DELAY_REL, DELAY_ABS_MS = 0.02, 0.25, 0.1, 0.20, 1.0
"""Issue 72's targets: utilization within 0.02, loss rate within 25%, Jain within 0.1; and the
cross-checks' mean queueing delay within 20% or 1 ms."""
MIN_DROPS = 20
"""Kernel drops per run (mean of the seeds) below which the loss rate is not checked."""
METRICS = {
    "utilization": "avg(utilization)",
    "loss": "avg(loss_rate)",
    "jain": "avg(jain_fairness)",
    "delay": "avg(mean_queue_delay_ms)",
    "drops": "avg(bottleneck_drops)",
    "suspect": "count(timing_suspect)",
    "seeds": "count(*)",
}
CHECKS = ("utilization", "loss", "jain", "delay")


def verdicts(engine: dict[str, Any], kern: dict[str, Any]) -> tuple[bool | None, ...]:
    """Per CHECKS: within its bound, or None where it cannot be checked (too few drops, or a
    metric one side lacks)."""

    def near(key: str, rel: float, floor: float = 0.0) -> bool | None:
        a, b = engine[key], kern[key]
        if a is None or b is None:
            return None
        return abs(a - b) <= max(rel * abs(b), floor)

    loss = near("loss", LOSS_REL) if (kern["drops"] or 0) >= MIN_DROPS else None
    jain = near("jain", 0.0, JAIN_ABS) if engine["jain"] is not None and kern["jain"] is not None else None
    return near("utilization", 0.0, UTIL_ABS), loss, jain, near("delay", DELAY_REL, DELAY_ABS_MS)


def kernel_vs_engine(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    if skipped := without_backend("kernel", NAME, TITLE, COMMAND):
        return skipped
    rc = sweep_cli(NAME, results, rerun, grid)
    con = stored(results, None, NAME)
    data = points(con, NAME, KEYS, BACKENDS["kernel"].version(), METRICS, other="kernel", check=verdicts)
    itself = kernel_halves(con, BACKENDS["kernel"].version())
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=["tcp", "N", "x BDP", "util kernel", "engine", "loss kernel", "engine", "Jain kernel", "engine"]
        + ["delay ms kernel", "engine", "timing suspect", "within (u, l, j, d)"],
        rows=[_row(k, by) for k, by in data.items()],
        reading=reading(data) + itself_text(itself) + status_note(rc),
    )
    return report, lambda: plot(data)


def _row(key: tuple, by: dict[str, Any]) -> list[Any]:
    tcp, flows, factor = key
    e, k = by["engine"], by["kernel"]
    marks = " ".join({True: m, False: "**no**", None: "-"}[v] for m, v in zip("uljd", by["check"]))
    cells = [tcp, flows, f"{factor:g}"]
    for metric in CHECKS:
        cells += [k[metric], e[metric]]
    return [*cells, f"{k['suspect']} of {k['seeds']}", marks]


def reading(data: dict[tuple, dict[str, Any]]) -> str:
    if not data:
        return "No point ran on both backends."
    within = [k for k, by in data.items() if ok(by["check"])]
    text = f"Bounds (issue 72's): {bounds_text()}. **{len(within)} of {len(data)} points within every bound.**\n"
    per_tcp: dict[str, list[bool]] = {}
    for k in data:
        per_tcp.setdefault(k[0], []).append(k in within)
    text += "".join(f"\n- {tcp}: {sum(v)} of {len(v)}" for tcp, v in sorted(per_tcp.items()))
    text += f"\n\nBeyond, by metric: {beyond_by_metric(data)}."
    suspect = sum(by["kernel"]["suspect"] for by in data.values())
    runs = sum(by["kernel"]["seeds"] for by in data.values())
    text += f"\n\nKernel runs whose own timing was suspect (`timing_suspect`, docs/kernel.md): {suspect} of {runs}.\n"
    beyond = [(k, by) for k, by in data.items() if k not in within]
    if beyond:
        text += "\nEvery point beyond a bound (kernel / engine):\n\n"
        for (tcp, flows, factor), by in beyond:
            pairs = zip(CHECKS, by["check"])
            missed = [f"{m} {fmt(by['kernel'][m])} / {fmt(by['engine'][m])}" for m, v in pairs if v is False]
            text += f"- {tcp}, {flows} flows, {factor:g} BDP: {'; '.join(missed)}\n"
    return text


def kernel_halves(con: Any, version: str) -> dict[tuple, dict[str, Any]]:
    """Per point, the kernel's seed means over the first half of its seeds ("a") and over the
    second ("b"), and `verdicts(b, a)`: the kernel against itself, under the same bounds. Seeds
    differ between the halves (the engine is held to the kernel's own seeds), so this is the most
    a comparison of that many seeds a side can show."""
    cols = ", ".join(KEYS)
    aggs = ", ".join(f"{sql} AS {k}" for k, sql in METRICS.items())
    rows = con.execute(
        f"""WITH k AS (SELECT *, ntile(2) OVER (PARTITION BY {cols} ORDER BY seed) AS half FROM runs
                       WHERE name = ? AND status = 'ok' AND backend = 'kernel' AND backend_version = ?)
        SELECT {cols}, half, {aggs} FROM k GROUP BY ALL ORDER BY ALL""",
        [NAME, version],
    ).fetchall()
    out: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        key, half, values = tuple(row[: len(KEYS)]), row[len(KEYS)], row[len(KEYS) + 1 :]
        out.setdefault(key, {})["ab"[half - 1]] = dict(zip(METRICS, values))
    both = {k: by for k, by in out.items() if len(by) == 2}
    for by in both.values():
        by["check"] = verdicts(by["b"], by["a"])
    return both


def itself_text(itself: dict[tuple, dict[str, Any]]) -> str:
    if not itself:
        return ""
    seeds = sorted({by["a"]["seeds"] for by in itself.values()})
    within = sum(ok(by["check"]) for by in itself.values())
    return (
        f"\nThe kernel against itself (the first half of each point's seeds against the second, "
        f"{'/'.join(map(str, seeds))} a side, the same bounds): **{within} of {len(itself)} points within every "
        f"bound**; beyond, by metric: {beyond_by_metric(itself)}. The engine is held to "
        "the mean of all of them, on the same seeds.\n"
    )


def beyond_by_metric(data: dict[tuple, dict[str, Any]]) -> str:
    """How many points each of CHECKS puts beyond its bound."""
    return ", ".join(f"{m} {sum(by['check'][i] is False for by in data.values())}" for i, m in enumerate(CHECKS))


def bounds_text() -> str:
    return (
        f"utilization ±{UTIL_ABS}, loss rate ±{LOSS_REL:.0%} (where the kernel dropped {MIN_DROPS} or more "
        f"packets a run), Jain ±{JAIN_ABS}, mean queueing delay ±{DELAY_REL:.0%} or {DELAY_ABS_MS:g} ms"
    )


def plot(data: dict[tuple, dict[str, Any]]) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.6))
    labels = {"utilization": "utilization", "loss": "loss rate", "jain": "Jain's fairness"}
    labels["delay"] = "queueing delay (ms)"
    senders = sorted({k[0] for k in data})
    for ax, (metric, label) in zip(axes, labels.items()):
        for i, tcp in enumerate(senders):
            xy = [(by["kernel"][metric], by["engine"][metric]) for k, by in data.items() if k[0] == tcp]
            xy = [(x, y) for x, y in xy if x is not None and y is not None]
            if xy:
                ax.plot(*zip(*xy), "o", color=f"C{i}", label=tcp)
        equality_axes(ax, metric, f"kernel: {label}", f"engine: {label}")
    axes[0].legend(fontsize=8)
    fig.suptitle("Each point: one set-up (sender, flows, buffer), mean of its seeds; the line is equality")
    fig.tight_layout()


LOG_FLOOR = {"loss": 1e-3, "delay": 0.1, "retrans": 0.1}
"""Metrics drawn on a symlog scale, linear below this."""


def equality_axes(ax: Any, metric: str, xlabel: str, ylabel: str) -> None:
    """The kernel on x against another backend on y: the line of equality, a symlog scale for the
    metrics that span decades (LOG_FLOOR), and the labels."""
    lo, hi = ax.get_xlim()
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    if metric in LOG_FLOOR:
        ax.set_xscale("symlog", linthresh=LOG_FLOOR[metric])
        ax.set_yscale("symlog", linthresh=LOG_FLOOR[metric])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
