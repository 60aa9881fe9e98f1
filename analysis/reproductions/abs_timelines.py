"""Zhang and Loguinov (2010), ABS Figs. 4-9: the buffer b(n), loss p(n) and utilization u(n) of an
ABS router over time under load changes (Fig. 4), web traffic (Fig. 5), a memory bound (Fig. 6),
FTP + HTTP + UDP (Fig. 7), five TCP variants (Fig. 8) and on both links of a parking lot (Fig. 9).
Each runs its preset (`conf/experiment/abs_figN.yaml`) with eq. (8) as printed and damped with
|u(n) - u(n-1)| (`sim/src/policy/abs.rs`), and measures the figure's claim from the control table."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt

from analysis import papers
from analysis.reproductions.abs_control import moving_mean, plot_timeline, spread
from analysis.reproductions.common import Report, status_note, stored, sweep_cli

INTERVAL_S = 0.02
"""T of the figures' presets (section 4.1's 20 ms)."""
SETTLE_TOL = 0.1
SMOOTH_S = 1.0
"""Load-step responses are read on b's trailing 1-s mean: single 20-ms samples stray by more than
10% even in a steady state."""


def link_runs(con: Any, name: str) -> list[dict[str, Any]]:
    """One entry per (run, link with an ABS): its settings and control series."""
    rows = con.execute(
        """
        SELECT r.run_id, r.warmup_s, r.duration_s, l.link_id,
               coalesce(json_extract_string(r.topology_links[l.link_id + 1].buffer_policy, '$.damping'),
                        r.buffer_policy_damping) AS damping, r.buffer_policy_gain_loss,
               coalesce(json_extract(r.topology_links[l.link_id + 1].buffer_policy, '$.interval_ms')::DOUBLE,
                        r.buffer_policy_interval_ms) AS interval_ms
        FROM runs r JOIN links l USING (run_id, exec_id)
        WHERE r.name = ? AND r.status = 'ok' AND l.buffer_policy = 'abs'
        ORDER BY damping, interval_ms, r.buffer_policy_gain_loss, l.link_id""",
        [name],
    ).fetchall()
    out = []
    for run_id, warmup_s, duration_s, link, damping, gain_loss, interval_ms in rows:
        series = con.execute(
            """SELECT time_s, buffer_pkts, p, u, utilization, b_u_pkts >= b_p_pkts FROM control
            WHERE run_id = ? AND link_id = ? ORDER BY time_s""",
            [run_id, link],
        ).fetchall()
        names = ("time_s", "buffer_pkts", "p", "u", "utilization", "util_holds")
        cols = {k: [r[i] for r in series] for i, k in enumerate(names)}
        out.append(
            {
                "run_id": run_id,
                "warmup_s": warmup_s,
                "duration_s": duration_s,
                "link": link,
                "damping": damping or "signed",
                "gain_loss": gain_loss,
                "interval_ms": interval_ms,
                "series": cols,
                "label": f"eq. 8 {damping or 'signed'}, T = {interval_ms:g} ms",
            }
        )
    return out


def window(series: dict[str, list[float]], t0: float, t1: float) -> dict[str, list[float]]:
    keep = [i for i, t in enumerate(series["time_s"]) if t0 < t <= t1]
    return {k: [v[i] for i in keep] for k, v in series.items()}


def segment_stats(series: dict[str, list[float]], t0: float, t1: float) -> dict[str, float]:
    """Means of p(n), u(n) (input) and departure utilization, and b's spread, over (t0, t1]."""
    w = window(series, t0, t1)
    n = max(len(w["time_s"]), 1)
    return {
        "p": sum(w["p"]) / n,
        "u": sum(w["u"]) / n,
        "departure": sum(w["utilization"]) / n,
        "util_share": sum(w["util_holds"]) / n,
        **{f"b_{k}": v for k, v in spread(w["buffer_pkts"]).items()},
    }


