"""Queue disciplines (issue 32): does AQM make the buffer's size matter less
(`aqm_buffer_independence`), does FQ-CoDel isolate a sparse flow (`fq_codel_isolation`), and
RED's sensitivity to its parameters (`red_tuning`). docs/reproductions.md."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis import papers
from analysis.reproductions.common import Report, log_x_at, status_note, stored, sweep_cli

QUEUES = ("droptail", "red", "codel", "pie", "fq_codel")
COLORS = dict(zip(QUEUES, ("k", "C0", "C1", "C2", "C3")))
FULL_UTIL = 0.95
"""'Full utilization' in the claim checks: at least this share of the link."""


# -- aqm_buffer_independence ----------------------------------------------------------------------
def aqm_buffer_independence(
    results: str, rerun: bool, grid: tuple[str, ...] = (), name: str = "aqm_buffer_independence"
) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one); `name`: this
    preset or its precision variant (aqm_buffer_independence_precision)."""
    rc = sweep_cli(name, results, rerun, grid)
    con = stored(results, "engine", name)
    data = {
        tuple(k): dict(util=u, p50=p50, p99=p99)
        for *k, u, p50, p99 in con.execute(
            """SELECT tcp, flows, core_mbps, queue, buffer_policy_factor, avg(utilization),
                avg(p50_queue_delay_ms), avg(p99_queue_delay_ms)
            FROM runs WHERE name = ? AND status = 'ok' GROUP BY ALL ORDER BY ALL""",
            [name],
        ).fetchall()
    }
    setups = sorted({k[:3] for k in data})
    factors = sorted({k[4] for k in data})
    rows, held, grew = [], [], []
    for tcp, flows, mbps in setups:
        at = {(q, f): data.get((tcp, flows, mbps, q, f)) for q in QUEUES for f in factors}
        deep = [f for f in factors if f >= 1]
        for q in QUEUES:
            pts = [at[q, f] for f in deep if at[q, f]]
            if not pts:
                continue
            p50s = [p["p50"] for p in pts]
            utils = [p["util"] for p in pts]
            target = papers.AQM_TARGET_MS.get(q)
            verdict = "-"
            if target is not None:
                why = [w for w, bad in (("delay", max(p50s) > 2 * target), ("util", min(utils) < FULL_UTIL)) if bad]
                held.append(not why)
                verdict = "no: " + ", ".join(why) if why else "yes"
            elif q == "droptail":
                ok = all(b >= a for a, b in zip(p50s, p50s[1:])) and p50s[-1] > 2 * p50s[0]
                grew.append(ok)
                verdict = "grows" if ok else "no"
            p99 = max(p["p99"] for p in pts)
            rows.append([tcp, flows, f"{mbps:g}", q, min(utils), min(p50s), max(p50s), p99, verdict])
    report = Report(
        name=name,
        title="Does AQM make the buffer size matter less? Utilization and sojourn vs buffer (0.25-8 x BDP)",
        command=f"python -m analysis reproduce {name}",
        header=["tcp", "N", "Mb/s", "queue", "min util", "min p50 ms", "max p50 ms", "max p99 ms", "claim"],
        rows=rows,
        notes=[
            "Rows cover buffers of at least one BDP (the claim's range). `claim`: for codel, pie and fq_codel, "
            f"the median sojourn stays within twice the discipline's target (RFC targets: "
            f"{', '.join(f'{q} {t:g} ms' for q, t in papers.AQM_TARGET_MS.items())}) with utilization >= "
            f"{FULL_UTIL} at every such buffer; for droptail, that its median sojourn grows with the buffer "
            "(never falls, and more than doubles from 1 to 8 x BDP)."
        ],
        reading=_independence_reading(held, grew, rows, _single_flow_epochs(con, name), _bdp_unit(con, name))
        + status_note(rc),
    )
    return report, lambda: _independence_plot(data, setups, factors)


def _single_flow_epochs(con: Any, name: str) -> dict[float, float]:
    """Per capacity, the longest Reno congestion-avoidance epoch of the single-flow runs in seconds
    (from W/2 back to W = BDP at one packet per RTT takes BDP/2 round trips), and `window_s`, the
    measured window."""
    got = con.execute(
        """SELECT r.core_mbps, max(f.rtt_ms / 1e3 * (r.core_mbps * 1e6 * f.rtt_ms / 1e3 / (8 * r.pkt_bytes)) / 2),
            any_value(r.duration_s - r.warmup_s)
        FROM runs r JOIN flows f ON f.run_id = r.run_id WHERE r.name = ? AND r.flows = 1 AND r.status = 'ok'
        GROUP BY ALL""",
        [name],
    ).fetchall()
    return {c: e for c, e, _ in got} | ({"window_s": got[0][2]} if got else {})


