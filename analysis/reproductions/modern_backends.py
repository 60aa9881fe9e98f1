"""Issue 33's cross-check of the modern senders against ns-3 3.44 (TcpCubic with HyStart,
TcpPrrRecovery, TcpBbr, TcpDctcp): every point of `conf/experiment/modern_backends.yaml` for each
sender, each point the mean of its seeds on both sides, and BBR's share against CUBIC
(docs/fidelity.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt
from omegaconf import OmegaConf

from analysis.reproductions.common import Report, fmt, status_note, stored, sweep_cli, without_ns3
from analysis.reproductions.crosscheck import (
    METRICS,
    RATE_REL,
    SOJOURN_ABS_MS,
    SOJOURN_REL,
    UTIL_TOL,
    equality_axes,
    ok,
    points,
)
from sweeps.backends import BACKENDS
from sweeps.precheck import CONF_DIR

NAME = "modern_backends"
TITLE = "Modern senders against ns-3 3.44 (issue 33)"
COMMAND = f"python -m analysis reproduce {NAME}   # needs ns-3: pip install -e '.[ns3]'"
SENDERS = {
    ("cubic_rfc9438", "sack"): (),
    ("newreno", "prr"): ("tcp=newreno", "tcp.recovery=prr"),
    ("dctcp", "sack"): ("tcp=dctcp", "tcp.ecn=true", "queue=step", "queue.k_pkts=20"),
    ("bbr", "sack_retain"): ("tcp=bbr", "tcp.recovery=sack_retain", "tcp.long_term=false"),
}
"""Each sender (tcp, recovery) with its overrides of the preset (its base is RFC 9438 CUBIC with
SACK); DCTCP's marking is a step at K = 20. BBR runs `sack_retain`: ns-3 keeps its SACK scoreboard
across a timeout and paces what recovery sends, where our `sack` follows ns-2 (docs/fidelity.md).
They run in this order, and the mix before BBR, whose 100 Mb/s runs take ns-3 longest."""
LINUX = ("tcp.init_cwnd_pkts=10", "tcp.delayed_ack=true", "tcp.delack_ms=40", "tcp.tick_ms=0")
MIX = ("tcp=bbr", "tcp.recovery=sack_retain", "tcp.long_term=false", *LINUX, "tcp_mix=bbr:1+linux:1", "flows=2")
"""1 BBR flow against 1 CUBIC flow, both with Linux's sender settings (`tcp_mix=bbr:1+cubic:1`)."""
KEYS = ("tcp", "tcp_recovery", "tcp_mix", "core_mbps", "flows", "buffer_policy_factor")
SHARE_TOL = 0.1
QUEUE_MS = {**METRICS, "sojourn": "avg(mean_queue_pkts * pkt_bytes * 8 / (core_mbps * 1000))"}
"""The mean queueing delay as the mean queue over the link's rate, on both simulators: ns-3's
drop-tail device queue has no sojourn trace."""
BBR_SHARE = {"bbr_share": "avg(bbr_share)", **QUEUE_MS}
COUNTERS = {"fr": "avg(fr)", "to": "avg(tos)", "rx": "avg(rx)", "cwnd": "avg(cwnd)", **QUEUE_MS}
"""Per flow, the means over a run's flows: fast retransmits, timeouts, retransmitted packets; and
the mean window (packets) on the bottleneck after warm-up, from the time series."""


def bbr_shares(con: Any, ns3_version: str) -> dict[tuple, dict[str, dict[str, float]]]:
    """The mix's points, with each run's BBR share of the goodput (from its flows) averaged."""
    con.execute(
        """CREATE TEMP VIEW mix_runs AS SELECT r.*, s.bbr_share FROM runs r JOIN (
               SELECT run_id, exec_id, sum(goodput_mbps) FILTER (WHERE tcp_group = 'bbr') / sum(goodput_mbps)
               AS bbr_share FROM flows GROUP BY ALL) s USING (run_id, exec_id) WHERE r.tcp_mix IS NOT NULL"""
    )
    return points(con, NAME, KEYS, ns3_version, BBR_SHARE, table="mix_runs")


