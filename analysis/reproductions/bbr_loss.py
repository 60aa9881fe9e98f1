"""Issue 33's `bbr_shallow_loss`: several BBR flows alone at a bottleneck, buffers of 0.1 to 2 BDP,
beside the same flows as today's Linux CUBIC. Hock, Bless and Zitterbart (ICNP 2017): BBR loses a
lot in shallow buffers, and keeps about a BDP of standing queue in deep ones. docs/reproductions.md."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib.pyplot as plt

from analysis import papers
from analysis.reproductions.common import Report, log_x_at, status_note, stored, sweep_cli
from sim import rules

NAME = "bbr_shallow_loss"


def bbr_shallow_loss(
    results: str, rerun: bool, grid: tuple[str, ...] = (), preset: str = NAME
) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one); `preset`: this one
    or its precision variant (bbr_shallow_loss_precision)."""
    rc = sweep_cli(preset, results, rerun, grid)
    con = stored(results, "engine", preset)
    path = con.execute("SELECT any_value(rtt_ms), any_value(pkt_bytes) FROM runs WHERE name = ?", [preset]).fetchone()
    rtt_ms, pkt_bytes = path if path and path[0] is not None else (0.0, 0)
    rows = con.execute(
        """SELECT tcp, core_mbps, flows, buffer_policy_factor, avg(loss_rate),
                avg(mean_queue_pkts * 8 * pkt_bytes / (core_mbps * 1e3 * rtt_ms)), avg(utilization), count(*)
            FROM runs WHERE name = ? AND status = 'ok' GROUP BY ALL ORDER BY ALL""",
        [preset],
    ).fetchall()
    data = {(t, m, n, f): dict(loss=loss, queue=q, util=u, seeds=k) for t, m, n, f, loss, q, u, k in rows}
    bbr = {k[1:]: d for k, d in data.items() if k[0] == "bbr"}
    cubic = {k[1:]: d for k, d in data.items() if k[0] == "cubic"}
    table = [
        [f"{m:g}", n, f"{f:g}", d["loss"], cubic.get((m, n, f), {}).get("loss"), d["queue"], d["util"]]
        for (m, n, f), d in bbr.items()
    ]
    report = Report(
        name=preset,
        title=f"Several BBR flows in shallow and deep buffers ({rtt_ms:g} ms; issue 33)",
        command=f"python -m analysis reproduce {preset}",
        header=["Mb/s", "flows", "x BDP", "BBR loss rate", "CUBIC loss rate", "BBR mean queue (x BDP)", "BBR util"],
        rows=table,
        notes=[
            "Means of the seeds. BBR: `tcp=bbr` (v1, RACK-TLP, paced) with the `cubic` sender's initial window, "
            "delayed ACKs and RTT samples; CUBIC: `tcp=cubic` (RFC 9438 CUBIC, RACK-TLP)."
        ],
        reading=_reading(bbr, cubic, rtt_ms, pkt_bytes) + status_note(rc),
    )
    return report, lambda: _plot(bbr, cubic, rtt_ms)


