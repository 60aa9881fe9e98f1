"""Appenzeller et al. (2004): the minimum buffer for 95% utilization (Fig. 12) and short flows'
completion times (Fig. 13)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt

from analysis import rules
from analysis.db import ok_run_values, start_buffers
from analysis.reproductions.common import (
    OTHER_BACKENDS,
    Report,
    fmt,
    mean_sd,
    mlflow_overrides,
    plain_log_x,
    ray_session,
    run_jobs,
    status_note,
    stored,
)
from analysis.search import min_buffer_search
from sweeps.api import run_points

# -- Appenzeller et al. minimum buffer for 95% ----------------------------------------------------
STANFORD_FLOWS = (25, 50, 100, 150, 200, 300, 400, 500)
STANFORD_RTT_MS = 80.0  # "about 80 ms average RTT" (their Fig. 10); uniform 40-120 ms
# Two RTO profiles, because the minimum RTO decides how long a timed-out flow stays silent, and
# timeouts are common at these window sizes: ns-2 2.35's defaults (min RTO 200 ms), and the
# defaults of the ns-2 the paper used in 2003-04 (min RTO 1 s until 2004/10/14, initial RTO 6 s
# until 2006/01/21, as recorded in ns-2's own validation scripts).
STANFORD_PROFILES: tuple[tuple[str, str, list[str]], ...] = (
    ("stanford_min_buffer", "ns-2 2.35 defaults (min RTO 200 ms)", []),
    (
        "stanford_min_buffer_rto1s",
        "ns-2 of 2004 (min RTO 1 s, initial RTO 6 s)",
        ["tcp.min_rto_ms=1000", "tcp.init_rto_s=6"],
    ),
)


def _loglog_slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else math.nan


STANFORD_CORE_MBPS = 155.0
STANFORD_SEEDS = (1, 2)


def stanford_overrides(results: str, name: str, extra: list[str], core_mbps: float = STANFORD_CORE_MBPS) -> list[str]:
    """The sweep overrides of one profile's probes (flows, buffer_pkts and seed vary per probe)."""
    rtt = STANFORD_RTT_MS
    return [
        f"results_dir={results}",
        f"name={name}",
        "tcp=reno",
        f"core_mbps={core_mbps:g}",
        f"rtt_ms={rtt:g}",
        f"rtt_spread_ms={rtt:g}",
        "wmax_pkts=100000",
        "duration_s=100",
        "warmup_s=30",
        "start_window_s=5",
        *extra,
        *mlflow_overrides(),
    ]


# The paper's own 95% figure, its Fig. 12: a 400 Mb/s link on which short flows (14 packets, about
# 80 Mb/s, 20% of the link) run beside 1-500 long flows; n in RTT x C / sqrt(n) counts the long
# flows (its footnote 7).
FIG12_NAME = "stanford_min_buffer_fig12"
FIG12_CORE_MBPS = 400.0
FIG12_SHORT_MBPS = 80.0
FIG12_FLOWS = (50, 100, 200, 300, 400, 500)
FIG12_HALF_RULE_FLOWS = (100, 200, 300, 500)
"""Where utilization at 0.5 x RTT x C / sqrt(n) is compared with ns-2: constant in n if the minimum
buffer scales as 1/sqrt(n), rising with n if it falls faster."""


def fig12_overrides(results: str, name: str = FIG12_NAME) -> list[str]:
    """The Fig. 12 traffic mix (also the set-up of Fig. 13)."""
    return stanford_overrides(
        results, name, [f"short_mbps={FIG12_SHORT_MBPS:g}", "short_flow_pkts=14"], FIG12_CORE_MBPS
    )


def fig12_rule_pkts(n: int) -> float:
    """RTT x C / sqrt(n) on the Fig. 12 link, n counting the long flows."""
    return rules.stanford_pkts(FIG12_CORE_MBPS, STANFORD_RTT_MS, n)


def fig12_half_rule_points(flows: tuple[int, ...], seeds: tuple[int, ...]) -> list[dict[str, Any]]:
    return [{"flows": n, "buffer_pkts": round(0.5 * fig12_rule_pkts(n)), "seed": seed} for n in flows for seed in seeds]