def counters(con: Any, ns3_version: str) -> dict[tuple, dict[str, dict[str, float]]]:
    """Every point's per-flow counters (`COUNTERS`) from both simulators: what explains a miss."""
    con.execute(
        """CREATE TEMP VIEW counter_runs AS SELECT r.*, f.fr, f.tos, f.rx, w.cwnd FROM runs r
           JOIN (SELECT run_id, exec_id, avg(fast_retransmits) AS fr, avg(timeouts) AS tos,
                 avg(retransmits) AS rx FROM flows GROUP BY ALL) f USING (run_id, exec_id)
           LEFT JOIN (SELECT t.run_id, t.exec_id, avg(t.mean_cwnd_pkts) AS cwnd FROM timeseries t
                 JOIN runs q USING (run_id, exec_id) WHERE t.time_s >= q.warmup_s
                 AND t.link_id = q.bottleneck_link GROUP BY ALL) w USING (run_id, exec_id)
           WHERE r.tcp_mix IS NULL"""
    )
    return points(con, NAME, KEYS, ns3_version, COUNTERS, table="counter_runs")


def modern_backends(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    if skipped := without_ns3(NAME, TITLE, COMMAND):
        return skipped
    *first, last = SENDERS.values()
    rc = max(sweep_cli(NAME, results, rerun, (*grid, *extra)) for extra in first)
    mix_grid = tuple(g for g in grid if not g.startswith("flows="))
    rc = max(rc, sweep_cli(NAME, results, rerun, (*mix_grid, *MIX)), sweep_cli(NAME, results, rerun, (*grid, *last)))
    version = BACKENDS["ns3"].version()
    con = stored(results, None, NAME)
    # Only the senders listed: runs of earlier choices (BBR with `sack`) stay stored, not shown.
    data = {k: v for k, v in points(con, NAME, KEYS, version, QUEUE_MS).items() if k[2] is None and k[:2] in SENDERS}
    shares = bbr_shares(con, version)
    per_flow = counters(con, version)
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=["tcp", "recovery", "Mb/s", "N", "x BDP", "util ns-3", "ours", "delay ms ns-3", "ours"]
        + ["loss+mark ns-3", "ours", "timeouts ns-3", "ours", "within (u, d, r)"],
        rows=[_row(k, by) for k, by in data.items()],
        reading=reading(data, shares) + misses(data, per_flow) + status_note(rc),
    )
    return report, lambda: plot(data, shares)


def _row(key: tuple, by: dict[str, dict[str, float]]) -> list[Any]:
    tcp, recovery, _, mbps, flows, factor = key
    ours, ns3 = by["engine"], by["ns3"]
    marks = " ".join({True: m, False: "**no**", None: "-"}[good] for m, good in zip(("u", "d", "r"), by["check"]))
    return [tcp, recovery, f"{mbps:g}", flows, f"{factor:g}", ns3["utilization"], ours["utilization"]] + [
        ns3["sojourn"],
        ours["sojourn"],
        ns3["rate"],
        ours["rate"],
        ns3["timeouts"],
        ours["timeouts"],
        marks,
    ]


def grid_sizes() -> tuple[int, int]:
    """Points per sender in the preset's grid (its swept axes but seed and backend), and the mix's
    (the same without the flows axis)."""
    params = OmegaConf.load(CONF_DIR / "experiment" / f"{NAME}.yaml").hydra.sweeper.params
    sizes = {k: len(str(v).split(",")) for k, v in params.items() if k not in ("seed", "backend")}
    total = 1
    for n in sizes.values():
        total *= n
    return total, total // sizes["flows"]


