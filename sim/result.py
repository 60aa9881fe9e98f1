"""Run a simulation and get its results as Arrow tables with documented schemas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sim import _core
from sim.config import SimConfig

# Summary metrics, in engine order; every value is a float64 (counts are exact below 2**53).
SUMMARY_METRICS: tuple[str, ...] = (
    "utilization",  # bits sent on the bottleneck / (C x measured time)
    "goodput_mbps",  # new in-order data delivered to the long flows' receivers
    "offered_load",  # (sum over long flows of wmax / RTT + short-flow and open-loop rates) / C
    "effective_utilization",  # utilization / min(1, offered_load)
    "loss_rate",  # bottleneck drops / bottleneck arrivals
    "access_loss_rate",  # access-link drops / access-link arrivals
    "mean_queue_pkts",  # time-weighted, packets waiting (not in service)
    "p99_queue_pkts",
    "mean_queue_delay_ms",  # waiting time of packets before transmission
    "p99_queue_delay_ms",
    "jain_fairness",  # over per-flow goodputs
    "timeouts",
    "fast_retransmits",
    "retransmits",
    "mean_cwnd_pkts",
    "mean_rtt_ms",  # mean two-way propagation delay of the flows
    "short_flows",  # short flows that started in the measured window
    "short_flows_done",  # ... and completed before the end of the run
    "short_afct_ms",  # their mean flow-completion time (first packet sent to last received)
    "short_p99_fct_ms",
    "bottleneck_arrivals",
    "bottleneck_drops",
    "bottleneck_pkts",  # packets transmitted in the measured window
    "measured_s",
    "events",
    "wall_s",
    "events_per_s",
    "pkts_per_s",  # bottleneck packets per wall-clock second (whole run)
)

CONFIG_TYPES: dict[str, pa.DataType] = {
    "tcp": pa.string(),
    "flows": pa.int64(),
    "buffer_pkts": pa.int64(),
    "buffer_bytes": pa.int64(),
    "wmax_pkts": pa.int64(),
    "access_mbps": pa.float64(),
    "access_buffer_pkts": pa.int64(),
    "core_mbps": pa.float64(),
    "rtt_ms": pa.float64(),
    "rtt_spread_ms": pa.float64(),
    "rtts_ms": pa.list_(pa.float64()),
    "pkt_bytes": pa.int64(),
    "duration_s": pa.float64(),
    "warmup_s": pa.float64(),
    "seed": pa.int64(),
    "start_window_s": pa.float64(),
    "init_cwnd_pkts": pa.float64(),
    "init_ssthresh_pkts": pa.float64(),
    "min_rto_ms": pa.float64(),
    "max_rto_s": pa.float64(),
    "init_rto_s": pa.float64(),
    "tick_ms": pa.float64(),
    "delayed_ack": pa.bool_(),
    "delack_ms": pa.float64(),
    "limited_transmit": pa.bool_(),
    "max_burst_pkts": pa.int64(),
    "poisson_mbps": pa.float64(),
    "cbr_mbps": pa.float64(),
    "open_loop_bytes": pa.int64(),
    "short_mbps": pa.float64(),
    "short_flow_pkts": pa.int64(),
    "controller": pa.string(),
    "controller_interval_ms": pa.float64(),
    "buffer_schedule": pa.list_(pa.struct([("time_s", pa.float64()), ("buffer_pkts", pa.int64())])),
    "sample_interval_s": pa.float64(),
    "trace_max_events": pa.int64(),
    "trace_start_s": pa.float64(),
}

SUMMARY_SCHEMA = pa.schema(
    [pa.field("engine_version", pa.string())]
    + [pa.field(k, t) for k, t in CONFIG_TYPES.items()]
    + [pa.field(m, pa.float64()) for m in SUMMARY_METRICS]
)

TIMESERIES_SCHEMA = pa.schema(
    [
        ("time_s", pa.float64()),  # end of the sample interval
        ("utilization", pa.float64()),
        ("goodput_mbps", pa.float64()),
        ("arrivals", pa.int64()),
        ("drops", pa.int64()),
        ("queue_mean_pkts", pa.float64()),
        ("queue_max_pkts", pa.int64()),
        ("buffer_pkts", pa.float64()),  # bottleneck capacity during the interval (end value)
        ("mean_cwnd_pkts", pa.float64()),  # over flows that have started
    ]
)

FLOWS_SCHEMA = pa.schema(
    [
        ("flow_id", pa.int64()),
        ("rtt_ms", pa.float64()),
        ("start_s", pa.float64()),
        ("goodput_mbps", pa.float64()),
        ("retransmits", pa.int64()),
        ("timeouts", pa.int64()),
        ("fast_retransmits", pa.int64()),
        ("mean_cwnd_pkts", pa.float64()),
        # whole-run conservation counters: sent = delivered + dropped + in_flight
        ("sent_pkts", pa.int64()),
        ("delivered_pkts", pa.int64()),
        ("dropped_pkts", pa.int64()),
        ("in_flight_pkts", pa.int64()),
    ]
)

TRACE_SCHEMA = pa.schema(
    [
        ("time_s", pa.float64()),
        ("event", pa.dictionary(pa.int8(), pa.string())),  # enqueue | drop | dequeue
        ("open_loop", pa.bool_()),
        ("flow", pa.int64()),
        ("seq", pa.int64()),
        ("queue_pkts", pa.int64()),  # queue length after the event
    ]
)

TRACE_EVENTS = ("enqueue", "drop", "dequeue")


@dataclass(frozen=True)
class SimResult:
    config: SimConfig
    summary: pa.Table
    timeseries: pa.Table
    flows: pa.Table
    trace: pa.Table | None

    def metrics(self) -> dict[str, Any]:
        """The summary row as a dict (config fields and metrics)."""
        return self.summary.to_pylist()[0]


def config_row(cfg: SimConfig) -> dict[str, Any]:
    """The config part of a summary row (engine version and every field, Arrow-ready)."""
    row: dict[str, Any] = {"engine_version": _core.ENGINE_VERSION, **cfg.to_dict()}
    row["buffer_schedule"] = [{"time_s": t, "buffer_pkts": b} for t, b in cfg.buffer_schedule]
    return row


def _columns(cols: dict[str, list], schema: pa.Schema) -> pa.Table:
    return pa.table({f.name: pa.array(cols[f.name], type=f.type) for f in schema}, schema=schema)


def run(config: SimConfig | None = None, /, **fields: Any) -> SimResult:
    """Runs one simulation: `run(SimConfig(...))` or `run(tcp="paced", flows=40, ...)`.

    Raises ValueError (naming the field and its allowed range) before anything runs if the
    config is invalid. The GIL is released while the engine runs; Ctrl-C stops it.
    """
    if config is not None and fields:
        raise ValueError("pass either a SimConfig or keyword fields, not both")
    cfg = config if config is not None else SimConfig.from_fields(**fields)
    cfg.validate()
    out = _core.run(cfg.to_dict())
    row = {**config_row(cfg), **out["summary"]}
    summary = pa.Table.from_pylist([row], schema=SUMMARY_SCHEMA)
    trace = None
    if cfg.trace_max_events > 0:
        t = dict(out["trace"])
        t["event"] = pa.DictionaryArray.from_arrays(
            pa.array(t["event"], type=pa.int8()), pa.array(TRACE_EVENTS)
        )
        trace = pa.table(
            {f.name: (t[f.name] if f.name == "event" else pa.array(t[f.name], type=f.type)) for f in TRACE_SCHEMA},
            schema=TRACE_SCHEMA,
        )
    return SimResult(
        config=cfg,
        summary=summary,
        timeseries=_columns(out["timeseries"], TIMESERIES_SCHEMA),
        flows=_columns(out["flows"], FLOWS_SCHEMA),
        trace=trace,
    )