@dataclass
class Fig12:
    found: dict[int, int | None]
    at_min: dict[int, tuple[float, float, float]]  # mean cwnd, loss rate, short-flow AFCT (ms)
    half_rule: dict[int, float]  # ours: utilization at 0.5 x rule, mean over seeds
    rc: int

    def slope(self) -> float:
        pts = [(n, b) for n, b in self.found.items() if n >= 100 and b]
        return _loglog_slope([n for n, _ in pts], [b for _, b in pts]) if len(pts) > 2 else math.nan


def _fig12(results: str, rerun: bool) -> Fig12:
    base = fig12_overrides(results) + (["force=true"] if rerun else [])
    hi = [math.ceil(2 * fig12_rule_pkts(n)) for n in FIG12_FLOWS]
    searches = min_buffer_search(base, [{"flows": n} for n in FIG12_FLOWS], 0.95, hi, STANFORD_SEEDS, results)
    found = {s.point["flows"]: s.min_buffer_pkts for s in searches}
    con = stored(results, "engine", FIG12_NAME)
    at_min = {
        n: con.execute(
            """SELECT avg(mean_cwnd_pkts), avg(loss_rate), avg(short_afct_ms) FROM runs
                                WHERE name = ? AND status = 'ok' AND flows = ? AND buffer_pkts = ?""",
            [FIG12_NAME, n, b],
        ).fetchone()
        for n, b in found.items()
    }
    rc, half = fig12_half_rule_utilization(results, base)
    return Fig12(found, at_min, half, rc)


def fig12_half_rule_utilization(
    results: str,
    base: list[str],
    flows: tuple[int, ...] = FIG12_HALF_RULE_FLOWS,
    seeds: tuple[int, ...] = STANFORD_SEEDS,
) -> tuple[int, dict[int, float]]:
    """Our utilization at 0.5 x RTT x C / sqrt(n) on the Fig. 12 link, the mean over seeds per n
    (the tests pass a reduced grid)."""
    points = fig12_half_rule_points(flows, seeds)
    rc, run_ids = run_points(base, points)
    util = ok_run_values(results, run_ids, "utilization")
    return rc, {
        n: mean_sd([util[r][0] for p, r in zip(points, run_ids) if p["flows"] == n and r in util])[0] for n in flows
    }


def _plot_min_buffer(
    found: dict[str, dict[int, int | None]],
    ns2_found: dict[int, Any],
    fits: dict[str, float],
    ns2_fit: float,
    fig12: Fig12,
    ns2_half: dict[int, float | None],
) -> None:
    """Top: the minimum buffers against N on linear and log-log axes; bottom: Fig. 12."""
    rtt, core = STANFORD_RTT_MS, STANFORD_CORE_MBPS
    fig, grid = plt.subplots(2, 2, figsize=(13, 10))
    xs = list(range(10, 501, 5))
    for k, ax in enumerate(grid[0]):
        for (name, label, _), marker in zip(STANFORD_PROFILES, "os"):
            pts = [(n, b) for n, b in found[name].items() if b]
            ax.plot(
                [n for n, _ in pts],
                [b for _, b in pts],
                marker=marker,
                label=f"ours, {label}; slope {fits[name]:.2f} for N >= 100",
            )
        pts = sorted((n, b) for n, b in ns2_found.items() if b)
        if pts:
            ax.plot(
                [n for n, _ in pts],
                [b for _, b in pts],
                "x:",
                color="tab:red",
                markersize=9,
                label=f"ns-2 2.35, same set-up, min RTO 200 ms; slope {ns2_fit:.2f} for N >= 100",
            )
        ax.plot(xs, [rules.stanford_pkts(core, rtt, n) for n in xs], "k-", label="1 x RTT x C / sqrt(N) (slope -0.5)")
        ax.plot(xs, [0.5 * rules.stanford_pkts(core, rtt, n) for n in xs], "k--", label="0.5 x RTT x C / sqrt(N)")
        ax.set_xlabel("number of long-lived flows N")
        ax.set_ylabel("minimum buffer for 95% utilization (packets)")
        ax.grid(alpha=0.3, which="both")
        if k == 0:
            ax.set_ylim(0, None)
            ax.set_title("(a) linear axes, as in the paper")
            ax.legend(fontsize=8)
        else:
            from matplotlib.ticker import FixedLocator, NullFormatter

            plain_log_x(ax)
            ax.set_yscale("log")
            ax.set_xlim(20, 600)
            ax.xaxis.set_major_locator(FixedLocator([25, 50, 100, 200, 300, 500]))
            ax.yaxis.set_major_locator(FixedLocator([25, 50, 100, 200, 400]))
            ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, _: f"{y:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title("(b) log-log axes: 1/sqrt(N) is a line of slope -0.5")
    _plot_fig12(grid[1], fig12, ns2_half)
    fig.suptitle(
        f"Appenzeller et al.: minimum buffer for 95% utilization. Top: 155 Mb/s, long flows only; "
        f"bottom: the paper's Fig. 12 set-up, 400 Mb/s with 20% short flows.\nRTT 40-120 ms "
        f"(mean {rtt:g}), Reno, 1000-byte packets; each probe the mean of 2 seeds"
    )
    fig.tight_layout()


