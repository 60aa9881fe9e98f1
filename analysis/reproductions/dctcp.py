"""Issue 33's `dctcp_threshold`: DCTCP's utilization and queue against its marking threshold K at 1
and 10 Gb/s, beside Alizadeh et al.'s rule K > C x RTT / 7 (SIGCOMM 2010, section 3.4), Reno's AIMD
with the same ECN marking, and drop-tail at the same buffer. docs/reproductions.md."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib.pyplot as plt

from analysis import papers
from analysis.reproductions.common import Report, plain_log_x, run_jobs, status_note, stored, sweep_cli
from sim import rules

NAME = "dctcp_threshold"
LABELS = {"dctcp": "DCTCP", "sack": "Reno + ECN", "droptail": "Reno, drop-tail"}


def k_rule_pkts(mbps: float, rtt_ms: float, pkt_bytes: int) -> float:
    """Eq. (13)'s bound: C x RTT / 7, in packets."""
    return rules.bdp_pkts(mbps, rtt_ms, pkt_bytes) / papers.DCTCP_K_RULE_DIVISOR


def dctcp_threshold(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    rc = sweep_cli(NAME, results, rerun, grid)
    con = stored(results, "engine", NAME)
    marked = con.execute(
        """SELECT tcp, core_mbps, rtt_ms, queue_k_pkts, avg(utilization), avg(mean_queue_pkts), avg(loss_rate)
        FROM runs WHERE name = ? AND status = 'ok' GROUP BY ALL ORDER BY ALL""",
        [NAME],
    ).fetchall()
    data = {(t, m, r, k): dict(util=u, queue=q, loss=x) for t, m, r, k, u, q, x in marked}
    setup = con.execute(
        "SELECT any_value(flows), any_value(buffer_pkts), any_value(pkt_bytes) FROM runs WHERE name = ?", [NAME]
    ).fetchone()
    flows, buffer_pkts, pkt_bytes = setup if setup and setup[0] is not None else (0, 0, 1500)
    # The control: drop-tail at the same buffer, no K, on every (rate, RTT) the grid ran.
    paths = sorted({(m, r) for _, m, r, _ in data})
    base = [f"+experiment={NAME}", "tcp=sack", "tcp.ecn=false", "queue=droptail", f"results_dir={results}"]
    base += [f"name={NAME}_droptail"] + (["force=true"] if rerun else [])
    rc2, ids = run_jobs(base, [{"core_mbps": m, "rtt_ms": r} for m, r in paths]) if paths else (0, [])
    control = stored(results, "engine", None).execute(
        "SELECT core_mbps, rtt_ms, utilization, mean_queue_pkts, loss_rate FROM runs WHERE run_id IN "
        "(SELECT unnest(?)) AND status = 'ok'",
        [ids],
    )
    drop = {(m, r): dict(util=u, queue=q, loss=x) for m, r, u, q, x in control.fetchall()}
    rule = {(m, r): f"{k_rule_pkts(m, r, pkt_bytes):.1f}" for _, m, r, _ in data}
    rows = [
        [f"{m:g}", f"{r * 1e3:g}", rule[m, r], k, LABELS[t], d["util"], d["queue"], d["loss"]]
        for (t, m, r, k), d in data.items()
    ]
    rows += [
        [f"{m:g}", f"{r * 1e3:g}", "", "", LABELS["droptail"], d["util"], d["queue"], d["loss"]]
        for (m, r), d in drop.items()
    ]
    report = Report(
        name=NAME,
        title="DCTCP's marking threshold K against C x RTT / 7 (Alizadeh et al. 2010; issue 33)",
        command=f"python -m analysis reproduce {NAME}",
        header=["Mb/s", "RTT us", "C x RTT / 7", "K", "sender", "utilization", "mean queue pkts", "loss rate"],
        rows=rows,
        notes=[
            f"{flows} long-lived flows, a {buffer_pkts:g}-packet buffer, {pkt_bytes}-byte packets; `queue=step` "
            "marks every packet arriving to K packets or more. Reno + ECN: NewReno's AIMD with SACK, halving once a "
            "window on marks."
        ],
        reading=_reading(data, drop, pkt_bytes) + status_note(max(rc, rc2)),
    )
    return report, lambda: _plot(data, drop, flows, pkt_bytes)


def _reading(data: dict[tuple, dict], drop: dict[tuple, dict], pkt_bytes: int) -> str:
    dctcp = {k[1:]: d for k, d in data.items() if k[0] == "dctcp"}
    if not dctcp:
        return "Nothing stored: the sweep did not run."
    full = papers.DCTCP_FULL_UTILIZATION
    above = [d["util"] >= full for (m, r, k), d in dctcp.items() if k > k_rule_pkts(m, r, pkt_bytes)]
    under = {(m, r, k): d["util"] for (m, r, k), d in dctcp.items() if k <= k_rule_pkts(m, r, pkt_bytes)}
    text = (
        f"- K above C x RTT / 7 (Eq. 13) keeps DCTCP at {full:g} utilization or more: {sum(above)} of "
        f"{len(above)} points.\n"
    )
    if under:
        low = min(under, key=under.__getitem__)
        text += (
            f"- The rule is a sufficient bound: at or below it DCTCP still keeps {full:g} at "
            f"{sum(u >= full for u in under.values())} of {len(under)} points (lowest {under[low]:.3f}, at "
            f"{low[0] / 1e3:g} Gb/s, {low[1] * 1e3:g} us, K={low[2]}). Eq. (13) takes the worst case over the number "
            "of synchronized flows; the paper's 10-Gb/s K of 65 (section 3.5) covers its hosts' 30-40-packet bursts, "
            "which these ACK-clocked senders do not make.\n"
        )
    low = [d["util"] >= full for (m, _, k), d in dctcp.items() if m == 1000 and k >= papers.DCTCP_K_MIN_1G]
    if low:
        text += (
            f"- At 1 Gb/s, insensitive to K down to K={papers.DCTCP_K_MIN_1G} (section 4.1): "
            f"{sum(low)} of {len(low)} points.\n"
        )
    ratios = [
        (drop[m, r]["queue"] / d["queue"], d["queue"], m, r)
        for (m, r, k), d in dctcp.items()
        if k == papers.DCTCP_K_USED_PKTS.get(m) and (m, r) in drop and d["queue"] > 0
    ]
    if ratios:
        text += (
            f"- At the paper's K (20 at 1 Gb/s, 65 at 10 Gb/s), drop-tail's mean queue over DCTCP's (Fig. 13: "
            f"{papers.DCTCP_TCP_QUEUE_RATIO:g}x at 1 Gb/s): "
            + ", ".join(f"{m / 1e3:g} Gb/s {r * 1e3:g} us {x:.1f}x (DCTCP {q:.1f} pkts)" for x, q, m, r in ratios)
            + ".\n"
        )
    reno = {k[1:]: d for k, d in data.items() if k[0] == "sack"}
    better = [dctcp[k]["util"] >= d["util"] - 0.005 for k, d in reno.items() if k in dctcp]
    if better:
        text += f"- DCTCP's utilization at least Reno + ECN's at the same K: {sum(better)} of {len(better)} points.\n"
    return text


def _plot(data: dict[tuple, dict], drop: dict[tuple, dict], flows: int, pkt_bytes: int) -> None:
    rates = sorted({m for _, m, _, _ in data})
    if not rates:
        plt.figure().text(0.5, 0.5, "Nothing stored: the sweep did not run.", ha="center")
        return
    rtts = sorted({r for _, _, r, _ in data})
    fig, axes = plt.subplots(len(rates), 2, figsize=(12, 4.2 * len(rates)), squeeze=False)
    for row, m in zip(axes, rates):
        for i, r in enumerate(rtts):
            for t, style in (("dctcp", "o-"), ("sack", "x--")):
                pts = sorted((k, d) for (tt, mm, rr, k), d in data.items() if (tt, mm, rr) == (t, m, r))
                for ax, key in zip(row, ("util", "queue")):
                    label = f"{LABELS[t]}, {r * 1e3:g} us"
                    ax.plot([k for k, _ in pts], [d[key] for _, d in pts], style, color=f"C{i}", label=label)
            for ax in row:
                ax.axvline(k_rule_pkts(m, r, pkt_bytes), color=f"C{i}", lw=0.8, ls=":")
            if (m, r) in drop:
                row[1].axhline(drop[m, r]["queue"], color=f"C{i}", lw=0.8, ls="-.")
        for ax, label in zip(row, ("utilization", "mean queue (packets)")):
            plain_log_x(ax)
            ax.set_xlabel("K (packets); dotted: C x RTT / 7")
            ax.set_ylabel(label)
            extra = "; dash-dot: drop-tail" if label.startswith("mean") else ""
            ax.set_title(f"{m / 1e3:g} Gb/s, {flows} flows{extra}")
        row[1].set_yscale("log")
        row[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
