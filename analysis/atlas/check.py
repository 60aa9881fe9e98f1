"""`python -m analysis atlas check +atlas=small cells=20 check_seeds=10`: the atlas's brackets
against long, replicated probes (issue 70, acceptance 1; docs/atlas.md, "Checks"). For random
cells (and any `point=` asked, through `atlas query`'s bracket there), each target's bracket
(lo, hi] is probed again at both ends with runs `long_s` long or ten of the sender's cycles (at
most `max_long_s`), on `check_seeds` seeds from CHECK_SEED (none the atlas's), warm-up cut by
MSER-5. The long answer lies in the bracket when the long probes' mean misses the target at lo
and meets it at hi; where it does not, the check says on which side. An unreachable answer agrees
when the long probe at the atlas's largest buffer misses too.

With `backend=kernel` (issue 72) the probes run on this host's Linux TCP in real time: `long_s`
seconds each, the first quarter unmeasured (the kernel backend has no in-run precision), and the
verdicts are stored for `reproduce atlas` (`results_dir/atlas/checks/NAME-kernel.parquet`). The
axes and `targets` narrow the cells checked, as `tcp=cubic,bbr queue=droptail targets=[0.95]`."""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path
from typing import Any

from analysis.atlas.spec import AtlasSpec, Cell, load
from sweeps.errors import exit_usage

OWN = ("cells", "check_seeds", "pick_seed", "long_s", "max_long_s")
"""The check's own keys, beside `point.tcp=... point.queue=... point.flows=... point.core_mbps=...
point.rtt_ms=... point.target=...`: a point checked through `atlas query`'s bracket."""
CHECK_SEED = 101
"""The checks' first seed: their runs share none with the atlas's (seeds from 1)."""
LONG_CYCLES = 10
KERNEL_WARMUP = 0.25
"""A kernel probe's unmeasured share of its `long_s` (the slow start and the flows' starts)."""


def _own(args: list[str]) -> tuple[dict[str, Any], list[str]]:
    own: dict[str, Any] = {"cells": 20, "check_seeds": 10, "pick_seed": 1, "long_s": 300, "max_long_s": 1200}
    own["point"] = {}
    rest = []
    for a in args:
        key, _, value = a.partition("=")
        if key.startswith("point."):
            own["point"][key.removeprefix("point.")] = value
        elif key in OWN:
            if not value.isdigit() or int(value) < 1:
                exit_usage(f"{key}: must be a whole number >= 1, got {value!r}")
            own[key] = int(value)
        else:
            rest.append(a)
    return own, rest


def backend(spec: AtlasSpec) -> str:
    """The backend the probes run on: the last `backend=` among the overrides, else the engine."""
    given = [b.split("=", 1)[1] for b in spec.base if b.startswith("backend=")]
    return given[-1] if given else "engine"


def long_spec(spec: AtlasSpec, own: dict[str, int]) -> AtlasSpec:
    """The atlas's spec with the check's long probes and seeds: on the kernel, `long_s` of real
    time each, since in-run precision (MSER) is the engine's."""
    seeds = list(range(CHECK_SEED, CHECK_SEED + own["check_seeds"]))
    if backend(spec) != "engine":
        return dataclasses.replace(
            spec,
            name=f"{spec.name}_check_{backend(spec)}",
            probe="fixed",
            duration_rtts=0,
            min_duration_s=own["long_s"],
            warmup_fraction=KERNEL_WARMUP,
            seeds=seeds,
            min_seeds=len(seeds),
        )
    return dataclasses.replace(
        spec,
        name=f"{spec.name}_check",  # a sweep of its own
        probe="cycles",
        cycles=LONG_CYCLES,
        min_duration_s=max(spec.min_duration_s, own["long_s"]),
        max_probe_s=max(own["long_s"], own["max_long_s"]),
        max_probe_pkts=None,
        cap_whole=False,
        seeds=seeds,
        min_seeds=len(seeds),
    )


def verdict(row: dict[str, Any], at: dict[int, tuple[float, float | None]]) -> str:
    """`in`, `above` (the long answer lies above the bracket), `below`, or for an unreachable
    answer `unreachable` (agrees) or `reachable`; `at`: buffer -> the long probes' mean, half-width."""
    target, lo, hi = row["target"], row["lo_pkts"], row["hi_pkts"]
    if hi is None:
        top = max(at)
        return "unreachable" if at[top][0] < target else "reachable"
    if at[hi][0] < target:
        return "above"
    if lo and at[lo][0] >= target:
        return "below"
    return "in"