def _bdp_unit(con: Any, name: str) -> float:
    """Packets of BDP per Mb/s of capacity: the buffer rule's RTT over the packet size."""
    rtt_ms, pkt_bytes = con.execute(
        "SELECT any_value(buffer_policy_rtt_ms), any_value(pkt_bytes) FROM runs WHERE name = ?", [name]
    ).fetchone()
    return 1e6 * rtt_ms / 1e3 / (8 * pkt_bytes) if rtt_ms else math.nan


def _independence_reading(
    held: list[bool], grew: list[bool], rows: list[list[Any]], epochs: dict, bdp_per_mbps: float
) -> str:
    if not rows:
        return "Nothing stored: the sweep did not run."
    aqm = [r for r in rows if r[8].startswith("no:")]
    by_n = {n: [r for r in aqm if r[1] == n] for n in sorted({r[1] for r in rows})}
    text = (
        f"The AQM claim (median sojourn within twice the target at utilization >= {FULL_UTIL} at every buffer of "
        f"one BDP or more) holds for {sum(held)} of {len(held)} discipline set-ups; drop-tail's median delay grows "
        f"with the buffer in {sum(grew)} of {len(grew)}. Misses per number of flows: "
        + "; ".join(
            f"N = {n}: {', '.join(f'{r[3]} ({r[0]}, {r[2]} Mb/s: {r[8][4:]})' for r in rs) or 'none'}"
            for n, rs in by_n.items()
        )
        + ". "
    )
    if epochs:
        window_s = epochs.pop("window_s")
        long = [c for c, e in epochs.items() if e > window_s]
        text += (
            "With one flow, a Reno-style epoch (BDP/2 round trips from W/2 back to W) lasts up to "
            + ", ".join(f"{e:.0f} s at {c:g} Mb/s" for c, e in sorted(epochs.items()))
            + f" for the drawn RTT, against the {window_s:g} s measured. "
        )
        if long:
            text += f"At {', '.join(f'{c:g}' for c in long)} Mb/s the single-flow rows are not in steady state. "
        text += (
            "Where an epoch fits in the window, the miss is the one Nichols and Jacobson (2012) report of a "
            "single long-RTT flow: a discipline that holds 5-15 ms of queue cannot cover its window halving. "
        )
    codel = [r for r in rows if r[3] == "codel"]
    if codel:
        worst = max(codel, key=lambda r: r[6])
        bdp = float(worst[2]) * bdp_per_mbps
        text += (
            f"codel's worst median sojourn is {worst[6]:.1f} ms ({worst[0]}, N = {worst[1]}, {worst[2]} Mb/s), where "
            f"the BDP is {bdp:.0f} packets, {bdp / worst[1]:.1f} per flow: flows at their minimum windows already "
            "queue more than the target, and dropping cannot shorten it (fq_codel's per-flow queues and pie's "
            "probability do better there). "
        )
    text += (
        "RED has no delay target: its rows show where its queue sits for the same buffers (its default min_th 5 "
        "and max_th 15 packets; red_tuning varies them)."
    )
    return text


