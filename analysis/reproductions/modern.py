"""Issue 33's reproductions with the modern senders: one BBR flow against CUBIC across buffer
sizes (`bbr_vs_cubic_buffer`), and the buffer one flow needs for its decrease factor
(`cubic_single_flow_buffer`). docs/reproductions.md."""

from __future__ import annotations

import math
from collections.abc import Callable

import matplotlib.pyplot as plt

from analysis import papers
from analysis.reproductions.common import Report, plain_log_x, status_note, stored, sweep_cli
from analysis.search import min_buffer_search
from sim import rules

CUBIC_FLOWS = (1, 4, 16)


# -- bbr_vs_cubic_buffer ----------------------------------------------------------------------------
def bbr_vs_cubic_buffer(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    name = "bbr_vs_cubic_buffer"
    cubic = [n for n in CUBIC_FLOWS if f"cubic_flows={n}" in grid] or list(CUBIC_FLOWS)
    grid = tuple(g for g in grid if not g.startswith("cubic_flows="))
    rc = max(sweep_cli(name, results, rerun, (*grid, f"tcp_mix=bbr:1+cubic:{n}", f"flows={1 + n}")) for n in cubic)
    con = stored(results, "engine", name)
    rows = con.execute(
        """WITH share AS (SELECT run_id, exec_id,
                sum(goodput_mbps) FILTER (WHERE tcp_group = 'bbr') / sum(goodput_mbps) AS bbr FROM flows GROUP BY ALL)
        SELECT r.core_mbps, r.flows - 1, r.buffer_policy_factor, avg(s.bbr), avg(r.loss_rate),
            avg(r.mean_queue_pkts * 8 * r.pkt_bytes / (r.core_mbps * 1e3 * r.rtt_ms)), avg(r.utilization), count(*)
        FROM runs r JOIN share s USING (run_id, exec_id) WHERE r.name = ? AND r.status = 'ok'
        GROUP BY ALL ORDER BY ALL""",
        [name],
    ).fetchall()
    data = {
        (mbps, n, f): dict(share=s, loss=loss, fill=fill, util=u, seeds=k) for mbps, n, f, s, loss, fill, u, k in rows
    }
    report = Report(
        name=name,
        title="One BBR flow against CUBIC across buffer sizes (40 ms; issue 33)",
        command=f"python -m analysis reproduce {name}",
        header=["Mb/s", "CUBIC flows", "x BDP", "BBR share", "loss rate", "mean queue (x BDP)", "utilization"],
        rows=[[f"{m:g}", n, f"{f:g}", d["share"], d["loss"], d["fill"], d["util"]] for (m, n, f), d in data.items()],
        notes=[
            "BBR share: its goodput over all the flows', mean of the seeds. Both sides run with Linux's settings "
            "(`tcp=cubic`, `bbr`)."
        ],
        reading=_bbr_reading(data) + status_note(rc),
    )
    return report, lambda: _bbr_plot(data)


def _bbr_reading(data: dict[tuple, dict[str, float]]) -> str:
    if not data:
        return "Nothing stored: the sweeps did not run."
    shallow = [d["share"] > papers.BBR_MAJORITY for (_, _, f), d in data.items() if f <= papers.BBR_SHALLOW_MAX_BDP]
    deep = [d["share"] < papers.BBR_MAJORITY for (_, _, f), d in data.items() if f >= papers.BBR_DEEP_MIN_BDP]
    pairs = [
        abs(data[m, 1, f]["share"] - data[m, 16, f]["share"]) <= papers.BBR_N_INDEPENDENT_TOL
        for (m, n, f) in data
        if n == 1 and (m, 16, f) in data
    ]
    text = (
        f"- BBR takes most of the link (share > {papers.BBR_MAJORITY:g}) at and below "
        f"{papers.BBR_SHALLOW_MAX_BDP:g} BDP of buffer (Hock et al. 2017, Scholz et al. 2018): "
        f"{sum(shallow)} of {len(shallow)} points.\n"
        f"- CUBIC takes most of it at {papers.BBR_DEEP_MIN_BDP:g} BDP and more: {sum(deep)} of {len(deep)} points.\n"
    )
    if pairs:
        text += (
            f"- BBR's share against 1 and against 16 CUBIC flows within {papers.BBR_N_INDEPENDENT_TOL:g} "
            f"(Ware et al. 2019): {sum(pairs)} of {len(pairs)} (rate, buffer) points.\n"
        )
    return text


def _bbr_plot(data: dict[tuple, dict[str, float]]) -> None:
    if not data:
        plt.figure().text(0.5, 0.5, "Nothing stored: the sweeps did not run.", ha="center")
        return
    rates = sorted({m for m, _, _ in data})
    fig, axes = plt.subplots(len(rates), 3, figsize=(15, 4 * len(rates)), squeeze=False)
    for row, mbps in zip(axes, rates):
        for i, n in enumerate(sorted({n for _, n, _ in data})):
            pts = sorted((f, d) for (m, k, f), d in data.items() if m == mbps and k == n)
            for ax, key in zip(row, ("share", "loss", "fill")):
                ax.plot([f for f, _ in pts], [d[key] for _, d in pts], "o-", color=f"C{i}", label=f"1 BBR vs {n} CUBIC")
        for ax, label in zip(row, ("BBR's share of the goodput", "loss rate", "mean queue (x BDP)")):
            plain_log_x(ax)
            ax.set_xlabel("buffer (x BDP)")
            ax.set_ylabel(label)
            ax.set_title(f"{mbps:g} Mb/s, 40 ms")
        row[0].axhline(0.5, color="k", lw=0.6)
        row[0].legend(fontsize=8)
    fig.tight_layout()


# -- cubic_single_flow_buffer -----------------------------------------------------------------------
SINGLE_TARGET = 0.999
"""'Full utilization': the rule keeps the link busy through a cut, 99.9% of the time."""
SINGLE_MBPS, SINGLE_RTT_MS = 10.0, 100.0
LAWS = {"sack": "newreno", "cubic_rfc9438": "cubic_rfc9438", "cubic_2622": "cubic_2622"}
"""The run's tcp label -> its window law (each with SACK recovery)."""


def cubic_single_flow_buffer(
    results: str, rerun: bool, grid: tuple[str, ...] = ()
) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one); `seed=...` in it
    also sets the search's seeds."""
    name = "cubic_single_flow_buffer"
    rc = sweep_cli(name, results, rerun, grid)
    bdp = rules.bdp_pkts(SINGLE_MBPS, SINGLE_RTT_MS, 1500)
    seeds = tuple(int(g.split("=")[1]) for g in grid if g.startswith("seed=")) or (1, 2)
    # The probes: the preset's runs with a fixed buffer, searched per law.
    base = [
        f"+experiment={name}",
        "buffer_policy=fixed",
        f"results_dir={results}",
        f"name={name}_min",
        *(g for g in grid if g.startswith(("duration_s=", "warmup_s="))),
    ] + (["force=true"] if rerun else [])
    points = [{"tcp": {"cc": LAWS[t], "recovery": "sack"}} for t in papers.SINGLE_FLOW_BETA]
    searches = min_buffer_search(base, points, SINGLE_TARGET, [math.ceil(bdp)] * len(points), seeds, results)
    found = {label: s.min_buffer_pkts for label, s in zip(papers.SINGLE_FLOW_BETA, searches)}
    con = stored(results, "engine", name)
    curve = con.execute(
        """SELECT tcp, buffer_policy_factor, avg(utilization) FROM runs WHERE name = ? AND status = 'ok'
        GROUP BY ALL ORDER BY ALL""",
        [name],
    ).fetchall()
    rows = []
    for law, beta in papers.SINGLE_FLOW_BETA.items():
        theory = (1 - beta) / beta * bdp
        got = found.get(law)
        rows.append([law, f"{beta:.3f}", theory, got, None if got is None else got / theory])
    report = Report(
        name=name,
        title=f"The buffer one flow needs for {SINGLE_TARGET:.1%} utilization, by decrease factor (issue 33)",
        command=f"python -m analysis reproduce {name}",
        header=["tcp", "beta", "(1 - beta) / beta x BDP, pkts", f"min buffer for {SINGLE_TARGET:.1%}", "ratio"],
        rows=rows,
        notes=[
            f"One flow, {SINGLE_MBPS:g} Mb/s, RTT {SINGLE_RTT_MS:g} ms, 1500-byte packets: a BDP of {bdp:.0f} "
            "packets; SACK recovery for all three (sack = NewReno's AIMD). The minimum is `min-buffer`'s "
            "bisection on the mean of the seeds; buffer_pkts counts the packet in transmission."
        ],
        reading=_single_reading(rows) + status_note(rc),
    )
    return report, lambda: _single_plot(curve, bdp)