def profile_min_buffers(
    results: str,
    name: str,
    extra: list[str],
    flows: tuple[int, ...],
    rerun: bool = False,
    seeds: tuple[int, ...] = STANFORD_SEEDS,
) -> tuple[dict[int, int | None], dict[int, tuple[float, float, float]]]:
    """One RTO profile's minimum buffers for 95% utilization per flow count (bisection on Ray), and
    per minimum buffer the mean cwnd, loss rate and share of recoveries that were timeouts."""
    bdp = rules.bdp_pkts(STANFORD_CORE_MBPS, STANFORD_RTT_MS)
    base = stanford_overrides(results, name, extra) + (["force=true"] if rerun else [])
    searches = min_buffer_search(
        base, [{"flows": n} for n in flows], 0.95, [math.ceil(bdp)] * len(flows), seeds, results
    )
    found = {s.point["flows"]: s.min_buffer_pkts for s in searches}
    con = stored(results, "engine", name)
    diag = {
        n: con.execute(
            """
                SELECT avg(mean_cwnd_pkts), avg(loss_rate), sum(timeouts) / sum(timeouts + fast_retransmits)
                FROM runs WHERE name = ? AND status = 'ok' AND flows = ? AND buffer_pkts = ?""",
            [name, n, b],
        ).fetchone()
        for n, b in found.items()
    }
    return found, diag


