"""The `atlas` table's columns (docs/atlas.md, "The table"): one row per cell and target, defined
once here for the builder (`analysis/atlas/`) and the DuckDB view (`analysis/db.py`)."""

from __future__ import annotations

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
        _col("min_buffer_pkts", pa.int64(), "pkts", "the answer; NULL: unreachable, undecidable or failed (flags)"),
        _col("min_buffer_bdp", pa.float64(), "BDP", "the answer over bdp_pkts"),
        _col("lo_pkts", pa.int64(), "pkts", "the largest buffer probed that missed the target below the answer"),
        _col("hi_pkts", pa.int64(), "pkts", "the smallest buffer probed that met it"),
        _col("probes", pa.int64(), "count", "the cell's probes (its targets share them)"),
        _col("flags", pa.string(), "", "comma-separated: unreachable, undecidable, non_monotone, long_cycle, failed"),
        _col("reason", pa.string(), "", "why a flag was raised"),
        _col("at_buffer_pkts", pa.int64(), "pkts", "the probe the metrics below are from (the answer's)"),
        _col("utilization", pa.float64(), "1", "utilization at at_buffer_pkts (mean of seeds)"),
        _col("utilization_halfwidth", pa.float64(), "1", "its half-width, where a precision was given"),
        _col("loss_rate", pa.float64(), "1", "loss rate there"),
        _col("p50_queue_delay_ms", pa.float64(), "ms", "median queueing delay there"),
        _col("p99_queue_delay_ms", pa.float64(), "ms", "99th percentile of the queueing delay there"),
        _col("jain_fairness", pa.float64(), "1", "Jain's index of the flows' goodputs there"),
        _col("seeds", pa.string(), "", "the seeds each probe ran"),
        _col("engine_version", pa.string(), "", "the engine that ran the probes"),
        *(_col(f"rule_{r}_pkts", pa.float64(), "pkts", f"the {r} rule's buffer at the cell") for r in RULES),
    ]
)
