"""The `atlas` table's columns (docs/atlas.md, "The table"): one row per cell and target, defined
once here for the builder (`analysis/atlas/`) and the DuckDB view (`analysis/db.py`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

RULES = ("bdp", "stanford", "spang", "enachescu", "dick")
"""The classic rules judged, each a `rule_<name>_pkts` column (NULL where it does not apply)."""


def _col(name: str, typ: pa.DataType, unit: str, doc: str) -> pa.Field:
    return pa.field(name, typ, metadata={b"unit": unit.encode(), b"doc": doc.encode()})


ATLAS_SCHEMA = pa.schema(
    [
        _col("atlas", pa.string(), "", "the atlas preset the cell was built in (conf/atlas/)"),
        _col("tcp", pa.string(), "", "the sender (a tcp preset)"),
        _col("queue", pa.string(), "", "the queue discipline asked for"),
        _col("discipline", pa.string(), "", "the discipline that ran: DCTCP's drop-tail cells mark on a step queue"),
        _col("flows", pa.int64(), "count", "long-lived flows"),
        _col("core_mbps", pa.float64(), "Mb/s", "bottleneck capacity"),
        _col("rtt_ms", pa.float64(), "ms", "the flows' mean two-way propagation delay"),
        _col("traffic", pa.string(), "", "the traffic mix beside the long flows (none, web, udp)"),
        _col("target", pa.float64(), "1", "the bottleneck utilization to reach"),
        _col("bdp_pkts", pa.float64(), "pkts", "the bandwidth-delay product at rtt_ms"),
        _col(
            "min_buffer_pkts",
            pa.int64(),
            "pkts",
            "the answer: where the probes' mean utilization crosses the target, in (lo_pkts, hi_pkts]; "
            "NULL: unreachable or failed (flags)",
        ),
        _col("min_buffer_bdp", pa.float64(), "BDP", "the answer over bdp_pkts"),
        _col(
            "lo_pkts",
            pa.int64(),
            "pkts",
            "the largest buffer whose utilization lies surely below the target (its 95% interval across seeds, or "
            "one seed far below it: analysis/atlas/search.py; 0: none)",
        ),
        _col("hi_pkts", pa.int64(), "pkts", "the smallest buffer whose utilization lies surely above it"),
        _col(
            "confidence",
            pa.float64(),
            "1",
            "the level of the intervals behind lo and hi (NULL: decided by means, the slices')",
        ),
        _col("probes", pa.int64(), "count", "the cell's probes (buffers; its targets share them)"),
        _col("runs", pa.int64(), "count", "the cell's runs (its probes' seeds)"),
        _col(
            "flags",
            pa.string(),
            "",
            "comma-separated: unreachable, undecidable (the bracket is the answer), non_monotone, long_cycle, failed",
        ),
        _col("reason", pa.string(), "", "why a flag was raised"),
        _col("at_buffer_pkts", pa.int64(), "pkts", "the probe the metrics below are from (hi_pkts, or the largest)"),
        _col("seeds", pa.int64(), "count", "the seeds behind that probe"),
        _col("probe_s", pa.float64(), "s", "the time that probe measured (past its MSER-5 warm-up allowance)"),
        _col("cycle_s", pa.float64(), "s", "the sender's cycle at that buffer (analysis/atlas/cycle.py)"),
        _col("utilization", pa.float64(), "1", "utilization there (mean of its seeds)"),
        _col("utilization_halfwidth", pa.float64(), "1", "its 95% half-width across seeds"),
        _col("loss_rate", pa.float64(), "1", "loss rate there"),
        _col("p50_queue_delay_ms", pa.float64(), "ms", "median queueing delay there"),
        _col("p99_queue_delay_ms", pa.float64(), "ms", "99th percentile of the queueing delay there"),
        _col("jain_fairness", pa.float64(), "1", "Jain's index of the flows' goodputs there"),
        _col("engine_version", pa.string(), "", "the engine that ran the probes"),
        *(_col(f"rule_{r}_pkts", pa.float64(), "pkts", f"the {r} rule's buffer at the cell") for r in RULES),
    ]
)


SHIPPED = Path(__file__).resolve().parent / "atlas" / "shipped"
"""Atlas tables that ship with the project (`NAME-ENGINE_VERSION.parquet`): `atlas query` and the
`atlas` view answer from them where no atlas of that name is built (docs/atlas.md, "Shipped")."""


def shipped_name(path: Path) -> tuple[str, str]:
    """(atlas name, engine version) of a shipped table's file."""
    name, _, version = path.stem.rpartition("-")
    return name, version


def atlas_files(results_dir: str | Path) -> list[Path]:
    """The atlas tables to read: those built in results_dir (`results_dir/atlas/NAME.parquet`),
    then the shipped ones of names not built there."""
    local = "://" not in str(results_dir)
    built = sorted(f for f in Path(results_dir).glob("atlas/*.parquet") if not f.name.startswith(".")) if local else []
    names = {f.stem for f in built}
    return built + [f for f in sorted(SHIPPED.glob("*.parquet")) if shipped_name(f)[0] not in names]