def response_s(series: dict[str, list[float]], step_s: float, end_s: float, interval_s: float) -> float | None:
    """After a load step at `step_s`: how long until b's trailing 1-s mean is within 10% of its mean
    over the second half of the segment (step_s, end_s], and stays there."""
    w = window(series, step_s, end_s)
    if not w["time_s"]:
        return None
    half = [b for t, b in zip(w["time_s"], w["buffer_pkts"]) if t > (step_s + end_s) / 2]
    ref = sum(half) / len(half)
    smooth = moving_mean(w["buffer_pkts"], max(1, round(SMOOTH_S / interval_s)))
    outside = [
        i for i, v in enumerate(smooth) if abs(v - ref) > SETTLE_TOL * ref and w["time_s"][i] <= (step_s + end_s) / 2
    ]
    return 0.0 if not outside else w["time_s"][outside[-1]] - step_s


def plot_runs(
    runs: list[dict[str, Any]],
    title: str,
    targets: dict[int, tuple[float, float]],
    bounds: Sequence[tuple[float, float]] | None = None,
    log_buffer: bool = False,
) -> Callable[[], None]:
    links = sorted({r["link"] for r in runs})

    def plot() -> None:
        fig, axes = plt.subplots(3, len(links), figsize=(7 * len(links), 8), sharex=True, squeeze=False)
        for col, link in enumerate(links):
            for r in (r for r in runs if r["link"] == link):
                u_star, p_star = targets[link]
                plot_timeline(axes[:, col], r["series"], r["label"], u_star, p_star, smooth=round(1 / INTERVAL_S))
            if bounds:
                xs = [t for t, _ in bounds] + [runs[0]["duration_s"]]
                axes[0, col].step(
                    xs,
                    [b for _, b in bounds] + [bounds[-1][1]],
                    where="post",
                    color="k",
                    ls="--",
                    lw=0.8,
                    label="memory bound",
                )
            if log_buffer:
                axes[0, col].set_yscale("log")
            axes[0, col].set_title(f"link {link}: u* = {targets[link][0]:.0%}, p* = {targets[link][1]:.0%}")
            axes[0, col].legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()

    return plot


def _report(
    name: str,
    title: str,
    runs: list[dict[str, Any]],
    rows: list[list[Any]],
    header: list[str],
    reading: str,
    rc: int,
    plot: Callable[[], None],
) -> tuple[Report, Callable[[], None]]:
    rep = Report(
        name,
        title,
        f"python -m sweeps -m +experiment={name}   # then: python -m analysis reproduce {name}",
        rows,
        header,
    )
    rep.notes = [
        "u(n) is ABS's input rate over capacity (section 4.1), so it exceeds 1 when packets are dropped; "
        "`departure` is the link's busy time. Means cover the measured window after warm-up."
    ]
    rep.reading = reading + status_note(rc)
    return rep, plot


SUMMARY_HEADER = [
    "eq. 8 damping",
    "link",
    "b mean",
    "b p5",
    "b p95",
    "p(n) mean",
    "u(n) mean",
    "departure util",
    "share held by b_u",
    "T (ms)",
]