def _single_reading(rows: list[list]) -> str:
    got = {r[0]: r[3] for r in rows if r[3] is not None}
    if len(got) < len(rows):
        return "The search did not find every law's minimum (see the table)."
    order = got["cubic_2622"] < got["cubic_rfc9438"] < got["sack"]
    close = [abs(r[4] - 1) <= 0.35 for r in rows]
    return (
        f"The minimum buffer falls with beta as (1 - beta) / beta predicts: Linux 2.6's CUBIC (0.80) < RFC 9438's "
        f"(0.7) < Reno's AIMD (0.5): {'yes' if order else 'no'}; each within 35% of the rule: {sum(close)} of "
        f"{len(close)} (ratios {', '.join(f'{r[4]:.2f}' for r in rows)})."
    )


def _single_plot(curve: list[tuple], bdp: float) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (law, beta) in enumerate(papers.SINGLE_FLOW_BETA.items()):
        pts = [(f, u) for t, f, u in curve if t == law]
        if pts:
            ax.plot(*zip(*pts), "o-", color=f"C{i}", label=f"{law} (beta {beta:.2f})")
        ax.axvline((1 - beta) / beta, color=f"C{i}", ls=":", lw=1)
    ax.axhline(SINGLE_TARGET, color="k", lw=0.6)
    ax.set_xlabel(f"buffer (x BDP = {bdp:.0f} packets)")
    ax.set_ylabel("utilization")
    ax.set_title("One flow; dotted: (1 - beta) / beta x BDP")
    ax.legend(fontsize=8)
    fig.tight_layout()
