"""The buffer atlas's report (issue 59): builds `atlas=small` (or reads it), then states each
paper's claim beside what the atlas computes, judges the classic rules, fits B_min ~ N^a, and
shows the heatmaps. Every number is queried from the `atlas` table (docs/atlas.md)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis.atlas.check import answer_key
from analysis.atlas.judge import exponents, judged, verdicts
from analysis.reproductions.common import Report, mlflow_overrides, ray_session
from analysis.reproductions.kernel_vs_engine import UTIL_ABS as UTIL_BOUND

NAME = "atlas"
PRESET = "small"
TITLE = "The buffer atlas: the minimum buffer per sender, discipline, flows, speed and RTT (issues 59, 70)"
COMMAND = f"python -m analysis reproduce {NAME}   # = python -m analysis atlas build +atlas={PRESET}"
LARGE_N = 256
"""Appenzeller et al.'s model holds for many flows (their Fig. 10: N > 250)."""
SMALL_BUFFER_PKTS = 20
"""Enachescu et al.: paced senders do with 10-20 packets."""


def atlas(results: str, rerun: bool, grid: tuple[str, ...] = ()) -> tuple[Report, Callable[[], None]]:
    """`grid`: axis overrides narrowing the preset (the tests' reduced atlas)."""
    from analysis.atlas.build import answers, search
    from analysis.atlas.publish import publish
    from analysis.atlas.spec import load
    from analysis.atlas.table import rows as table_rows
    from analysis.atlas.table import write

    spec = load([f"+atlas={PRESET}", *grid, f"results_dir={results}", *mlflow_overrides()])
    with ray_session():
        states, stats = search(spec)
    table = table_rows(spec, answers(spec, states))
    write(spec.results_dir, spec.name, table)
    pngs = [p for p in publish(spec, table, states) if p.suffix == ".png"]
    rows = table.to_pylist()
    report = Report(
        name=NAME,
        title=TITLE,
        command=COMMAND,
        header=["claim", "paper", "the atlas computes", "holds"],
        rows=claim_rows(rows),
        notes=[*kernel_notes(spec.results_dir, spec.name, rows), *rule_notes(rows), *fit_notes(rows)],
        reading=reading(rows, stats, spec.cycles),
    )
    return report, lambda: _figure(pngs)


def _figure(pngs: list[Path]) -> None:
    """The report's figure: each target's heatmaps (`publish`), one above the other."""
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    imgs = [mpimg.imread(p) for p in pngs]
    width = max(i.shape[1] for i in imgs) / 110
    fig, axes = plt.subplots(len(imgs), 1, figsize=(width, sum(i.shape[0] for i in imgs) / 110), squeeze=False)
    for ax, img in zip(axes[:, 0], imgs):
        ax.imshow(img)
        ax.axis("off")
    fig.tight_layout(pad=0)


def _cells(rows: list[dict[str, Any]], **match: Any) -> list[dict[str, Any]]:
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def _frac(rows: list[dict[str, Any]], rule: str) -> tuple[float, int]:
    cells, safe = judged(rows, rule)
    return (len(safe) / len(cells) if cells else float("nan")), len(cells)


