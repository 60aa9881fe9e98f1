"""Zhang and Loguinov (2010), the ABS paper: Fig. 1, loss rate and utilization vs the bottleneck
buffer for the eight TCP variants of ns-2's TCP-Linux, ours beside ns-2 2.35's TCP-Linux run on
the same set-up (stored runs of the ns2 backend: `python -m analysis reproduce abs_fig1 --backends ns2`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import (
    Report,
    backend_means,
    backend_override,
    plain_log_x,
    status_note,
    stored,
    sweep_cli,
)

# The agreement bounds: utilization within UTIL_TOL of ns-2, loss rate within LOSS_REL
# relative where ns-2's loss rate exceeds LOSS_FLOOR.
UTIL_TOL = 0.03
LOSS_REL = 0.25
LOSS_FLOOR = 0.001
# A step against the paper's trend smaller than this is read as flat (run-to-run noise): a
# utilization drop below 0.005, a loss rise below 5% relative.
FLAT_UTIL = 0.005
FLAT_LOSS_REL = 0.05


def against_trend(buffers: list[int], values: list[float], rising: bool) -> list[str]:
    """The steps b1 -> b2 where `values` moves against the trend (rising or falling) by more than noise."""
    out = []
    for (b1, v1), (b2, v2) in zip(zip(buffers, values), zip(buffers[1:], values[1:])):
        bad = v2 < v1 - FLAT_UTIL if rising else v2 > v1 * (1 + FLAT_LOSS_REL) and v2 - v1 > 1e-6
        if bad:
            out.append(f"{b1}->{b2}")
    return out


def _agree(ours: dict[str, float], theirs: dict[str, float] | None) -> tuple[bool | None, bool | None]:
    if theirs is None:
        return None, None
    util_ok = abs(ours["utilization"] - theirs["utilization"]) < UTIL_TOL
    if theirs["loss_rate"] <= LOSS_FLOOR:
        return util_ok, None
    return util_ok, abs(ours["loss_rate"] / theirs["loss_rate"] - 1) <= LOSS_REL


def _trend_sentence(who: str, trends: dict[str, tuple[list[str], list[str]]]) -> str:
    loss_ok = [v for v, (lo, _) in trends.items() if not lo]
    util_ok = [v for v, (_, ut) in trends.items() if not ut]
    misses = "; ".join(
        f"{v}: " + ", ".join([f"loss rises {s}" for s in lo] + [f"utilization falls {s}" for s in ut])
        for v, (lo, ut) in trends.items()
        if lo or ut
    )
    return (
        f"{who}: loss falls as the buffer grows for {len(loss_ok)} of {len(trends)} variants and utilization "
        f"rises for {len(util_ok)} of {len(trends)}" + (f" (against the trend: {misses})" if misses else "") + "."
    )


def stored_ns2(con: Any) -> dict[str, Any]:
    """ns-2's TCP-Linux runs of this grid (the ns2 backend), as {tcp: {str(buffer): {metric: mean
    over seeds}}, "seeds": [...]}; empty if none are stored."""
    per = {
        m: backend_means(con, "abs_fig1", ("tcp", "buffer_pkts"), m).get("ns2", {})
        for m in ("utilization", "loss_rate")
    }
    out: dict[str, Any] = {}
    for (tcp, b), util in per["utilization"].items():
        out.setdefault(tcp, {})[str(b)] = {"utilization": fmean(util), "loss_rate": fmean(per["loss_rate"][(tcp, b)])}
    if out:
        out["seeds"] = [
            r[0]
            for r in con.execute("""SELECT DISTINCT seed FROM runs WHERE name = 'abs_fig1'
            AND backend = 'ns2' AND status = 'ok' ORDER BY seed""").fetchall()
        ]
    return out


def abs_fig1(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    rc = sweep_cli("abs_fig1", results, rerun, [*backend_override(), *overrides])
    con = stored(results, None, "abs_fig1")
    data = con.execute("""SELECT tcp, buffer_pkts, avg(utilization), avg(loss_rate), avg(access_loss_rate)
        FROM runs WHERE name = 'abs_fig1' AND status = 'ok' AND backend = 'engine' GROUP BY ALL
        ORDER BY tcp, buffer_pkts""").fetchall()
    ours: dict[str, dict[int, dict[str, float]]] = {}
    access_loss = 0.0
    for tcp, b, u, p, a in data:
        ours.setdefault(tcp, {})[int(b)] = {"utilization": u, "loss_rate": p}
        access_loss = max(access_loss, a or 0.0)
    ref = stored_ns2(con)
    rows = []
    for tcp in sorted(ours):
        for b, m in sorted(ours[tcp].items()):
            th = ref.get(tcp, {}).get(str(b))
            util_ok, loss_ok = _agree(m, th)
            ratio = m["loss_rate"] / th["loss_rate"] if th and th["loss_rate"] > 0 else None
            rows.append(
                [
                    tcp,
                    b,
                    m["utilization"],
                    th and th["utilization"],
                    m["loss_rate"],
                    th and th["loss_rate"],
                    ratio,
                    {True: "yes", False: "no", None: "-"}[util_ok],
                    {True: "yes", False: "no", None: "-"}[loss_ok],
                ]
            )

    def series(src: dict, tcp: str, metric: str, key: Callable[[int], object]) -> tuple[list[int], list[float]]:
        pts = sorted((int(b), v[metric]) for b, v in ((b, src.get(tcp, {}).get(key(b))) for b in ours[tcp]) if v)
        return [b for b, _ in pts], [v for _, v in pts]

    def trends(src: dict, key: Callable[[int], object]) -> dict[str, tuple[list[str], list[str]]]:
        out = {}
        for tcp in sorted(ours):
            bl, loss = series(src, tcp, "loss_rate", key)
            bu, util = series(src, tcp, "utilization", key)
            if loss:
                out[tcp] = (against_trend(bl, loss, rising=False), against_trend(bu, util, rising=True))
        return out

    ours_trends = trends(ours, lambda b: b)
    ns2_trends = trends(ref, str) if ref else {}

    def plot() -> None:
        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        for tcp in sorted(ours):
            for ax, metric in zip(axes, ("loss_rate", "utilization")):
                b, v = series(ours, tcp, metric, lambda x: x)
                (line,) = ax.plot(b, v, marker="o", label=f"{tcp} (ours)")
                b2, v2 = series(ref, tcp, metric, str)
                if v2:
                    ax.plot(b2, v2, "x--", color=line.get_color(), alpha=0.7, label=f"{tcp} (ns-2 TCP-Linux)")
        for ax, (title, ylabel) in zip(axes, (("(a) loss rate", "loss rate"), ("(b) utilization", "utilization"))):
            plain_log_x(ax)
            ax.set_xlabel("bottleneck buffer (packets)")
            ax.set_ylabel(ylabel)
            ax.set_title(title)
            ax.grid(alpha=0.3)
        axes[0].set_yscale("log")
        axes[1].legend(fontsize=6, ncol=2)
        fig.suptitle(
            "ABS Fig. 1: 10 flows, 100 Mb/s, RTT 30-50 ms, 1500 B (solid: ours; dashed: ns-2 2.35 TCP-Linux)",
            fontsize=10,
        )
        fig.tight_layout()

    rep = Report(
        "abs_fig1",
        "Zhang and Loguinov (2010), ABS Fig. 1: loss and utilization vs buffer per TCP variant",
        "python -m sweeps -m +experiment=abs_fig1 backend=engine,ns2\npython -m analysis reproduce abs_fig1",
        rows,
        [
            "tcp",
            "buffer (pkts)",
            "utilization (ours)",
            "utilization (ns-2)",
            "loss rate (ours)",
            "loss rate (ns-2)",
            "loss ours / ns-2",
            f"util within {UTIL_TOL}",
            f"loss within {LOSS_REL:.0%}",
        ],
    )
    rep.reading = _reading(rows, ours_trends, ns2_trends, access_loss, ref) + status_note(rc)
    return rep, plot


def _reading(rows: list[list], ours_trends: dict, ns2_trends: dict, access_loss: float, ref: dict) -> str:
    util_checked = [r for r in rows if r[7] != "-"]
    loss_checked = [r for r in rows if r[8] != "-"]
    util_miss = [f"{r[0]} {r[1]}" for r in util_checked if r[7] == "no"]
    loss_miss = [f"{r[0]} {r[1]}" for r in loss_checked if r[8] == "no"]
    gap = max((abs(r[2] - r[3]) for r in util_checked), default=math.nan)
    text = (
        "The paper states that the loss rate p falls and the utilization u rises monotonically as the buffer b "
        f"grows, for every variant. {_trend_sentence('Ours', ours_trends)} "
    )
    if ns2_trends:
        text += f"{_trend_sentence('ns-2 2.35 TCP-Linux on the same set-up', ns2_trends)} "
    text += (
        f"Steps against the trend smaller than {FLAT_UTIL} in utilization or {FLAT_LOSS_REL:.0%} in loss count "
        "as flat. "
    )
    text += (
        "No packet is lost at the access links, as the paper checks. "
        if access_loss == 0
        else f"Unlike in the paper, some run loses packets at its access link (largest access loss rate "
        f"{access_loss:.3g}): a sender bursting more than the 2500-packet access buffer. "
    )
    if ref:
        text += (
            f"Against ns-2 (seeds {', '.join(str(s) for s in ref.get('seeds', []))}, each run in both "
            f"simulators with the RTTs and start times our engine drew for it): utilization within {UTIL_TOL} at "
            f"{len(util_checked) - len(util_miss)} of "
            f"{len(util_checked)} points (largest gap {gap:.3f}; misses: {', '.join(util_miss) or 'none'}); "
            f"loss rate within {LOSS_REL:.0%} at {len(loss_checked) - len(loss_miss)} of {len(loss_checked)} "
            f"points where ns-2 loses more than {LOSS_FLOOR:.1%} (misses: {', '.join(loss_miss) or 'none'}). "
            "Each point is the mean over those seeds on both sides: at 8-32 packets one run's utilization "
            "varies by up to 0.1 with the flows' RTTs, and a single run's loss rate at large buffers rests on "
            "a few hundred drops."
        )
    else:
        text += (
            "ns-2 has not been run on this set-up (`python -m analysis reproduce abs_fig1 --backends ns2`, or "
            "`python -m sweeps -m +experiment=abs_fig1 backend=ns2`; needs ns-2)."
        )
    return text
