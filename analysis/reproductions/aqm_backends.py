"""Issue 32's cross-check of the queue disciplines against ns-3 3.44's queue discs: every point of
`conf/experiment/aqm_backends.yaml`, without and with ECN, on both simulators, each point the mean
of its seeds on both sides (docs/fidelity.md)."""

from __future__ import annotations

import math
from collections.abc import Callable

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, status_note, stored, sweep_cli, without_ns3
from analysis.reproductions.crosscheck import (
    MIN_EVENTS,
    RATE_REL,
    SOJOURN_ABS_MS,
    SOJOURN_REL,
    UTIL_TOL,
    equality_axes,
    median,
    ok,
    points,
)
from sweeps.backends import BACKENDS

NAME = "aqm_backends"
TITLE = "Queue disciplines against ns-3 3.44's queue discs (issue 32)"
COMMAND = f"python -m analysis reproduce {NAME}   # needs ns-3: pip install -e '.[ns3]'"
ECN = ("tcp.ecn=true", "queue.ecn=true")
CONTROL = ("queue=droptail", "core_mbps=10")
"""The control: drop-tail, where what differs is the TCPs; at 10 Mb/s only (ns-3's drop-tail at
100 Mb/s, with windows of 1,000+ packets, runs about 40x slower than with a queue disc)."""
KEYS = ("queue", "tcp_ecn", "core_mbps", "tcp", "flows", "buffer_policy_factor")


def aqm_backends(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    if skipped := without_ns3(NAME, TITLE, COMMAND):
        return skipped
    rest = tuple(g for g in grid if not g.startswith("queue="))
    control = (*(g for g in rest if not g.startswith("core_mbps=")), *CONTROL)
    rc = max(sweep_cli(NAME, results, rerun, grid), sweep_cli(NAME, results, rerun, (*grid, *ECN)))
    rc = max(rc, sweep_cli(NAME, results, rerun, control))
    data = points(stored(results, None, NAME), NAME, KEYS, BACKENDS["ns3"].version())
    rows = []
    for key, by in data.items():
        ours, ns3 = by["engine"], by["ns3"]
        ok = by["check"]
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
                " ".join({True: m, False: "**no**", None: "-"}[good] for m, good in zip(("u", "d", "r"), ok)),
            ]
        )
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
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
    counts = {int(by[b]["seeds"]) for by in data.values() for b in ("engine", "ns3")}
    seeds = " to ".join(map(str, sorted({min(counts), max(counts)})))
    checks = [by["check"] for by in data.values()]
    n = len(checks)
    util_ok = sum(c[0] for c in checks)
    delay_ok, delay_n = sum(c[1] is True for c in checks), sum(c[1] is not None for c in checks)
    rate_ok, rate_n = sum(c[2] is True for c in checks), sum(c[2] is not None for c in checks)
    text = (
        f"{n} points, each the mean of {seeds} seeds on both sides (both simulators run the "
        f"flows' RTTs and start times the engine drew for the seed). Within the bounds: utilization (±{UTIL_TOL}) "
        f"at {util_ok} of {n}, mean sojourn (±{SOJOURN_REL:.0%} or {SOJOURN_ABS_MS:g} ms) at {delay_ok} of "
        f"{delay_n}, drop-or-mark rate (±{RATE_REL:.0%}) at {rate_ok} of the {rate_n} where ns-3 counted at least "
        f"{MIN_EVENTS} drops and marks per run; every checked bound at {sum(ok(c) for c in checks)}.\n\n"
    )
    text += (
        "Per discipline and capacity: points missing any bound / points; the median ratio of our drop-or-mark "
        "rate, and of our mean sojourn, to ns-3's; and the senders' timeouts per run on each side (ns-3 / ours), "
        "the event count that most separates the two simulators' TCPs:\n\n"
    )
    for label, sel in groups(data).items():
        miss = sum(not ok(by["check"]) for by in sel)
        rate = median([by["engine"]["rate"] / by["ns3"]["rate"] for by in sel if by["ns3"]["rate"] > 0])
        delay = median([by["engine"]["sojourn"] / by["ns3"]["sojourn"] for by in sel if by["ns3"]["sojourn"]])
        to = [sum(by[b]["timeouts"] for by in sel) / len(sel) for b in ("ns3", "engine")]
        text += f"- {label}: {miss} / {len(sel)}; rate x{rate:.2f}, sojourn " + (
            "not measured by ns-3; " if math.isnan(delay) else f"x{delay:.2f}; "
        )
        text += f"timeouts {to[0]:.0f} / {to[1]:.0f}\n"
    text += (
        "\nThe mechanisms behind the misses, measured with both simulators' event counts, are in docs/fidelity.md "
        "(Queue disciplines against ns-3)."
    )
    return text


def groups(data: dict[tuple, dict[str, dict[str, float]]]) -> dict[str, list[dict[str, dict[str, float]]]]:
    out: dict[str, list] = {}
    for (queue, ecn, mbps, *_), by in data.items():
        out.setdefault(f"{queue}{' +ECN' if ecn else ''} at {mbps:g} Mb/s", []).append(by)
    return out


def plot(data: dict[tuple, dict[str, dict[str, float]]]) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    titles = (("utilization", "utilization"), ("sojourn", "mean sojourn (ms)"), ("rate", "drop-or-mark rate"))
    colors = dict(zip(("droptail", "red", "codel", "pie", "fq_codel"), ("k", "C0", "C1", "C2", "C3")))
    for ax, (metric, label) in zip(axes, titles):
        seen = set()
        for (queue, ecn, *_), by in data.items():
            if by["ns3"][metric] is None or by["engine"][metric] is None:
                continue
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
        equality_axes(ax, metric, label)
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle("Each point: one set-up, mean of its seeds; the line is equality")
    fig.tight_layout()