def stanford_min_buffer(results: str, rerun: bool) -> tuple[Report, Callable[[], None]]:
    rtt, core = STANFORD_RTT_MS, STANFORD_CORE_MBPS
    found: dict[str, dict[int, int | None]] = {}
    diag: dict[str, dict[int, tuple[float, float, float]]] = {}
    with ray_session():
        for name, _, extra in STANFORD_PROFILES:
            found[name], diag[name] = profile_min_buffers(results, name, extra, STANFORD_FLOWS, rerun)
        fig12 = _fig12(results, rerun)
        ns2_found, ns2_half = _ns2_side(results) if "ns2" in OTHER_BACKENDS.get() else ({}, {})
    main, old = (p[0] for p in STANFORD_PROFILES)
    rows = []
    for n in STANFORD_FLOWS:
        rule = rules.stanford_pkts(core, rtt, n)
        a, b, c = found[main][n], found[old][n], ns2_found.get(n)
        rows.append(
            [
                n,
                rule,
                0.5 * rule,
                a,
                None if a is None else a / rule,
                b,
                None if b is None else b / rule,
                c,
                None if c is None or a is None else a / c,
            ]
        )

    big_n = [n for n in STANFORD_FLOWS if n >= 100]
    small_n = [n for n in STANFORD_FLOWS if n <= 100]  # where windows are large

    def slope_over(buffers: dict[int, int | None], ns: list[int]) -> float:
        pts = [(n, buffers[n]) for n in ns if buffers.get(n)]
        return _loglog_slope([n for n, _ in pts], [b for _, b in pts]) if len(pts) > 2 else math.nan

    fits = {name: slope_over(found[name], big_n) for name, _, _ in STANFORD_PROFILES}
    few = {name: slope_over(found[name], small_n) for name, _, _ in STANFORD_PROFILES}
    ns2_fit = slope_over(ns2_found, big_n)

    def plot() -> None:
        _plot_min_buffer(found, ns2_found, fits, ns2_fit, fig12, ns2_half)

    header = ["flows", "RTT x C / sqrt(N)", "0.5 x RTT x C / sqrt(N)"]
    for _, label, _ in STANFORD_PROFILES:
        header += [f"min buffer, {label}", "/ rule"]
    header += ["min buffer, ns-2 2.35 on the same set-up (min RTO 200 ms)", "ours (200 ms) / ns-2"]
    rep = Report(
        "stanford_min_buffer",
        "Appenzeller et al. (2004): minimum buffer for 95% utilization vs flows",
        "python -m analysis reproduce stanford_min_buffer",
        rows,
        header,
    )
    rep.notes = [
        "Bisection over buffer_pkts per point, one search per RTO profile (probes stored as runs named "
        f"{main} and {old}). Measured at the minimum buffer:",
        "",
    ]
    rep.notes += [
        "| flows | profile | mean cwnd (pkts) | loss rate | timeouts / recoveries | min buffer x N |",
        "|---|---|---|---|---|---|",
    ]
    for n in STANFORD_FLOWS:
        for name, label, _ in STANFORD_PROFILES:
            cwnd, loss, to = diag[name][n]
            b = found[name][n]
            rep.notes.append(
                f"| {n} | {label} | {fmt(cwnd)} | {fmt(loss)} | {fmt(to)} | {'n/a' if b is None else b * n} |"
            )
    rep.notes += _fig12_notes(fig12, ns2_half)
    below = {
        name: [
            n
            for n in STANFORD_FLOWS
            if found[name][n] is not None and found[name][n] <= rules.stanford_pkts(core, rtt, n)
        ]
        for name, _, _ in STANFORD_PROFILES
    }
    per_n = {name: [found[name][n] * n for n in big_n if found[name][n]] for name, _, _ in STANFORD_PROFILES}
    spread = {name: max(v) / min(v) if v else math.nan for name, v in per_n.items()}

    def span(col: int, ns: list[int], scale: float = 1.0, fmt: str = ".0f") -> str:
        """min-max over both profiles of a diagnostic column, over the flow counts ns."""
        v = [d[k][col] * scale for d in diag.values() for k in ns if d[k][col] is not None]
        return f"{min(v):{fmt}}-{max(v):{fmt}}" if v else "n/a"

    r_small = [r[c] for r in rows if r[0] in small_n for c in (4, 6) if r[c] is not None]
    ratio_small = f"{min(r_small):.1f}-{max(r_small):.1f}" if r_small else "n/a"
    rep.reading = (
        f"Both curves fall as N grows and lie at or below RTT x C / sqrt(N) for N in {below[main]} (min RTO "
        f"200 ms) and {below[old]} (min RTO 1 s); with fewer flows they partly synchronise and need more, as "
        "Appenzeller et al. also saw below ~250 flows. The shape is where we differ: for N >= 100 the log-log "
        f"slopes are {fits[main]:.2f} and {fits[old]:.2f}, not -0.5, so we do NOT reproduce the paper's "
        "1/sqrt(N) scaling. Our minimum buffer falls closer to 1/N: for N >= 100, min buffer x N varies only by a "
        f"factor of {spread[main]:.2f} and {spread[old]:.2f} (last column of the second table), i.e. the buffer "
        "needed is a roughly fixed number of mean windows (BDP / N), not sqrt(N) of them as the paper's model of "
        f"independent sawtooths predicts. These are small windows ({span(0, [100])} packets at N = 100 and "
        f"{span(0, [500])} at N = 500) with loss rates of {span(1, big_n, scale=100, fmt='.1f')}% and timeouts in "
        f"{span(2, big_n, scale=100)}% of recoveries for N >= 100; the paper notes that its model "
        "needs little synchronisation and windows above two. The 2004 minimum RTO of 1 s keeps timed-out flows "
        "silent five times longer and flattens the curve, but not to -0.5. Where windows are large the paper's "
        f"shape does appear: for N <= 100 (mean windows {span(0, small_n)} packets) the slopes are "
        f"{few[main]:.2f} and {few[old]:.2f}, though at {ratio_small} x the rule. So in our engine the minimum "
        "buffer relative to RTT x C / sqrt(N) follows the mean window BDP / N: roughly constant above, and "
        f"shrinking below, the {diag[main][100][0] or math.nan:.0f} packets windows have at N = 100. "
        + _stanford_ns2_reading(rows, ns2_fit, big_n)
        + "\n\n"
        + _fig12_reading(fig12, ns2_half)
        + status_note(fig12.rc)
    )
    return rep, plot


