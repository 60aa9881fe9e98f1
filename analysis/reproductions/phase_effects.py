"""Phase effects (issue 58; Floyd and Jacobson 1992): Jain's index, utilization, loss and the top
flow's share against the senders' send jitter (`tcp.send_jitter_ms`, ns-2's `overhead_`), for
drop-tail, RED and CoDel and 2, 8 and 32 flows. Grid: `conf/experiment/phase_effects.yaml`;
docs/fidelity.md, "Phase effects"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib.pyplot as plt

from analysis.reproductions.common import Report, status_note, stored, sweep_cli

NAME = "phase_effects"
TITLE = "Phase effects: fairness and loss against the senders' send jitter (issue 58)"
COMMAND = f"python -m analysis reproduce {NAME}"
JAIN_FAIR = 0.85
"""Issue 58's bar for a run whose flows share the link evenly."""
PKT_TIME_MS = 0.4
"""One 1000-byte packet's transmission time at the preset's 20 Mb/s: the jitter that should be
enough (Floyd and Jacobson's "random overhead" of the order of a bottleneck service time)."""
METRICS = ("jain", "jain_min", "util", "loss", "top")


def phase_effects(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: overrides that narrow the preset's grid (the tests' reduced one)."""
    rc = sweep_cli(NAME, results, rerun, grid)
    data = points(stored(results, "engine", NAME))
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=["queue", "N", "jitter ms", "Jain (mean)", "Jain (min)", "utilization", "loss rate", "top share"],
        rows=[[*key, *(by[m] for m in METRICS)] for key, by in sorted(data.items())],
        reading=reading(data) + status_note(rc),
    )
    return report, lambda: plot(data)


PER_RUN_SHARES = """WITH f AS (SELECT run_id, exec_id,
                        sum(goodput_mbps) ^ 2 / (count(*) * sum(goodput_mbps ^ 2)) AS jain,
                        max(goodput_mbps) / sum(goodput_mbps) AS top
                      FROM flows GROUP BY ALL)"""
"""Per run (`f`, joined on run_id and exec_id): Jain's index of its flows' goodputs and the largest
flow's share of them."""


def points(con: Any) -> dict[tuple, dict[str, float]]:
    """Per (queue, flows, jitter), over the seeds: Jain's index of the flows' goodputs (mean and
    lowest), utilization, loss rate, and the largest flow's share of the goodput."""
    rows = con.execute(
        f"""{PER_RUN_SHARES}
           SELECT queue, flows, tcp_send_jitter_ms, avg(jain), min(jain), avg(utilization), avg(loss_rate), avg(top)
           FROM runs JOIN f USING (run_id, exec_id) WHERE name = ? AND status = 'ok' GROUP BY ALL""",
        [NAME],
    ).fetchall()
    return {tuple(r[:3]): dict(zip(METRICS, r[3:])) for r in rows}


def claims(data: dict[tuple, dict[str, float]]) -> dict[str, Any]:
    """What the reading states, from the data: per queue and N, Jain without jitter, its lowest with
    at least a packet time of it, and how much lower the loss rate is then; per queue, how far the
    jitter moves Jain (the means) and utilization at any N."""
    out: dict[str, Any] = {"still": {}, "jittered": {}, "loss_drop": {}, "jain_range": {}, "util_range": {}}

    def spread(keys: list[tuple], metric: str) -> float:
        values = [data[k][metric] for k in keys]
        return max(values) - min(values)

    for queue in sorted({k[0] for k in data}):
        by_n = {n: [k for k in data if k[:2] == (queue, n)] for n in sorted({k[1] for k in data if k[0] == queue})}
        for n, keys in by_n.items():
            jittered = [k for k in keys if k[2] >= PKT_TIME_MS]
            still = data.get((queue, n, 0.0))
            if still and jittered:
                out["still"][(queue, n)] = still["jain"]
                out["jittered"][(queue, n)] = min(data[k]["jain_min"] for k in jittered)
                worst_loss = max(data[k]["loss"] for k in jittered)
                out["loss_drop"][(queue, n)] = 1 - worst_loss / still["loss"] if still["loss"] else 0.0
        out["jain_range"][queue] = max(spread(keys, "jain") for keys in by_n.values())
        out["util_range"][queue] = max(spread(keys, "util") for keys in by_n.values())
    return out


def reading(data: dict[tuple, dict[str, float]]) -> str:
    if not data:
        return "No run stored."
    c = claims(data)
    text = (
        f"Jain's index of the flows' goodputs, mean of the seeds without jitter and lowest of any seed with "
        f"at least a packet time ({PKT_TIME_MS:g} ms) of it (bar: {JAIN_FAIR}):\n\n"
    )
    for (queue, n), still in sorted(c["still"].items()):
        jit = c["jittered"][(queue, n)]
        text += f"- {queue}, {n} flows: {still:.2f} without, {jit:.2f} with"
        text += f"; the loss rate {c['loss_drop'][(queue, n)]:.0%} lower\n" if queue == "droptail" else "\n"
    text += "\nAcross the jitters, per queue (at the N where it moves most): Jain (means) spans "
    text += ", ".join(f"{q} {r:.3f}" for q, r in sorted(c["jain_range"].items()))
    text += "; utilization moves by at most " + ", ".join(f"{q} {r:.3f}" for q, r in sorted(c["util_range"].items()))
    text += (
        ". Behind drop-tail the flows' shares, Jain's index, the top flow's share and the loss rate are phase "
        "effects of a simulator without jitter; utilization is not. RED's random drops and CoDel's drops by "
        "sojourn time leave nothing for jitter to break. docs/fidelity.md (Phase effects) says which published "
        "metrics this touches and what ns-2 and ns-3 offer."
    )
    return text


def plot(data: dict[tuple, dict[str, float]]) -> None:
    queues = sorted({k[0] for k in data}) or ["droptail"]
    fig, axes = plt.subplots(1, len(queues), figsize=(4 * len(queues), 3.5), sharey=True, squeeze=False)
    for ax, queue in zip(axes[0], queues):
        for n in sorted({k[1] for k in data if k[0] == queue}):
            keys = sorted(k for k in data if k[:2] == (queue, n))
            # The jitter axis is symmetric-log: 0 (none) sits left of the first jitter.
            ax.plot([k[2] for k in keys], [data[k]["jain"] for k in keys], "o-", label=f"{n} flows")
        ax.set_xscale("symlog", linthresh=0.1)
        ax.axhline(JAIN_FAIR, color="grey", lw=0.8, ls=":")
        ax.set_title(queue)
        ax.set_xlabel("send jitter, ms (at most)")
    axes[0][0].set_ylabel("Jain's index (mean of seeds)")
    axes[0][0].legend()
    fig.tight_layout()