def steady(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers whose probes saw the sender's steady state: not `long_cycle`."""
    return [r for r in rows if "long_cycle" not in (r["flags"] or "")]


def claim_rows(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """Each paper's claim beside what the atlas computes, over its steady answers."""
    rows = steady(rows)
    out = []
    big = [r for r in _cells(rows, tcp="sack", queue="droptail") if r["flows"] >= LARGE_N]
    for target in (0.95, 0.99):
        f, n = _frac(_cells(big, target=target), "stanford")
        out.append(
            [
                f"BDP/sqrt(N) reaches {target:g} for many long flows (N >= {LARGE_N}), drop-tail",
                "Appenzeller 2004",
                f"safe in {f:.0%} of {n} SACK cells",
                "yes" if f >= 0.9 else "no",
            ]
        )
    fits = [v for k, v in exponents(rows).items() if k[:2] == ("sack", "droptail") and k[4] == 0.95]
    inside = sum(1 for a, hw, _ in fits if abs(a + 0.5) <= hw)
    mean_a = statistics.fmean(a for a, _, _ in fits) if fits else float("nan")
    out.append(
        [
            "B_min ~ N^-0.5 (SACK, drop-tail, 0.95)",
            "Appenzeller 2004",
            f"a = {mean_a:.2f} on average; -0.5 inside {inside} of {len(fits)} intervals",
            "yes" if fits and inside >= len(fits) / 2 else "no",
        ]
    )
    paced = [r for r in _cells(rows, tcp="bbr", queue="droptail", target=0.9) if r["min_buffer_pkts"]]
    few = sum(1 for r in paced if r["hi_pkts"] <= SMALL_BUFFER_PKTS)  # the whole bracket
    out.append(
        [
            f"paced senders reach 0.90 with <= {SMALL_BUFFER_PKTS} packets",
            "Enachescu 2006",
            f"{few} of {len(paced)} BBR drop-tail cells",
            "yes" if paced and few >= len(paced) / 2 else "no",
        ]
    )
    one = [r for r in _cells(rows, tcp="sack", queue="droptail", flows=1, target=0.99) if r["min_buffer_bdp"]]
    med = statistics.median(r["min_buffer_bdp"] for r in one) if one else float("nan")
    out.append(
        [
            "one NewReno flow needs BDP/2 for full utilization (0.99)",
            "Dick 2005",
            f"median {med:.2f} x BDP over {len(one)} cells",
            "yes" if med <= 0.55 else "no",
        ]
    )
    for tcp in ("cubic", "bbr"):
        ratio = _smaller(rows, tcp)
        out.append(
            [
                f"{tcp} needs 60-75% less buffer than NewReno (one flow, 0.99, drop-tail)",
                "Spang 2021",
                f"median {ratio:.0%} less" if ratio == ratio else "no cell answered",
                "yes" if ratio >= 0.6 else "no",
            ]
        )
    return out


def _smaller(rows: list[dict[str, Any]], tcp: str) -> float:
    base = {
        (r["core_mbps"], r["rtt_ms"]): r["min_buffer_pkts"]
        for r in _cells(rows, tcp="sack", queue="droptail", flows=1, target=0.99)
        if r["min_buffer_pkts"]
    }
    ratios = [
        1 - r["min_buffer_pkts"] / base[(r["core_mbps"], r["rtt_ms"])]
        for r in _cells(rows, tcp=tcp, queue="droptail", flows=1, target=0.99)
        if r["min_buffer_pkts"] and (r["core_mbps"], r["rtt_ms"]) in base
    ]
    return statistics.median(ratios) if ratios else float("nan")


def kernel_notes(results_dir: str, name: str, rows: list[dict[str, Any]]) -> list[str]:
    """The answers checked on this host's kernel (`atlas check backend=kernel`, issue 72), if
    any were: each bracket's ends run on the kernel, and whether it agrees. A check of an answer
    the atlas no longer gives (rebuilt since) is left out, and counted."""
    import pyarrow.parquet as pq

    from analysis.atlas.check import checks_path

    path = checks_path(results_dir, name, "kernel")
    if not path.exists():
        return []
    answers = {answer_key(r) for r in rows}
    stored = pq.read_table(path).to_pylist()
    checked = [r for r in stored if answer_key(r) in answers]
    agree = sum(r["verdict"] in ("in", "unreachable") for r in checked)
    stale = f" ({len(stored) - len(checked)} checks of answers this build no longer gives left out)"
    out = [
        "## Checked on the kernel",
        "",
        f"{agree} of {len(checked)} answers agree with this host's Linux TCP: the kernel's probes miss "
        "the target at the bracket's lower end (a bisection step below the answer) and meet it at the "
        "answer (`python -m analysis atlas check +atlas=small backend=kernel`; docs/atlas.md)"
        + (stale if len(checked) < len(stored) else "")
        + ".",
        *_same_probes(checked),
        "",
        "| tcp | queue | flows | Mb/s | RTT ms | target | answer | bracket | probe s | kernel at lo | at hi | verdict "
        "| engine, same probes, at lo | at hi | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in checked:
        lo, hi, e_lo, e_hi = (
            f"{r[k]:.4f}" if r.get(k) is not None else "-"
            for k in ("lo_utilization", "hi_utilization", "engine_lo_utilization", "engine_hi_utilization")
        )
        out.append(
            f"| {r['tcp']} | {r['queue']} | {r['flows']} | {r['core_mbps']:g} | {r['rtt_ms']:g} | {r['target']:g} "
            f"| {r['min_buffer_pkts']} | ({r['lo_pkts']}, {r['hi_pkts']}] | {r.get('long_s') or '-'} | {lo} | {hi} "
            f"| {r['verdict']} | {e_lo} | {e_hi} | {r.get('engine_verdict') or '-'} |"
        )
    return [*out, ""]


def _same_probes(checked: list[dict[str, Any]]) -> list[str]:
    """How the engine fares on the kernel's own probes (same seeds and length), where it ran: a
    verdict both give is the probes' (their length or seeds), not a gap between the two."""
    both = [r for r in checked if r.get("engine_verdict")]
    if not both:
        return []
    same = sum(r["engine_verdict"] == r["verdict"] for r in both)
    ends = [
        (r[f"engine_{e}_utilization"], r[f"{e}_utilization"])
        for r in both
        for e in ("lo", "hi")
        if r.get(f"engine_{e}_utilization") is not None and r.get(f"{e}_utilization") is not None
    ]
    near = sum(abs(a - b) <= UTIL_BOUND for a, b in ends)
    return [
        "",
        f"On the kernel's own probes (the same seeds and length) the engine gives the kernel's verdict in "
        f"{same} of {len(both)} cells, and its utilization is within {UTIL_BOUND:g} of the kernel's at "
        f"{near} of {len(ends)} bracket ends (issue 72's bound).",
    ]


def rule_notes(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "## The rules, judged",
        "",
        "| rule | target | cells judged | safe | median over-provisioning where safe |",
        "|---|---|---|---|---|",
    ]
    for (rule, target), v in verdicts(rows).items():
        if v["cells"]:
            over = f"{v['over']:.2f}x" if v["over"] == v["over"] else "n/a (never safe)"
            out.append(f"| {rule} | {target:g} | {v['cells']} | {v['safe']:.0%} | {over} |")
    return [*out, ""]


def fit_notes(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "## B_min ~ N^a",
        "",
        "| tcp | queue | Mb/s | RTT ms | target | a | 95% +- | flow counts |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (tcp, queue, c, rtt, t), (a, hw, n) in sorted(exponents(rows).items()):
        out.append(f"| {tcp} | {queue} | {c:g} | {rtt:g} | {t:g} | {a:.2f} | {hw:.2f} | {n} |")
    return [*out, ""]


def reading(rows: list[dict[str, Any]], stats: Any, cycles: float) -> str:
    answered = sum(1 for r in rows if r["min_buffer_pkts"] is not None)
    flags: dict[str, int] = {}
    for r in rows:
        for f in filter(None, (r["flags"] or "").split(",")):
            flags[f] = flags.get(f, 0) + 1
    flagged = ", ".join(f"{n} {f}" for f, n in sorted(flags.items())) or "none"
    cells = len({(r["tcp"], r["queue"], r["flows"], r["core_mbps"], r["rtt_ms"], r["traffic"]) for r in rows})
    transient = len(rows) - len(steady(rows))
    return (
        f"The claims above read the {len(rows) - transient} answers whose probes measured {cycles:g} of "
        f"the sender's cycles; {transient} are flagged `long_cycle` (a few NewReno or CUBIC flows, or "
        "DCTCP's first halving, at a large BDP take longer than a probe may run) and are left out of them, "
        "not out of the rules' verdicts. A rule is "
        "safe in a cell only at or above the answer's bracket. "
        f"{cells} cells x {len({r['target'] for r in rows})} targets: {answered} of {len(rows)} answers, "
        f"flagged: {flagged}. This build asked {stats.probes} probes ({stats.runs} runs) in {stats.rounds} "
        f"rounds and simulated {stats.runs_new} runs ({stats.packets:.3g} packets) in {stats.wall_s:.0f} s; "
        "the rest were stored. Query any point with `python -m analysis atlas query`; the page is "
        "results/atlas/small/atlas_small.html."
    )