def _ns2_side(results: str) -> tuple[dict[int, int | None], dict[int, float | None]]:
    """ns-2's minimum buffers (the same bisection, seeds and first RTO profile, on the ns2 backend)
    and its utilization at half the rule on the Fig. 12 link; every probe is a stored run."""
    name, _, extra = STANFORD_PROFILES[0]
    hi = math.ceil(rules.bdp_pkts(STANFORD_CORE_MBPS, STANFORD_RTT_MS))
    searches = min_buffer_search(
        stanford_overrides(results, name, extra) + ["backend=ns2"],
        [{"flows": n} for n in STANFORD_FLOWS],
        0.95,
        [hi] * len(STANFORD_FLOWS),
        STANFORD_SEEDS,
        results,
    )
    _, half = fig12_half_rule_utilization(results, fig12_overrides(results) + ["backend=ns2"])
    return {s.point["flows"]: s.min_buffer_pkts for s in searches}, dict(half)


def _stanford_ns2_reading(rows: list[list[Any]], ns2_fit: float, big_n: list[int]) -> str:
    """What ns-2 itself does on this set-up, from the stored cross-check."""
    ratios = [r[8] for r in rows if r[8] is not None and r[0] in big_n]
    few = [(r[0], r[8]) for r in rows if r[8] is not None and r[0] not in big_n]
    if not ratios:
        return (
            "ns-2 has not been run on this set-up (`python -m analysis reproduce stanford_min_buffer --backends "
            "ns2`, needs ns-2), so we cannot tell how much of the gap is our engine."
        )
    ns2_vals = ", ".join(f"{r[7]}" for r in rows if r[0] in big_n and r[7] is not None)
    return (
        f"ns-2 2.35 itself, run on the same set-up (the ns2 backend, `--backends ns2`: the "
        f"same bisection and seeds, the same RTTs and start times), needs {ns2_vals} packets for N = "
        f"{', '.join(str(n) for n in big_n)}: a log-log slope of {ns2_fit:.2f} for N >= 100, and our "
        f"minimum buffer (200 ms profile) is {min(ratios):.2f}-{max(ratios):.2f} x ns-2's there ("
        + ", ".join(f"{r:.2f} at N = {n}" for n, r in few)
        + " with fewer flows, where two seeds of few, partly "
        "synchronised flows make the search noisy: ns-2 needs "
        + ", ".join(f"{r[7]} packets at {r[0]} flows" for r in rows if r[0] not in big_n and r[7] is not None)
        + "). So the "
        "steep fall is what ns-2 does on this set-up (155 Mb/s, long-lived Reno, RTTs around 80 ms, "
        "drop-tail), not a difference between our engine and ns-2. The paper's 95% curve comes from another "
        "set-up: in the paper it is Figure 12, a 400 Mb/s link on which short flows carry about 20% of the "
        "traffic next to 1-500 long flows (its long-flow-only OC3 figure, Figure 10, is discussed for 98% "
        "and 99.9% utilization); it is reproduced in the last two tables and panels (c) and (d)."
    )