def _independence_plot(data: dict[tuple, dict[str, float]], setups: list[tuple], factors: list[float]) -> None:
    shown = [s for s in setups if s[1] == 8] or setups[:2]
    fig, axes = plt.subplots(2, len(shown), figsize=(4 * len(shown), 7.5), sharex=True, squeeze=False)
    for col, (tcp, flows, mbps) in enumerate(shown):
        for q in QUEUES:
            pts = [(f, data[(tcp, flows, mbps, q, f)]) for f in factors if (tcp, flows, mbps, q, f) in data]
            xs = [f for f, _ in pts]
            axes[0][col].plot(xs, [p["util"] for _, p in pts], "o-", color=COLORS[q], label=q)
            axes[1][col].plot(xs, [p["p99"] for _, p in pts], "o-", color=COLORS[q], label=f"{q} p99")
            axes[1][col].plot(xs, [p["p50"] for _, p in pts], ":", color=COLORS[q])
        axes[0][col].set_title(f"{tcp}, N={flows}, {mbps:g} Mb/s")
        axes[1][col].set_yscale("log")
        axes[1][col].set_xlabel("buffer (x BDP)")
        log_x_at(axes[1][col], factors)
    axes[0][0].set_ylabel("utilization")
    axes[1][0].set_ylabel("sojourn ms (p99 solid, p50 dotted)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()


# -- fq_codel_isolation ---------------------------------------------------------------------------
def fq_codel_isolation(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    name = "fq_codel_isolation"
    rc = sweep_cli(name, results, rerun, grid)
    con = stored(results, "engine", name)
    # The empty network's completion time of a one-packet transfer: half the RTT (the data's way)
    # and one transmission at the bottleneck; what the sparse flow waits beyond it is queueing.
    got = con.execute(
        """SELECT r.queue, r.buffer_policy_factor, any_value(r.rtt_ms / 2 + r.pkt_bytes * 8 / (r.core_mbps * 1e3)),
            avg(c.fct_p50_ms), avg(c.fct_mean_ms), avg(c.fct_p99_ms), avg(c.loss_rate), avg(r.p50_queue_delay_ms),
            avg(r.utilization), count(*)
        FROM runs r JOIN classes c ON c.run_id = r.run_id AND c.class = 'pareto'
        WHERE r.name = ? AND r.status = 'ok' GROUP BY ALL ORDER BY 2, 1""",
        [name],
    ).fetchall()
    data = {
        (q, f): dict(p50=p50 - base, mean=mean - base, p99=p99 - base, loss=loss, link_p50=link, util=u, seeds=n)
        for q, f, base, p50, mean, p99, loss, link, u, n in got
    }
    rows = [
        [q, f"{f:g}", d["p50"], d["mean"], d["p99"], d["loss"], d["link_p50"], d["util"]] for (q, f), d in data.items()
    ]
    report = Report(
        name=name,
        title="FQ-CoDel's isolation of a sparse flow beside 8 bulk CUBIC flows (10 Mb/s, RTT 100 ms)",
        command=f"python -m analysis reproduce {name}",
        header=["queue", "x BDP", "sparse p50 delay ms", "mean ms", "p99 ms", "sparse loss", "link p50 ms", "util"],
        rows=rows,
        notes=[
            "Sparse delay: the one-packet transfers' completion time less the empty network's (half the RTT "
            "and one 1500-byte transmission at 10 Mb/s), mean of the seeds. Its mean and p99 include the "
            "retransmission timeouts of the transfers whose one packet was dropped (`sparse loss`). "
            "`link p50`: the median sojourn of every packet at the bottleneck."
        ],
        reading=_isolation_reading(data) + status_note(rc),
    )
    return report, lambda: _isolation_plot(data)


def _isolation_reading(data: dict[tuple, dict[str, float]]) -> str:
    if not data:
        return "Nothing stored: the sweep did not run."
    target = papers.AQM_TARGET_MS["fq_codel"]
    lines, verdicts = [], []
    for f in sorted({f for _, f in data}):
        fq, codel, tail = (data.get((q, f)) for q in ("fq_codel", "codel", "droptail"))
        if not (fq and codel and tail):
            continue
        verdicts.append(fq["p50"] < target and fq["p50"] < codel["p50"])
        lines.append(
            f"- {f:g} x BDP: the sparse flow's median queueing delay is {fq['p50']:.2f} ms under fq_codel, "
            f"{codel['p50']:.1f} ms under codel and {tail['p50']:.0f} ms under drop-tail (the link's median "
            f"sojourn: {fq['link_p50']:.1f}, {codel['link_p50']:.1f} and {tail['link_p50']:.0f} ms); it loses "
            f"{fq['loss']:.2%}, {codel['loss']:.2%} and {tail['loss']:.2%} of its packets."
        )
    held = sum(verdicts)
    return (
        f"RFC 8290's claim (a sparse flow is served ahead of the queues that built up, so it sees almost no "
        f"queueing delay: below the {target:g} ms target the bulk flows are held at, and less than under one shared "
        f"CoDel queue) holds at {held} of {len(verdicts)} buffer sizes.\n\n" + "\n".join(lines)
    )


def _isolation_plot(data: dict[tuple, dict[str, float]]) -> None:
    factors = sorted({f for _, f in data})
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(len(factors), 1)
    for i, f in enumerate(factors):
        qs = [q for q in QUEUES if (q, f) in data]
        xs = [QUEUES.index(q) + (i - (len(factors) - 1) / 2) * width for q in qs]
        ax.bar(xs, [max(data[q, f]["p50"], 0.01) for q in qs], width * 0.9, label=f"p50, {f:g} x BDP", color=f"C{i}")
        ax.plot(xs, [max(data[q, f]["p99"], 0.01) for q in qs], "v", color=f"C{i}", label=f"p99, {f:g} x BDP")
    ax.set_xticks(range(len(QUEUES)), QUEUES)
    ax.set_yscale("log")
    ax.set_ylabel("sparse flow's queueing delay (ms)")
    ax.set_title("A sparse flow (100 one-packet transfers/s) beside 8 bulk CUBIC flows, 10 Mb/s")
    ax.legend(fontsize=8)
    fig.tight_layout()


# -- red_tuning -----------------------------------------------------------------------------------
def red_tuning(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    name = "red_tuning"
    rc = sweep_cli(name, results, rerun, grid)
    con = stored(results, "engine", name)
    got = con.execute(
        """SELECT flows, queue_min_th, queue_max_th, queue_max_p, avg(utilization), avg(mean_queue_pkts),
            avg(mean_queue_delay_ms), avg(loss_rate)
        FROM runs WHERE name = ? AND status = 'ok' GROUP BY ALL ORDER BY ALL""",
        [name],
    ).fetchall()
    data = {(n, lo, p): dict(max_th=hi, util=u, queue=q, delay=d, loss=loss) for n, lo, hi, p, u, q, d, loss in got}
    rows = [
        [n, f"{lo:g}", f"{d['max_th']:g}", f"{p:g}", d["util"], d["queue"], d["delay"], d["loss"]]
        for (n, lo, p), d in data.items()
    ]
    report = Report(
        name=name,
        title="RED's utilization and queue against min_th and max_p (max_th = 3 min_th), 45 Mb/s",
        command=f"python -m analysis reproduce {name}",
        header=["N", "min_th", "max_th", "max_p", "util", "mean queue pkts", "mean delay ms", "loss"],
        rows=rows,
        notes=["Means of the seeds; the queue is the instantaneous one sampled, not RED's average."],
        reading=_red_reading(data) + status_note(rc),
    )
    return report, lambda: _red_plot(data)


def _red_reading(data: dict[tuple, dict[str, float]]) -> str:
    if not data:
        return "Nothing stored: the sweep did not run."
    below = sorted({n for (n, lo, _), d in data.items() if d["queue"] < lo})
    inside = sum(lo <= d["queue"] <= d["max_th"] for (_, lo, _), d in data.items())
    above = sum(d["queue"] > d["max_th"] for d in data.values())
    series = sorted({(k[0], k[2]) for k in data})
    monotone = sum(
        all(b >= a - 0.005 for a, b in zip(u, u[1:]))
        for u in ([d["util"] for (m, _, q), d in sorted(data.items()) if (m, q) == nq] for nq in series)
    )
    fj, f97 = papers.RED_FJ93["max_p"], papers.RED_FLOYD97["max_p"]
    spread = []
    for n in sorted({k[0] for k in data}):
        gaps = [
            data[n, lo, fj]["util"] - data[n, lo, f97]["util"]
            for lo in sorted({k[1] for k in data})
            if (n, lo, fj) in data and (n, lo, f97) in data
        ]
        if gaps:
            spread.append(f"{max(gaps):.3f} at N = {n}")
    text = (
        f"Where RED holds the mean queue: between min_th and max_th at {inside} of {len(data)} points, above "
        f"max_th at {above}, below min_th at {len(data) - inside - above} (with N = "
        f"{', '.join(map(str, below)) or '-'}: few flows, whose windows RED's early drops keep small). "
        f"Utilization never falls as min_th grows (to within 0.005) in {monotone} of {len(series)} (N, max_p) "
        "series: the average queue RED settles at is set by min_th, and with it the utilization, as in Floyd "
        "and Jacobson's sweeps of min_th. "
    )
    if spread:
        text += (
            f"Raising max_p from the 1993 paper's {fj:g} to Floyd's 1997 {f97:g} costs at most "
            f"{', '.join(spread)} in utilization: a large max_p overcontrols few flows and matters little "
            "to many, whose drop rate is set by their number, not by RED. "
        )
    text += (
        "A queue of a few packets on this 45 Mb/s link costs utilization, as Nichols and Jacobson (2012, Fig. 5) "
        "find of RED at 10 Mb/s and above."
    )
    return text


def _red_plot(data: dict[tuple, dict[str, float]]) -> None:
    flows = sorted({k[0] for k in data})
    probs = sorted({k[2] for k in data})
    fig, axes = plt.subplots(2, len(flows), figsize=(4.2 * len(flows), 7.5), sharex=True, squeeze=False)
    for col, n in enumerate(flows):
        for i, p in enumerate(probs):
            pts = sorted((lo, d) for (m, lo, q), d in data.items() if m == n and q == p)
            xs = [lo for lo, _ in pts]
            axes[0][col].plot(xs, [d["util"] for _, d in pts], "o-", color=f"C{i}", label=f"max_p {p:g}")
            axes[1][col].plot(xs, [d["queue"] for _, d in pts], "o-", color=f"C{i}", label=f"max_p {p:g}")
        ths = sorted({k[1] for k in data})
        axes[1][col].plot(ths, ths, "k--", lw=0.8, label="min_th")
        axes[1][col].plot(ths, [data[next(k for k in data if k[1] == t)]["max_th"] for t in ths], "k:", label="max_th")
        axes[0][col].set_title(f"N = {n}")
        axes[1][col].set_xlabel("min_th (packets; max_th = 3 min_th)")
        axes[1][col].set_yscale("log")
        log_x_at(axes[1][col], ths)
    axes[0][0].set_ylabel("utilization")
    axes[1][0].set_ylabel("mean queue (packets)")
    axes[1][0].legend(fontsize=8)
    fig.tight_layout()