def ends(row: dict[str, Any]) -> list[int]:
    """The buffers the long probes take for a row: its bracket's ends, or the largest it tried."""
    if row["hi_pkts"] is None:
        return [row["at_buffer_pkts"]] if row["at_buffer_pkts"] else []
    return [b for b in (row["lo_pkts"], row["hi_pkts"]) if b]


def _point(q: dict[str, str], spec: AtlasSpec) -> tuple[Cell, dict[str, Any]]:
    """`point.KEY=...` as a cell and a row whose bracket is `atlas query`'s there (rounded)."""
    from analysis.atlas.lookup import query

    need = ("tcp", "queue", "flows", "core_mbps", "rtt_ms", "target")
    missing = [k for k in need if k not in q]
    if missing:
        exit_usage(f"point.{missing[0]}: missing; a checked point names point.{', point.'.join(need)}")
    got = query(**{k: q[k] for k in need}, atlas=spec.name, results_dir=spec.results_dir)
    if got["kind"] not in ("measured", "interpolated"):
        exit_usage(f"point: the atlas has no answer there ({got['kind']})")
    cell = Cell(q["tcp"], q["queue"], int(float(q["flows"])), float(q["core_mbps"]), float(q["rtt_ms"]))
    row = {
        "target": float(q["target"]),
        "lo_pkts": math.floor(got["lo_pkts"]),
        "hi_pkts": math.ceil(got["hi_pkts"]),
        "min_buffer_pkts": round(got["buffer_pkts"]),
        "flags": ",".join(got["flags"]),
        "at_buffer_pkts": None,
    }
    return cell, row


def main(args: list[str]) -> int:
    from analysis.atlas.probes import atlas_ray, measure
    from analysis.db import connect

    own, rest = _own(args)
    spec: AtlasSpec = load(rest)
    if "://" not in spec.results_dir:  # the shipped atlas is checked from a new directory too
        Path(spec.results_dir).mkdir(parents=True, exist_ok=True)
    cur = connect(spec.results_dir, documented=False).execute("SELECT * FROM atlas WHERE atlas = ?", [spec.name])
    cols = [d[0] for d in cur.description]
    asked_cells = set(spec.cells())
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    rows = [r for r in rows if _cell(r) in asked_cells and r["target"] in spec.targets]
    cells = sorted({_cell(r) for r in rows}, key=str)
    if not cells:
        exit_usage(f"atlas: {spec.name!r} is not built in {spec.results_dir}; build it first")
    picked = random.Random(own["pick_seed"]).sample(cells, min(own["cells"], len(cells)))
    check = long_spec(spec, own)
    mine = [(c, r) for c in picked for r in rows if _cell(r) == c]
    if own["point"]:
        mine.append(_point(own["point"], spec))
    wanted = sorted({(c, b) for c, r in mine for b in ends(r)}, key=str)
    asked = [(c, b, s) for c, b in wanted for s in check.seeds]
    same = on_engine(check) if backend(spec) != "engine" else None
    with atlas_ray(spec):  # one sweep, with its own progress (a line every 20 s off a terminal)
        got, new, packets = measure(check, asked, {}, set(), quiet=False)
        mirror = measure(same, asked, {}, set())[0] if same else None
    at = _probes(check, asked, got)
    at_engine = _probes(check, asked, mirror) if mirror else {}
    counts: dict[str, int] = {}
    checked = []
    for c, r in mine:
        here = _at_ends(at, c, r)
        v = verdict(r, here) if here else "unprobed"
        counts[v] = counts.get(v, 0) + 1
        engine = _at_ends(at_engine, c, r) if mirror else {}
        checked.append(_record(c, r, here, v, engine, own["long_s"]))
        print(_line(c, r, here, v) + (f"; the engine on the same probes {_probes_text(engine)}" if engine else ""))
    if same:
        print(f"stored: {store(spec, checked)}")
    agree = counts.get("in", 0) + counts.get("unreachable", 0)
    total = sum(counts.values())
    print(f"{agree} of {total} answers' long probes agree with their bracket ({counts}); {new} runs simulated")
    return 0 if agree >= 0.9 * total else 1