def _plot_fig12(axes: Any, fig12: Fig12, ns2_half: dict[int, float | None]) -> None:
    """(c) the Fig. 12 minimum buffers against the rule lines; (d) utilization at half the rule."""
    ax_c, ax_d = axes
    rule = [fig12_rule_pkts(n) for n in range(10, 501, 5)]
    pts = [(n, b) for n, b in fig12.found.items() if b]
    ax_c.plot(
        [n for n, _ in pts],
        [b for _, b in pts],
        "o-",
        color="C2",
        label=f"ours, min RTO 200 ms; slope {fig12.slope():.2f} for N >= 100",
    )
    ax_c.plot(range(10, 501, 5), rule, "k-", label="1 x RTT x C / sqrt(N), C = 400 Mb/s")
    ax_c.plot(range(10, 501, 5), [0.5 * r for r in rule], "k--", label="0.5 x RTT x C / sqrt(N)")
    ax_c.set_ylim(0, None)
    ax_c.set_xlabel("number of long-lived flows N (beside the short flows)")
    ax_c.set_ylabel("minimum buffer for 95% utilization (packets)")
    ax_c.set_title("(c) Fig. 12 set-up: 400 Mb/s, 80 Mb/s of 14-packet flows")
    ax_c.grid(alpha=0.3)
    ax_c.legend(fontsize=8)
    ns = list(FIG12_HALF_RULE_FLOWS)
    ax_d.plot(ns, [fig12.half_rule[n] for n in ns], "o-", color="C2", label="ours")
    theirs = [(n, ns2_half.get(n)) for n in ns if ns2_half.get(n) is not None]
    if theirs:
        ax_d.plot(
            [n for n, _ in theirs],
            [u for _, u in theirs],
            "x:",
            color="tab:red",
            markersize=9,
            label="ns-2 2.35, same set-up",
        )
    ax_d.axhline(0.95, color="gray", ls=":", label="95% target")
    ax_d.set_xlabel("number of long-lived flows N")
    ax_d.set_ylabel("utilization with a buffer of 0.5 x RTT x C / sqrt(N)")
    ax_d.set_title("(d) flat if the need scales as 1/sqrt(N); rising if it falls faster")
    ax_d.set_ylim(0.85, 1.0)
    ax_d.grid(alpha=0.3)
    ax_d.legend(fontsize=8)