def reading(data: dict[tuple, dict[str, dict[str, float]]], shares: dict[tuple, dict[str, dict[str, float]]]) -> str:
    if not data:
        return "No point ran on both simulators."
    text = (
        f"Bounds: utilization ±{UTIL_TOL}, mean queueing delay ±{SOJOURN_REL:.0%} or {SOJOURN_ABS_MS:g} ms, "
        f"loss-or-mark rate ±{RATE_REL:.0%} (where ns-3 counted enough events). Per sender, the points within "
        "every checked bound:\n\n"
    )
    per_sender, per_mix = grid_sizes()
    for sender in sorted(SENDERS):
        sel = [by for k, by in data.items() if (k[0], k[1]) == sender]
        if not sel:
            text += f"- {sender[0]} with {sender[1]}: none of the grid's {per_sender} points stored on both yet\n"
            continue
        util = sum(by["check"][0] for by in sel)
        text += f"- {sender[0]} with {sender[1]}: {sum(ok(by['check']) for by in sel)} of {len(sel)} "
        text += f"(utilization alone: {util})"
        text += (
            f"; {per_sender - len(sel)} of the grid's {per_sender} points not stored on both yet\n"
            if len(sel) < per_sender
            else "\n"
        )
    if shares:
        within = [abs(by["engine"]["bbr_share"] - by["ns3"]["bbr_share"]) <= SHARE_TOL for by in shares.values()]
        text += (
            f"\nOne BBR flow against one CUBIC flow: BBR's share within ±{SHARE_TOL} of ns-3's at {sum(within)} of "
            f"{len(within)} points: "
        )
        text += "; ".join(
            f"{k[3]:g} Mb/s x{k[5]:g} BDP {by['ns3']['bbr_share']:.2f} / {by['engine']['bbr_share']:.2f}"
            for k, by in shares.items()
        )
        text += " (ns-3 / ours)"
        text += (
            f"; {per_mix - len(shares)} of {per_mix} points not stored on both yet.\n"
            if len(shares) < per_mix
            else ".\n"
        )
    text += "\nThe mechanisms behind the misses are in docs/fidelity.md (Modern senders against ns-3)."
    return text


def misses(data: dict[tuple, dict[str, dict[str, float]]], per_flow: dict[tuple, dict[str, dict[str, float]]]) -> str:
    """The per-flow counters of both simulators at every point that misses a bound."""
    rows = []
    for key, by in data.items():
        if ok(by["check"]) or key not in per_flow:
            continue
        tcp, recovery, _, mbps, flows, factor = key
        missed = "+".join(m for m, good in zip(("u", "d", "r"), by["check"]) if good is False)
        cells = [f"{tcp} + {recovery}", f"{mbps:g}", str(flows), f"{factor:g}", missed]
        for metric in ("fr", "to", "rx", "cwnd"):
            cells += [fmt(per_flow[key]["ns3"][metric]), fmt(per_flow[key]["engine"][metric])]
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return ""
    head = ["sender", "Mb/s", "N", "x BDP", "missed"]
    for what in ("fast rexmits/flow", "timeouts/flow", "rexmit pkts/flow", "mean cwnd pkts"):
        head += [f"{what} ns-3", "ours"]
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *rows]
    return (
        "\n\nPer-flow counters at every miss (means over each run's flows, then over the seeds; the "
        "window is the bottleneck's mean after warm-up, from the time series):\n\n" + "\n".join(table) + "\n"
    )


def plot(data: dict[tuple, dict[str, dict[str, float]]], shares: dict[tuple, dict[str, dict[str, float]]]) -> None:
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.6))
    titles = (("utilization", "utilization"), ("sojourn", "mean queueing delay (ms)"), ("rate", "loss-or-mark rate"))
    senders = sorted({k[:2] for k in data})
    for ax, (metric, label) in zip(axes, titles):
        for i, sender in enumerate(senders):
            xy = [(by["ns3"][metric], by["engine"][metric]) for k, by in data.items() if k[:2] == sender]
            xy = [(x, y) for x, y in xy if x is not None and y is not None and (metric == "utilization" or x > 0)]
            if xy:
                ax.plot(*zip(*xy), "o", color=f"C{i}", label=" + ".join(sender))
        equality_axes(ax, metric, label)
    axes[0].legend(fontsize=7)
    xy = [(by["ns3"]["bbr_share"], by["engine"]["bbr_share"]) for by in shares.values()]
    if xy:
        axes[3].plot(*zip(*xy), "o", color="C5")
    axes[3].plot([0, 1], [0, 1], "k-", lw=0.8)
    axes[3].set_xlabel("ns-3 3.44: BBR's share against CUBIC")
    axes[3].set_ylabel("ours: BBR's share")
    fig.suptitle("Each point: one set-up, mean of its seeds; the line is equality")
    fig.tight_layout()
