"""The `atlas` table's columns (docs/atlas.md, "The table"): one row per cell and target, defined
once here for the builder (`analysis/atlas/`) and the DuckDB view (`analysis/db.py`)."""

from __future__ import annotations

import pyarrow as pa

RULES = ("bdp", "stanford", "spang", "enachescu", "dick")
"""The classic rules judged, each a `rule_<name>_pkts` column (NULL where it does not apply)."""

ATLAS_SCHEMA = pa.schema(
    [
        ("atlas", pa.string()),
        ("tcp", pa.string()),
        ("queue", pa.string()),
        ("discipline", pa.string()),  # what ran: DCTCP's drop-tail cells mark on a step queue
        ("flows", pa.int64()),
        ("core_mbps", pa.float64()),
        ("rtt_ms", pa.float64()),
        ("traffic", pa.string()),
        ("target", pa.float64()),
        ("bdp_pkts", pa.float64()),
        ("min_buffer_pkts", pa.int64()),  # NULL: unreachable, undecidable or failed (flags)
        ("min_buffer_bdp", pa.float64()),
        ("lo_pkts", pa.int64()),  # the largest buffer that missed below the answer (0: none)
        ("hi_pkts", pa.int64()),
        ("probes", pa.int64()),  # the cell's probes (every target's; shared)
        ("flags", pa.string()),  # comma-separated: unreachable, undecidable, non_monotone, failed
        ("reason", pa.string()),
        ("at_buffer_pkts", pa.int64()),  # the probe the metrics below are from
        ("utilization", pa.float64()),
        ("utilization_halfwidth", pa.float64()),
        ("loss_rate", pa.float64()),
        ("p50_queue_delay_ms", pa.float64()),
        ("p99_queue_delay_ms", pa.float64()),
        ("jain_fairness", pa.float64()),
        ("seeds", pa.string()),
        ("engine_version", pa.string()),
        *((f"rule_{r}_pkts", pa.float64()) for r in RULES),
    ]
)
