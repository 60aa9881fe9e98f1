"""Zhang and Loguinov (2010), ABS Figs. 2 and 3: ABS on a 10 Mb/s link with 20 flows, I_u = I_p =
3000 and T = 200 ms, for (u*, p*) = (95%, 0.5%) and (70%, 5%), without gain training (Fig. 2: the
first stable near 1200 packets, the second oscillating between about 1 and 2700) and with it
(Fig. 3: both converge). Preset `abs_fig2_3`. Measured: the spread of b over the last half and
the time b takes to settle within 10% of its last-half mean."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt

from analysis import papers
from analysis.reproductions.abs_control import control_series, plot_timeline, second_half, settle_time_s, spread
from analysis.reproductions.common import Report, status_note, sweep_cli, stored

NAME = "abs_fig2_3"
OSCILLATING = 0.5
"""A buffer whose 5th-95th percentile range over the last half exceeds this fraction of its mean
oscillates; one that settles within 10% of its mean has converged."""
SMOOTH_INTERVALS = 25
"""The settle time is read on b's trailing mean over 25 control intervals (5 s): single 200-ms
samples of a converged buffer still stray by more than 10%."""


def case_metrics(con: Any, run: dict[str, Any]) -> dict[str, Any]:
    s = control_series(con, run["run_id"])
    half = [b for t, b in zip(s["time_s"], s["buffer_pkts"]) if t > run["warmup_s"]]
    gains = [abs(g / s[k][0] - 1) for k in ("gain_util", "gain_loss") for g in s[k]] if s["time_s"] else [0.0]
    settle = settle_time_s(s["time_s"], s["buffer_pkts"], window=SMOOTH_INTERVALS)
    return {**run, "series": s, "spread": spread(half), "settle_s": settle,
            "gain_drift": max(gains)}


def verdict(m: dict[str, Any]) -> str:
    if m["spread"]["relative"] > OSCILLATING:
        return "oscillates"
    return "converges" if m["settle_s"] is not None else "drifts"


def rows_of(cases: list[dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for m in cases:
        sp = m["spread"]
        lo, hi = papers.ABS_FIG2_OSCILLATION_PKTS
        claim = (f"stable near {papers.ABS_FIG2_STABLE_PKTS}" if m["target_util"] > 0.9 else f"oscillates {lo}-{hi}") \
            if not m["train"] else "converges"
        rows.append([f"{m['target_util']:.0%} / {m['target_loss']:.1%}", "yes" if m["train"] else "no", sp["mean"],
                     sp["min"], sp["p5"], sp["p95"], sp["max"], sp["relative"], m["settle_s"],
                     100 * m["loss_interval"], 100 * m["utilization"], 100 * m["gain_drift"], verdict(m), claim])
    return rows


def reading(cases: list[dict[str, Any]]) -> str:
    by = {(m["target_util"] > 0.9, bool(m["train"])): m for m in cases}
    parts = []
    for stable, label in ((True, "(95%, 0.5%)"), (False, "(70%, 5%)")):
        for train in (False, True):
            m = by.get((stable, train))
            if m is None:
                continue
            sp = m["spread"]
            settle = ("never settles within 10%" if m["settle_s"] is None
                      else f"its 5-s mean settles within 10% at {m['settle_s']:.0f} s")
            parts.append(f"{label} {'with' if train else 'without'} training: b spans {sp['min']:.0f}-{sp['max']:.0f} "
                         f"packets over the last half (5th-95th percentile {sp['p5']:.0f}-{sp['p95']:.0f}, mean "
                         f"{sp['mean']:.0f}) and {settle}: it {verdict(m)}.")
    claims = []
    if (True, False) in by:
        m = by[(True, False)]
        claims.append(f"Fig. 2's stable case {'holds' if verdict(m) == 'converges' else 'does not hold'} (mean "
                      f"{m['spread']['mean']:.0f} packets against the paper's {papers.ABS_FIG2_STABLE_PKTS})")
    if (False, False) in by:
        m = by[(False, False)]
        lo, hi = papers.ABS_FIG2_OSCILLATION_PKTS
        claims.append(f"its oscillating case {'holds' if verdict(m) == 'oscillates' else 'does not hold'} (range "
                      f"{m['spread']['min']:.0f}-{m['spread']['max']:.0f} against the paper's {lo}-{hi})")
    trained = [m for m in cases if m["train"]]
    if trained:
        conv = sum(verdict(m) == "converges" for m in trained)
        drift = max(m["gain_drift"] for m in trained)
        claims.append(f"Fig. 3's convergence with training holds in {conv} of {len(trained)} cases. The trained gains "
                      f"moved by at most {100 * drift:.2g}% of their initial 3000: eqs. 15-16 with u and p as fractions "
                      "change I_p by gamma T |p* - p(n)| and I_u by gamma T |du| |u - u*|, hundredths of a packet per "
                      "second per interval, so training as printed cannot change the dynamics of Fig. 2")
    return " ".join(parts) + " " + "; ".join(claims) + "."


def abs_fig2_3(results: str, rerun: bool, overrides: Sequence[str] = ()) -> tuple[Report, Callable[[], None]]:
    rc = sweep_cli(NAME, results, rerun, overrides)
    con = stored(results, "engine")
    cases = sorted((case_metrics(con, r) for r in second_half(con, NAME)),
                   key=lambda m: (-m["target_util"], bool(m["train"])))

    def plot() -> None:
        fig, axes = plt.subplots(3, 2, figsize=(13, 8), sharex=True)
        for col, stable in enumerate((True, False)):
            for m in (m for m in cases if (m["target_util"] > 0.9) == stable):
                plot_timeline(axes[:, col], m["series"], "training" if m["train"] else "no training",
                              m["target_util"], m["target_loss"], smooth=5)
            axes[0, col].set_title(("(a) u* = 95%, p* = 0.5%" if stable else "(b) u* = 70%, p* = 5%"))
            axes[0, col].legend(fontsize=7)
        fig.suptitle("ABS Figs. 2-3: 10 Mb/s, 20 Reno flows, I_u = I_p = 3000, T = 200 ms (ours)", fontsize=10)
        fig.tight_layout()

    rep = Report(NAME, "Zhang and Loguinov (2010), ABS Figs. 2 and 3: ABS without and with gain training",
                 f"python -m sweeps -m +experiment={NAME}   # then: python -m analysis reproduce {NAME}", rows_of(cases),
                 ["u* / p*", "training", "b mean (last half)", "b min", "b p5", "b p95", "b max",
                  "(p95 - p5) / mean", "5-s mean settles within 10% at (s)", "p % (last half)", "u % (last half)",
                  "largest gain change %", "ours", "paper"])
    rep.reading = reading(cases) + status_note(rc)
    return rep, plot