def _fig12_notes(fig12: Fig12, ns2_half: dict[int, float | None]) -> list[str]:
    out = [
        "",
        "The paper's Fig. 12 set-up (400 Mb/s; Poisson arrivals of 14-packet Reno flows offering 80 Mb/s beside "
        f"N long flows; same RTTs, seeds and bisection; probes stored as runs named {FIG12_NAME}; reproduce the "
        f"sweeps with `python -m sweeps -m {' '.join(fig12_overrides('results')[1:])} "
        f"flows={','.join(str(n) for n in FIG12_FLOWS)} buffer_pkts=...`):",
        "",
        "| long flows N | RTT x C / sqrt(N) | min buffer for 95%, ours | / rule | mean cwnd of long flows (pkts) "
        "| loss rate | short-flow AFCT (ms) |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in FIG12_FLOWS:
        rule = fig12_rule_pkts(n)
        b = fig12.found[n]
        cwnd, loss, afct = fig12.at_min[n]
        out.append(
            f"| {n} | {rule:.0f} | {fmt(b)} | {fmt(None if b is None else b / rule)} | {fmt(cwnd)} | "
            f"{fmt(loss)} | {fmt(afct)} |"
        )
    out += [
        "",
        "Utilization with a buffer of 0.5 x RTT x C / sqrt(N) (mean of the 2 seeds):",
        "",
        "| long flows N | buffer (pkts) | ours | ns-2 2.35 | ours - ns-2 |",
        "|---|---|---|---|---|",
    ]
    for n in FIG12_HALF_RULE_FLOWS:
        theirs = ns2_half.get(n)
        ours = fig12.half_rule[n]
        b = round(0.5 * fig12_rule_pkts(n))
        out.append(f"| {n} | {b} | {fmt(ours)} | {fmt(theirs)} | {fmt(None if theirs is None else ours - theirs)} |")
    return out


def _fig12_reading(fig12: Fig12, ns2_half: dict[int, float | None]) -> str:
    ratios = [fig12.found[n] / fig12_rule_pkts(n) for n in FIG12_FLOWS if n >= 200 and fig12.found[n]]
    half = [fig12.half_rule[n] for n in FIG12_HALF_RULE_FLOWS]
    diffs = [abs(fig12.half_rule[n] - u) for n, u in ns2_half.items() if u is not None]
    below = [n for n in FIG12_FLOWS if fig12.found[n] and fig12.found[n] <= fig12_rule_pkts(n)]
    sqrt_like = -0.75 <= fig12.slope() <= -0.25
    text = (
        f"In the paper's Fig. 12 set-up (400 Mb/s, 20% of it in short flows) the minimum buffer for 95% is at or "
        f"below RTT x C / sqrt(N) for N in {below} and lies between {min(ratios):.2f} and {max(ratios):.2f} x the "
        'rule for N >= 200 (the paper: "if we want 95% utilization, then we need a buffer close to '
        f'RTT x C / sqrt(n)"). The log-log slope for N >= 100 is {fig12.slope():.2f}'
        + (
            ", close to the -0.5 of 1/sqrt(N). "
            if sqrt_like
            else ", not -0.5: this traffic mix does not give the 1/sqrt(N) shape either. "
        )
        + "Without any fit: with a buffer of half the rule, utilization goes from "
        f"{half[0]:.3f} at N = {FIG12_HALF_RULE_FLOWS[0]} to {half[-1]:.3f} at N = {FIG12_HALF_RULE_FLOWS[-1]}; "
        "under 1/sqrt(N) scaling it would stay level. "
    )
    if diffs:
        theirs = [ns2_half[n] for n in FIG12_HALF_RULE_FLOWS if ns2_half.get(n) is not None]
        text += (
            "ns-2 2.35 on the same set-up (the ns2 backend, `--backends ns2`; short flows from "
            "pooled ns-2 agents) gives "
            + ", ".join(f"{u:.3f}" for u in theirs)
            + f" at those buffers, within {max(diffs):.3f} of ours, and climbs the same way. "
        )
    else:
        text += (
            "ns-2 has not been run on this set-up (`python -m analysis reproduce stanford_min_buffer --backends ns2`). "
        )
    if sqrt_like:
        return text
    return text + (
        "So neither the long-flow OC3 set-up nor the paper's traffic mix gives a minimum buffer that falls as "
        "1/sqrt(N) for N between 100 and 500 in our engine"
        + (" or in ns-2 2.35" if diffs else "")
        + "; the rule's magnitude holds with many flows while its scaling does not."
    )


# -- Appenzeller et al. Fig. 13: short-flow completion times ---------------------------------------
FIG13_FLOWS = (50, 100, 200, 300, 400, 500)
FIG13_NAME = "appenzeller_fig13"


def appenzeller_fig13(
    results: str, rerun: bool, flows: tuple[int, ...] = FIG13_FLOWS, seeds: tuple[int, ...] = STANFORD_SEEDS
) -> tuple[Report, Callable[[], None]]:
    """AFCT of the 14-packet flows of the Fig. 12 mix with RTT x C and with RTT x C / sqrt(n) buffers
    (the tests pass a reduced grid)."""
    base = fig12_overrides(results, FIG13_NAME) + (["force=true"] if rerun else [])
    rule_names = ("bdp", "stanford")
    # Each rule on the nominal RTT (as the paper sizes it), not on the flows' harmonic mean.
    points = [
        {"flows": n, "buffer_policy": {"name": r, "rtt_ms": STANFORD_RTT_MS}, "seed": seed}
        for n in flows
        for r in rule_names
        for seed in seeds
    ]
    rc, run_ids = run_jobs(base, points)
    got = ok_run_values(results, run_ids, "short_afct_ms", "utilization", "mean_queue_delay_ms")
    buffers = start_buffers(results, run_ids)
    stats: dict[tuple[int, str], list[tuple]] = {}
    for p, r in zip(points, run_ids):
        if r in got:
            stats.setdefault((p["flows"], p["buffer_policy"]["name"]), []).append((*got[r], buffers[r]))

    def mean(n: int, rule: str, col: int) -> float:
        return mean_sd([v[col] for v in stats.get((n, rule), [])])[0]

    rows = []
    for n in flows:
        big, small = mean(n, "bdp", 0), mean(n, "stanford", 0)
        rows.append(
            [
                n,
                round(mean(n, "bdp", 3)),
                round(mean(n, "stanford", 3)),
                big,
                small,
                small / big,
                mean(n, "bdp", 2),
                mean(n, "stanford", 2),
                mean(n, "bdp", 1),
                mean(n, "stanford", 1),
            ]
        )

    def plot() -> None:
        fig, ax = plt.subplots(figsize=(8, 5))
        for rule, label, marker in (("bdp", "RTT x C buffers", "s"), ("stanford", "RTT x C / sqrt(n) buffers", "o")):
            ms = [mean_sd([v[0] for v in stats.get((n, rule), [])]) for n in flows]
            ax.errorbar(
                flows,
                [m for m, _ in ms],
                yerr=[sd for _, sd in ms],
                marker=marker,
                capsize=3,
                label=f"AFCT of a 14-packet flow, {label}",
            )
        ax.set_xlabel("number of long-lived flows n")
        ax.set_ylabel("average completion time of a 14-packet flow (ms)")
        ax.set_ylim(0, 700)  # the paper's axis
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("Appenzeller et al. Fig. 13: 400 Mb/s, 80 Mb/s of 14-packet flows, RTT 40-120 ms, Reno")
        fig.tight_layout()

    rep = Report(
        FIG13_NAME,
        "Appenzeller et al. (2004), Fig. 13: short-flow completion times vs buffer size",
        "python -m analysis reproduce appenzeller_fig13",
        rows,
        [
            "long flows n",
            "RTT x C (pkts)",
            "RTT x C / sqrt(n) (pkts)",
            "AFCT, RTT x C (ms)",
            "AFCT, RTT x C / sqrt(n) (ms)",
            "ratio",
            "queueing delay, RTT x C (ms)",
            "queueing delay, RTT x C / sqrt(n) (ms)",
            "utilization, RTT x C",
            "utilization, RTT x C / sqrt(n)",
        ],
    )
    rep.notes = [
        "The Fig. 12 traffic mix (Poisson arrivals of 14-packet Reno flows offering 80 Mb/s of the 400 Mb/s "
        "beside n long flows; RTTs uniform in 40-120 ms); completion time from the first packet sent to the "
        f"last packet received, over flows that started after the 30 s warm-up; mean of {len(seeds)} seed(s) "
        f"(error bars: their spread). Runs named {FIG13_NAME}, buffer_policy=bdp and buffer_policy=stanford "
        f"with buffer_policy.rtt_ms={STANFORD_RTT_MS:g}.",
        "",
        "The paper gives no numbers here, only the two curves (AFCT up to ~700 ms) and the claim that "
        "the AFCT is much shorter with RTT x C / sqrt(n) buffers because the queueing delay is lower.",
    ]
    ratios = [r[5] for r in rows if not math.isnan(r[5])]
    shorter = all(r < 1 for r in ratios) and ratios

    def span(col: int) -> str:
        lo, hi = min(r[col] for r in rows), max(r[col] for r in rows)
        return f"{lo:.3f}" if f"{lo:.3f}" == f"{hi:.3f}" else f"{lo:.3f}-{hi:.3f}"

    rep.reading = (
        (
            "With RTT x C / sqrt(n) buffers the short flows complete faster at every n, as in the paper: their AFCT is "
            f"{min(ratios):.2f}-{max(ratios):.2f} x the AFCT with RTT x C buffers"
            if shorter
            else "The paper's claim does not hold at every n here: AFCT with RTT x C / sqrt(n) buffers is "
            f"{min(ratios, default=math.nan):.2f}-{max(ratios, default=math.nan):.2f} x the AFCT with RTT x C buffers"
        )
        + f" ({rows[0][4]:.0f} vs {rows[0][3]:.0f} ms at n = {rows[0][0]}, {rows[-1][4]:.0f} vs {rows[-1][3]:.0f} ms "
        f"at n = {rows[-1][0]}). The cause is the one the paper gives: the full-size buffer stays largely occupied, "
        f"adding {min(r[6] for r in rows):.0f}-{max(r[6] for r in rows):.0f} ms of queueing to every packet against "
        f"{min(r[7] for r in rows):.0f}-{max(r[7] for r in rows):.0f} ms with the small one, while a 14-packet flow "
        "needs about 2.5 round trips even on an empty path (200 ms at the mean RTT of 80 ms). Utilization with the "
        f"small buffers is {span(9)} (with the full ones {span(8)})." + status_note(rc)
    )
    return rep, plot
