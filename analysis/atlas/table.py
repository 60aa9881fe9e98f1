"""The atlas's answers as the `atlas` table (`analysis.atlas_schema`), stored atomically under
`results_dir/atlas/NAME.parquet`, which `analysis.db.connect` shows as the `atlas` view."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import sim
from analysis.atlas.build import CellState
from analysis.atlas.cycle import cycle_s, long_cycle
from analysis.atlas.cycle import length as probe_length
from analysis.atlas.rules import rules
from analysis.atlas.search import Answer
from analysis.atlas.spec import AtlasSpec
from analysis.atlas_schema import ATLAS_SCHEMA


def rows(spec: AtlasSpec, answered: list[tuple[CellState, float, Answer]]) -> pa.Table:
    out = []
    for s, target, a in answered:
        c = s.cell
        at = a.hi if a.hi is not None else (max(s.probes) if s.probes else None)
        p = s.probes.get(at) if at is not None else None
        m = p.metrics if p else {}
        bdp = spec.bdp(c)
        discipline = [g.split("=", 1)[1] for g in spec.groups(c) if g.startswith("queue=")][0]
        length = probe_length(spec, c, at) if at is not None else {}
        row = {
            "atlas": spec.name,
            "tcp": c.tcp,
            "queue": c.queue,
            "discipline": discipline,
            "flows": c.flows,
            "core_mbps": float(c.core_mbps),
            "rtt_ms": float(c.rtt_ms),
            "traffic": c.traffic,
            "target": float(target),
            "bdp_pkts": bdp,
            "min_buffer_pkts": a.buffer_pkts,
            "min_buffer_bdp": a.buffer_pkts / bdp if a.buffer_pkts is not None else None,
            "lo_pkts": a.lo,
            "hi_pkts": a.hi,
            "confidence": a.confidence,
            "probes": len(s.probes),
            "runs": sum(len(r) for r in s.runs.values()),
            "flags": ",".join(a.flags + (["long_cycle"] if at is not None and long_cycle(spec, c, at) else [])),
            "reason": a.reason,
            "at_buffer_pkts": at,
            "seeds": p.seeds if p else None,
            "probe_s": length["duration_s"] - length["warmup_s"] if length else None,
            "cycle_s": cycle_s(spec, c, at) if at is not None else None,
            "utilization": m.get("utilization"),
            "utilization_halfwidth": p.halfwidth if p else None,
            **{k: m.get(k) for k in ("loss_rate", "p50_queue_delay_ms", "p99_queue_delay_ms", "jain_fairness")},
            "engine_version": sim.ENGINE_VERSION,
            **{f"rule_{k}_pkts": v for k, v in rules(spec.pkt_bytes(), c, target).items()},
        }
        out.append(row)
    return pa.Table.from_pylist(out, schema=ATLAS_SCHEMA)


def path_of(results_dir: str, name: str) -> Path:
    return Path(results_dir) / "atlas" / f"{name}.parquet"


def write(results_dir: str, name: str, table: pa.Table) -> Path:
    """Replaces the atlas's table atomically (`write_atomic`)."""
    return write_atomic(path_of(results_dir, name), table)


def write_atomic(path: Path, table: pa.Table) -> Path:
    """Replaces the Parquet file at `path`: written beside, then renamed over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex}")  # never read as a table, if left by a kill
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