def summary_rows(runs: list[dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for r in runs:
        s = segment_stats(r["series"], r["warmup_s"], r["duration_s"])
        rows.append(
            [
                r["damping"],
                r["link"],
                s["b_mean"],
                s["b_p5"],
                s["b_p95"],
                s["p"],
                s["u"],
                s["departure"],
                s["util_share"],
                r["interval_ms"],
            ]
        )
    return rows


def targets_met(s: dict[str, float], u_star: float, p_star: float) -> str:
    """Whether the run meets ABS's targets: p(n) at most p* + 0.5 point, or u(n) at least u* - 1 point."""
    return (
        ("loss at or below target" if s["p"] <= p_star + 0.005 else "loss above target")
        + ", "
        + ("utilization at or above target" if s["u"] >= u_star - 0.01 else "utilization below target")
    )


LOAD_STEPS = papers.ABS_FIG4_LOAD_STEPS_S


def abs_fig4(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    """The response to each load step, at the loss gain I_p of Figs. 2-3 and at 10x and 100x it:
    b's 1-s mean settling within 10% of its new level, and its spread once settled."""
    rc = sweep_cli("abs_fig4", results, rerun, overrides)
    con = stored(results, "engine", "abs_fig4")
    runs = link_runs(con, "abs_fig4")
    rows, parts, worst_by_gain, spread_by_gain = [], [], {}, {}
    for r in runs:
        r["label"] = f"I_p = {r['gain_loss']:g}"
        ends = [*LOAD_STEPS[1:], r["duration_s"]]
        times = [response_s(r["series"], t, e, INTERVAL_S) for t, e in zip(LOAD_STEPS, ends)]
        segs = [segment_stats(r["series"], t, e) for t, e in zip(LOAD_STEPS, ends)]
        settled = [segment_stats(r["series"], (t + e) / 2, e) for t, e in zip(LOAD_STEPS, ends)]
        for t, resp, s, h in zip(LOAD_STEPS, times, segs, settled):
            rows.append(
                [
                    r["gain_loss"],
                    t,
                    resp,
                    None if resp is None else resp / INTERVAL_S,
                    s["b_mean"],
                    h["b_relative"],
                    s["p"],
                    s["u"],
                ]
            )
        worst = max((x for x in times if x is not None), default=None) if None not in times else None
        worst_by_gain[r["gain_loss"]] = worst
        spread_by_gain[r["gain_loss"]] = max(h["b_relative"] for h in settled)
        within = "never" if worst is None else f"at most {worst:.1f} s ({worst / INTERVAL_S:.0f} control intervals)"
        losses = ", ".join(f"{100 * s['p']:.2f}%" for s in segs)
        p_star = papers.ABS_FIG_TARGETS["abs_fig4"][1]
        share = segment_stats(r["series"], r["warmup_s"], r["duration_s"])["util_share"]
        parts.append(
            f"At I_p = {r['gain_loss']:g}, b's 1-s mean is within 10% of each new level {within} after a "
            f"step, and once settled b's 5th-95th percentile range is up to "
            f"{100 * spread_by_gain[r['gain_loss']]:.0f}% of its mean; p(n) averages {losses} over the "
            f"four segments (p* = {p_star:.0%}); b_u set the buffer in {100 * share:.0f}% of the intervals."
        )
    pkts = con.execute("SELECT any_value(core_mbps * 1e6 * ? / (8 * pkt_bytes)) FROM runs", [INTERVAL_S]).fetchone()[0]
    reading = (
        "The paper: b follows each load change quickly, with small oscillations and smooth transitions. "
        + " ".join(parts)
        + " "
        + gain_reading(worst_by_gain, spread_by_gain, pkts)
    )
    return _report(
        "abs_fig4",
        "Zhang and Loguinov (2010), ABS Fig. 4: ABS under load changes (60 -> 40 -> 20 -> 40 -> 60 flows)",
        runs,
        rows,
        [
            "I_p",
            "step at (s)",
            "response (s)",
            "response (intervals)",
            "b mean after",
            "b (p95 - p5) / mean, settled",
            "p(n) mean after",
            "u(n) mean after",
        ],
        reading,
        rc,
        plot_runs(
            runs,
            "ABS Fig. 4 (ours): 10 Mb/s, flows 60/40/20/40/60, eq. 8 as printed",
            {0: papers.ABS_FIG_TARGETS["abs_fig4"]},
            log_buffer=True,
        ),
    )


def gain_reading(
    worst_by_gain: dict[float, float | None], spread_by_gain: dict[float, float], pkts_per_interval: float | None
) -> str:
    """Whether a larger loss gain buys a faster response, from the runs: the loss integrator moves b
    by I_p T (p(n) - p*) per interval, and one drop among an interval's packets moves p(n)."""
    gains = sorted(worst_by_gain)
    if len(gains) < 2 or not pkts_per_interval:
        return ""
    lo, hi = gains[0], gains[-1]
    step = lo * INTERVAL_S * 0.01
    fmt_s = {g: "never" if worst_by_gain[g] is None else f"{worst_by_gain[g]:.1f} s" for g in gains}
    faster = [
        g
        for g in gains[1:]
        if worst_by_gain[g] is not None and worst_by_gain[lo] is not None and worst_by_gain[g] < worst_by_gain[lo] / 2
    ]
    return (
        f"At I_p = {lo:g} the loss integrator moves b by I_p T (p(n) - p*), {step:.2g} packets per "
        f"{1000 * INTERVAL_S:.0f}-ms interval for a one-point loss error, so a shift of a hundred packets takes "
        f"seconds. Raising I_p from {lo:g} to {hi:g} "
        f"changes the slowest settling from {fmt_s[lo]} to {fmt_s[hi]} and the settled spread from "
        f"{100 * spread_by_gain[lo]:.0f}% to {100 * spread_by_gain[hi]:.0f}% of the mean: "
        + (
            "a larger gain trades steadiness for speed."
            if faster
            else f"a larger gain does not settle faster, it only oscillates more (an interval holds about "
            f"{pkts_per_interval:.0f} packets, so one drop moves p(n) by {100 / pkts_per_interval:.0f} points), "
            "so no gain gives a response within a few control intervals."
        )
    )


def bias_sentence(r: dict[str, Any], u_star: float) -> str:
    """What eq. 8 magnitude integrates on run `r`'s link against the plain mean of u(n) - u*."""
    b = damping_bias(window(r["series"], r["warmup_s"], r["duration_s"])["u"], u_star)
    share = segment_stats(r["series"], r["warmup_s"], r["duration_s"])["util_share"]
    return (
        f"At T = {r['interval_ms']:g} ms, link {r['link']}'s u(n) has a standard deviation of {b['sd']:.2f} "
        f"between intervals and moves by {b['above']:.3f} on average where it is at or above u* against "
        f"{b['below']:.3f} below: the |du|-weighted mean of u(n) - u*, which eq. 8 magnitude integrates, is "
        f"{100 * b['weighted']:+.2f} points (b_p holds the buffer in the other {100 * (1 - share):.0f}% of the "
        f"intervals), and the plain mean {100 * b['plain']:+.2f}, so the weighting alone moves the mean by "
        f"{100 * (b['plain'] - b['weighted']):+.2f} points."
    )


def damping_bias(u: list[float], u_star: float) -> dict[str, float]:
    """What eq. 8 damped with |du| balances: the mean |u(n) - u(n-1)| at or above u* and below it,
    the |du|-weighted and the plain mean of u(n) - u*, and u(n)'s standard deviation."""
    pairs = [(abs(b - a), b - u_star) for a, b in zip(u, u[1:])]
    above = [d for d, e in pairs if e >= 0] or [math.nan]
    below = [d for d, e in pairs if e < 0] or [math.nan]
    weight = sum(d for d, _ in pairs) or math.nan
    mean = sum(u) / len(u)
    return {
        "above": sum(above) / len(above),
        "below": sum(below) / len(below),
        "weighted": sum(d * e for d, e in pairs) / weight,
        "plain": mean - u_star,
        "sd": math.sqrt(sum((x - mean) ** 2 for x in u) / len(u)),
    }


def _single_link(
    name: str,
    title: str,
    claim: str,
    results: str,
    rerun: bool,
    overrides: Sequence[str],
    bounds: Sequence[tuple[float, float]] | None = None,
) -> tuple[Report, Callable[[], None]]:
    u_star, p_star = papers.ABS_FIG_TARGETS[name]
    claim = claim.format(u_star=u_star, p_star=p_star)
    rc = sweep_cli(name, results, rerun, overrides)
    runs = link_runs(stored(results, "engine", name), name)
    rows = summary_rows(runs)
    parts = [
        f"With eq. 8 {row[0]} (T = {row[9]:g} ms): b spans {row[3]:.0f}-{row[4]:.0f} packets "
        "(5th-95th percentile), p(n) "
        f"averages {100 * row[5]:.2f}% and u(n) {100 * row[6]:.1f}% "
        f"({targets_met({'p': row[5], 'u': row[6]}, u_star, p_star)}; b_u set the buffer in {100 * row[8]:.0f}% "
        "of the intervals)."
        for row in rows
    ]
    extra = ""
    if bounds:
        over = []
        for r in runs:
            ends = [t for t, _ in bounds[1:]] + [r["duration_s"]]
            # A bound applies from its time on: samples in [t, next bound's time).
            worst = max(
                max((b for s, b in zip(r["series"]["time_s"], r["series"]["buffer_pkts"]) if t <= s < e), default=0)
                - cap
                for (t, cap), e in zip(bounds, ends)
            )
            over.append(
                f"eq. 8 {r['damping']}: the buffer {'never exceeds' if worst <= 0 else 'exceeds'} the bound "
                f"(largest b minus bound: {worst:.0f} packets)"
            )
        extra = " " + "; ".join(over) + "."
    extra += "".join(
        " " + bias_sentence(r, u_star)
        for r in runs
        if r["damping"] == "magnitude" and segment_stats(r["series"], r["warmup_s"], r["duration_s"])["u"] < u_star
    )
    return _report(
        name,
        title,
        runs,
        rows,
        SUMMARY_HEADER,
        claim + " " + " ".join(parts) + extra,
        rc,
        plot_runs(runs, f"{title} (ours)", {0: (u_star, p_star)}, bounds),
    )


def abs_fig5(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    lo, hi = papers.ABS_FIG5_BUFFER_PKTS
    return _single_link(
        "abs_fig5",
        "Zhang and Loguinov (2010), ABS Fig. 5: ABS with 20 FTP flows and web traffic",
        f"The paper: b does not converge but fluctuates between about {lo} and {hi} packets; u(n) "
        "stays near u* = {u_star:.0%} and p(n) below p* = {p_star:.0%}.",
        results,
        rerun,
        overrides,
    )


def abs_fig6(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    bounds = papers.ABS_FIG6_MEMORY_BOUNDS
    return _single_link(
        "abs_fig6",
        "Zhang and Loguinov (2010), ABS Fig. 6: ABS under a memory bound",
        f"The paper: ABS stays under the bound ({', '.join(f'{b:.0f}' for _, b in bounds)} packets "
        "from " + ", ".join(f"{t:.0f}" for t, _ in bounds) + " s) without instability, at the cost "
        "of more loss.",
        results,
        rerun,
        overrides,
        bounds,
    )


def abs_fig7(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    return _single_link(
        "abs_fig7",
        "Zhang and Loguinov (2010), ABS Fig. 7: ABS with FTP, HTTP and UDP flows",
        "The paper: the loss constraint dominates; ABS holds p(n) at p* = {p_star:.0%} with u(n) above u*.",
        results,
        rerun,
        overrides,
    )


def abs_fig8(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    return _single_link(
        "abs_fig8",
        "Zhang and Loguinov (2010), ABS Fig. 8: ABS with five TCP variants at 100 Mb/s",
        "The paper: u(n) stays around u* = {u_star:.0%} and p(n) below p* = {p_star:.0%}.",
        results,
        rerun,
        overrides,
    )


FIG9_TARGETS = papers.ABS_FIG9_TARGETS


def abs_fig9(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    rc = sweep_cli("abs_fig9", results, rerun, overrides)
    runs = link_runs(stored(results, "engine", "abs_fig9"), "abs_fig9")
    rows = summary_rows(runs)
    parts = [
        f"eq. 8 {row[0]}, T = {row[9]:g} ms, link {row[1]} (u* = {FIG9_TARGETS[row[1]][0]:.0%}, p* = "
        f"{FIG9_TARGETS[row[1]][1]:.0%}): p(n) {100 * row[5]:.2f}%, u(n) {100 * row[6]:.1f}%: "
        f"{targets_met({'p': row[5], 'u': row[6]}, *FIG9_TARGETS[row[1]])}."
        for row in rows
    ]
    why = [bias_sentence(r, FIG9_TARGETS[0][0]) for r in runs if r["link"] == 0 and r["damping"] == "magnitude"]
    reading = (
        "The paper: the two ABS routers do not interfere, and each holds utilization at its own target. "
        + " ".join(parts)
        + " "
        + " ".join(why)
    )
    return _report(
        "abs_fig9",
        "Zhang and Loguinov (2010), ABS Fig. 9: an ABS on each link of a parking lot",
        runs,
        rows,
        SUMMARY_HEADER,
        reading,
        rc,
        plot_runs(runs, "ABS Fig. 9 (ours): 50 + 20 Mb/s parking lot", FIG9_TARGETS),
    )