def on_engine(check: AtlasSpec) -> AtlasSpec:
    """A kernel check's probes, the same seeds and lengths, on the engine: where the kernel's
    verdict differs from the atlas's but the engine's on these probes does not, the probes (their
    length, their seeds) disagree with the atlas, not the kernel with the engine (docs/atlas.md)."""
    return dataclasses.replace(check, name=f"{check.name}_engine", base=[*check.base, "backend=engine"])


def _probes(check: AtlasSpec, asked: list[tuple[Cell, int, int]], got: list) -> dict[tuple[Cell, int], Any]:
    """Each (cell, buffer)'s probe over its seeds."""
    from analysis.atlas.build import probe_of

    runs: dict[tuple[Cell, int], dict[int, Any]] = {}
    for (c, b, s), m in zip(asked, got):
        runs.setdefault((c, b), {})[s] = m
    return {k: probe_of(check, v) for k, v in runs.items()}


def _at_ends(at: dict[tuple[Cell, int], Any], c: Cell, r: dict[str, Any]) -> dict[int, tuple[float, float | None]]:
    """A row's bracket ends: buffer -> (the probes' mean, half-width)."""
    return {b: (at[(c, b)].utilization, at[(c, b)].halfwidth) for b in ends(r)}


def _cell(r: dict[str, Any]) -> Cell:
    return Cell(r["tcp"], r["queue"], r["flows"], r["core_mbps"], r["rtt_ms"], r["traffic"])


def _probes_text(here: dict[int, tuple[float, float | None]]) -> str:
    return ", ".join(f"{u:.4f} ± {hw or 0:.4f} at {b:,}" for b, (u, hw) in sorted(here.items()))


def _line(c: Cell, r: dict[str, Any], here: dict[int, tuple[float, float | None]], v: str) -> str:
    probes = _probes_text(here)
    hi = "?" if r["hi_pkts"] is None else f"{r['hi_pkts']:,}"
    return (
        f"{c.tcp} {c.queue} flows={c.flows} core_mbps={c.core_mbps:g} rtt_ms={c.rtt_ms:g} target {r['target']:g}: "
        f"atlas {r['min_buffer_pkts']} in ({r['lo_pkts']}, {hi}] [{r['flags'] or ''}]; long probes {probes}: {v}"
    )


def _record(
    c: Cell, r: dict[str, Any], here: dict[int, tuple[float, float | None]], v: str, engine: dict, long_s: int
) -> dict[str, Any]:
    def end(at: dict[int, tuple[float, float | None]], key: str) -> float | None:
        got = at.get(r[key]) if r[key] else None
        return got[0] if got else None

    return {
        **dataclasses.asdict(c),
        "target": r["target"],
        "min_buffer_pkts": r["min_buffer_pkts"],
        "lo_pkts": r["lo_pkts"],
        "hi_pkts": r["hi_pkts"],
        "lo_utilization": end(here, "lo_pkts"),
        "hi_utilization": end(here, "hi_pkts"),
        "verdict": v,
        "engine_version": r.get("engine_version"),
        "long_s": long_s,
        "engine_lo_utilization": end(engine, "lo_pkts"),
        "engine_hi_utilization": end(engine, "hi_pkts"),
        "engine_verdict": (verdict(r, engine) if engine else None),
    }


def checks_path(results_dir: str, name: str, on: str) -> Path:
    return Path(results_dir) / "atlas" / "checks" / f"{name}-{on}.parquet"


def answer_key(r: dict[str, Any]) -> tuple:
    """An answer's identity: its cell, target, bracket and the engine that gave it."""
    keys = ("tcp", "queue", "flows", "core_mbps", "rtt_ms", "traffic", "target", "lo_pkts", "hi_pkts", "engine_version")
    return tuple(r.get(k) for k in keys)


def store(spec: AtlasSpec, checked: list[dict[str, Any]]) -> Path:
    """The verdicts, written atomically over the stored ones: a check of the same answer (cell,
    target, bracket, engine) replaces its earlier one, as when a cell is checked again with longer
    probes; the others stay."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from analysis.atlas.table import write_atomic

    path = checks_path(spec.results_dir, spec.name, backend(spec))
    new = {answer_key(r) for r in checked}
    stored = pq.read_table(path).to_pylist() if path.exists() else []
    kept = [r for r in stored if answer_key(r) not in new]
    rows = [*kept, *checked]
    columns = list(dict.fromkeys(k for r in [*checked, *kept] for k in r))  # older rows may lack a newer column
    return write_atomic(path, pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows]))