def _reading(bbr: dict[tuple, dict], cubic: dict[tuple, dict], rtt_ms: float, pkt_bytes: int) -> str:
    if not bbr:
        return "Nothing stored: the sweep did not run."
    shallow = [
        (d["loss"], cubic[k]["loss"])
        for k, d in bbr.items()
        if k[2] <= papers.BBR_SHALLOW_LOSS_MAX_BDP and k[1] > 1 and k in cubic
    ]
    worse = [b > c for b, c in shallow]
    ratios = sorted(b / c for b, c in shallow if c > 0)
    deepest = max(f for _, _, f in bbr)
    deep = {k: d["queue"] for k, d in bbr.items() if k[2] == deepest and k[1] >= 4}
    near = [abs(q - papers.BBR_STANDING_QUEUE_BDP) <= papers.BBR_STANDING_QUEUE_TOL for q in deep.values()]
    one = papers.BBR_STANDING_QUEUE_BDP
    budget = {k: min(k[2], one + quantization_bdp(k[0], k[1], rtt_ms, pkt_bytes)) for k in deep}
    text = (
        f"- In buffers of {papers.BBR_SHALLOW_LOSS_MAX_BDP:g} BDP and less, BBR flows lose more than the same "
        f"number of CUBIC flows (Hock et al. 2017): {sum(worse)} of {len(worse)} points"
    )
    if ratios:
        text += f"; BBR's loss rate over CUBIC's: median {ratios[len(ratios) // 2]:.1f}x"
    text += (
        f" (BBR's loss rates there: {min(b for b, _ in shallow):.3f}-{max(b for b, _ in shallow):.3f}).\n"
        if shallow
        else ".\n"
    )
    if deep:
        text += (
            f"- With 4 flows and more in a {deepest:g}-BDP buffer, the mean queue stands within "
            f"{papers.BBR_STANDING_QUEUE_TOL:g} of {papers.BBR_STANDING_QUEUE_BDP:g} BDP (cwnd_gain 2): "
            f"{sum(near)} of {len(near)} points (mean queues "
            f"{', '.join(f'{q:.2f}' for q in deep.values())} BDP). The excess is Linux's quantization budget "
            "(`bbr_quantization_budget`): each flow's window holds 3 more bursts of `tso_segs_goal` packets "
            "(a couple at these rates), a large part of a small BDP and not at Hock et al.'s 1-10 Gb/s. "
            "1 BDP plus these bursts, at most the buffer: "
            f"{', '.join(f'{b:.2f}' for b in budget.values())} BDP; the rest, up to "
            f"{max(q - budget[k] for k, q in deep.items()):.2f} BDP, it does not account for.\n"
        )
    return text


def quantization_bdp(mbps: float, flows: int, rtt_ms: float, pkt_bytes: int) -> float:
    """The bursts Linux's `bbr_quantization_budget` adds to each flow's window (3 x `bbr_tso_segs_goal`
    at a fair share's pacing rate: a millisecond of it, 2 packets at least, 1 below 1.2 Mb/s), over
    the BDP, for `flows` flows at `mbps`."""
    rate_bytes = mbps * 1e6 / 8 / flows
    segs = max(1.0 if rate_bytes < 1.2e6 / 8 else 2.0, float(int(rate_bytes / 1024 / pkt_bytes)))
    return flows * 3 * segs / rules.bdp_pkts(mbps, rtt_ms, pkt_bytes)


def _plot(bbr: dict[tuple, dict], cubic: dict[tuple, dict], rtt_ms: float) -> None:
    if not bbr:
        plt.figure().text(0.5, 0.5, "Nothing stored: the sweep did not run.", ha="center")
        return
    rates = sorted({m for m, _, _ in bbr})
    factors = sorted({f for _, _, f in bbr})
    fig, axes = plt.subplots(len(rates), 2, figsize=(12, 4 * len(rates)), squeeze=False)
    for row, mbps in zip(axes, rates):
        for i, n in enumerate(sorted({n for _, n, _ in bbr})):
            pts = sorted((f, d) for (m, k, f), d in bbr.items() if m == mbps and k == n)
            ref = sorted((f, d) for (m, k, f), d in cubic.items() if m == mbps and k == n)
            row[0].plot([f for f, _ in pts], [d["loss"] for _, d in pts], "o-", color=f"C{i}", label=f"{n} BBR")
            row[0].plot([f for f, _ in ref], [d["loss"] for _, d in ref], "x:", color=f"C{i}", label=f"{n} CUBIC")
            row[1].plot([f for f, _ in pts], [d["queue"] for _, d in pts], "o-", color=f"C{i}", label=f"{n} BBR")
        row[1].plot(factors, factors, "k--", lw=0.6, label="buffer")
        row[1].axhline(papers.BBR_STANDING_QUEUE_BDP, color="k", lw=0.6)
        for ax, label in zip(row, ("loss rate", "mean queue (x BDP)")):
            log_x_at(ax, factors)
            ax.set_xlabel("buffer (x BDP)")
            ax.set_ylabel(label)
            ax.set_title(f"{mbps:g} Mb/s, {rtt_ms:g} ms")
            ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
