"""Issue 32's cross-check of the queue disciplines against ns-3 3.44's queue discs: every point of
`conf/experiment/aqm_backends.yaml`, without and with ECN, on both simulators, each point the mean
of its seeds on both sides (docs/fidelity.md)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, status_note, stored, sweep_cli

NAME = "aqm_backends"
ECN = ["tcp.ecn=true", "queue.ecn=true"]
KEYS = ("queue", "tcp_ecn", "core_mbps", "tcp", "flows", "buffer_policy_factor")
UTIL_TOL = 0.03
"""Issue 32: utilization within 0.03, mean sojourn within 20% (or 1 ms), drop-or-mark rate within 25%."""
SOJOURN_REL, SOJOURN_ABS_MS = 0.20, 1.0
RATE_REL = 0.25
METRICS = {
    "utilization": "avg(utilization)",
    "sojourn": "avg(mean_queue_delay_ms)",
    "rate": "avg(loss_rate + coalesce(mark_rate, 0))",
    "early": "avg(bottleneck_early_drops)",
    "marks": "avg(coalesce(bottleneck_marks, 0))",
    "drops": "avg(bottleneck_drops)",
    "timeouts": "avg(timeouts)",
    "seeds": "count(*)",
}


def points(con: Any) -> dict[tuple, dict[str, dict[str, float]]]:
    """Per point (KEYS), per backend, the seed means of METRICS over the seeds both backends ran."""
    cols = ", ".join(KEYS)
    aggs = ", ".join(f"{sql} AS {k}" for k, sql in METRICS.items())
    rows = con.execute(
        f"""WITH ok AS (SELECT * FROM runs WHERE name = ? AND status = 'ok'),
            paired AS (SELECT config_id FROM ok GROUP BY config_id HAVING count(DISTINCT backend) = 2)
        SELECT backend, {cols}, {aggs} FROM ok WHERE config_id IN (SELECT config_id FROM paired)
        GROUP BY ALL ORDER BY ALL""",
        [NAME],
    ).fetchall()
    out: dict[tuple, dict[str, dict[str, float]]] = {}
    for backend, *rest in rows:
        key, values = tuple(rest[: len(KEYS)]), rest[len(KEYS) :]
        out.setdefault(key, {})[backend] = dict(zip(METRICS, values))
    return {k: v for k, v in out.items() if len(v) == 2}


def verdicts(ours: dict[str, float], ns3: dict[str, float]) -> tuple[bool, bool, bool]:
    """(utilization, mean sojourn, drop-or-mark rate) within issue 32's bounds."""
    util = abs(ours["utilization"] - ns3["utilization"]) <= UTIL_TOL
    gap = abs(ours["sojourn"] - ns3["sojourn"])
    sojourn = gap <= SOJOURN_ABS_MS or gap <= SOJOURN_REL * ns3["sojourn"]
    rate = abs(ours["rate"] - ns3["rate"]) <= RATE_REL * ns3["rate"]
    return util, sojourn, rate


def aqm_backends(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    rc = max(sweep_cli(NAME, results, rerun, grid), sweep_cli(NAME, results, rerun, (*grid, *ECN)))
    data = points(stored(results, None, NAME))
    rows = []
    for key, by in data.items():
        ours, ns3 = by["engine"], by["ns3"]
        ok = verdicts(ours, ns3)
        queue, ecn, mbps, tcp, flows, factor = key
        rows.append(
            [
                queue + (" +ECN" if ecn else ""),
                f"{mbps:g}",
                tcp,
                flows,
                f"{factor:g}",
                ns3["utilization"],
                ours["utilization"],
                ns3["sojourn"],
                ours["sojourn"],
                ns3["rate"],
                ours["rate"],
                " ".join(mark if good else "**no**" for mark, good in zip(("u", "d", "r"), ok)),
            ]
        )
    report = Report(
        name=NAME,
        title="Queue disciplines against ns-3 3.44's queue discs (issue 32)",
        command=f"python -m analysis reproduce {NAME}   # needs ns-3: pip install -e '.[ns3]'",
        header=[
            "queue",
            "Mb/s",
            "tcp",
            "N",
            "x BDP",
            "util ns-3",
            "util ours",
            "sojourn ms ns-3",
            "ours",
            "drop+mark rate ns-3",
            "ours",
            "within (util, delay, rate)",
        ],
        rows=rows,
        reading=reading(data) + status_note(rc),
    )
    return report, lambda: plot(data)


def reading(data: dict[tuple, dict[str, dict[str, float]]]) -> str:
    if not data:
        return "No point ran on both simulators: ns-3 is missing (`pip install -e '.[ns3]'`)."
    seeds = sorted({int(v["seeds"]) for by in data.values() for v in by.values()})
    checks = [verdicts(by["engine"], by["ns3"]) for by in data.values()]
    n = len(checks)
    text = (
        f"{n} points, each the mean of {'/'.join(map(str, seeds))} seeds on both sides (both simulators run the "
        f"flows' RTTs and start times the engine drew for the seed). Within the bounds: utilization (±{UTIL_TOL}) "
        f"at {sum(c[0] for c in checks)} of {n}, mean sojourn (±{SOJOURN_REL:.0%} or {SOJOURN_ABS_MS:g} ms) at "
        f"{sum(c[1] for c in checks)}, drop-or-mark rate (±{RATE_REL:.0%}) at {sum(c[2] for c in checks)}; all "
        f"three at {sum(all(c) for c in checks)}.\n\n"
    )
    text += "Where the misses are, per discipline (points missing any bound / points, and the median ratio of our "
    text += "drop-or-mark rate to ns-3's):\n\n"
    for label, sel in groups(data).items():
        miss = sum(not all(verdicts(by["engine"], by["ns3"])) for by in sel)
        ratios = sorted(by["engine"]["rate"] / by["ns3"]["rate"] for by in sel if by["ns3"]["rate"] > 0)
        med = ratios[len(ratios) // 2] if ratios else math.nan
        text += f"- {label}: {miss} / {len(sel)}, rate ratio {med:.2f}\n"
    return text


def groups(data: dict[tuple, dict[str, dict[str, float]]]) -> dict[str, list[dict[str, dict[str, float]]]]:
    out: dict[str, list] = {}
    for (queue, ecn, mbps, *_), by in data.items():
        out.setdefault(f"{queue}{' +ECN' if ecn else ''} at {mbps:g} Mb/s", []).append(by)
    return out


def plot(data: dict[tuple, dict[str, dict[str, float]]]) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    titles = (("utilization", "utilization"), ("sojourn", "mean sojourn (ms)"), ("rate", "drop-or-mark rate"))
    colors = dict(zip(("red", "codel", "pie", "fq_codel"), ("C0", "C1", "C2", "C3")))
    for ax, (metric, label) in zip(axes, titles):
        seen = set()
        for (queue, ecn, *_), by in data.items():
            tag = f"{queue}{' +ECN' if ecn else ''}"
            ax.plot(
                by["ns3"][metric],
                by["engine"][metric],
                "^" if ecn else "o",
                mfc="none" if ecn else colors[queue],
                color=colors[queue],
                label=None if tag in seen else tag,
            )
            seen.add(tag)
        lo, hi = ax.get_xlim()
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        if metric != "utilization":
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlabel(f"ns-3 3.44: {label}")
        ax.set_ylabel(f"ours: {label}")
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle("Each point: one set-up, mean of its seeds; the line is equality")
    fig.tight_layout()
