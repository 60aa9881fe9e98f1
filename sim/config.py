"""The run configuration: one typed record whose field names are the platform's parameter names
(the sweep axes use the same ones). Validation lives in the engine (`validate()`), so the rules
exist once; this module only gives the fields, their defaults and their units."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sim import _core

VARIANTS: tuple[str, ...] = tuple(_core.variants())
CONTROLLERS: tuple[str, ...] = tuple(_core.controllers())


@dataclass(frozen=True)
class SimConfig:
    """A dumbbell of `flows` long-lived TCP flows (and optional short TCP flows and open-loop
    traffic) through one drop-tail bottleneck. Defaults follow ns-2's one-way TCP agents where they apply."""

    tcp: str = "reno"
    flows: int = 1
    buffer_pkts: int = 100
    """Bottleneck buffer in packets, not counting the one being transmitted (ns-2 DropTail)."""
    buffer_bytes: int | None = None
    """Byte-limited bottleneck buffer; overrides buffer_pkts when set."""
    wmax_pkts: int = 64
    """Receiver window cap."""
    access_mbps: float | None = None
    """Per-sender access link rate; None = senders attached straight to the bottleneck."""
    access_buffer_pkts: int = 10_000
    core_mbps: float = 100.0
    rtt_ms: float = 100.0
    """Two-way propagation delay of each flow (queueing excluded)."""
    rtt_spread_ms: float = 0.0
    """Flows' RTTs uniform in rtt_ms +/- rtt_spread_ms / 2."""
    rtts_ms: tuple[float, ...] | None = None
    """Explicit per-flow RTTs (one per flow); overrides rtt_ms and rtt_spread_ms."""
    pkt_bytes: int = 1000
    duration_s: float = 60.0
    warmup_s: float = 10.0
    """Metrics cover [warmup_s, duration_s]."""
    seed: int = 1
    start_window_s: float = 1.0
    """Flows start at uniform random times in [0, start_window_s]."""
    init_cwnd_pkts: float = 2.0
    """ns-2 windowInit_ (2 since 2001)."""
    init_ssthresh_pkts: float | None = None
    """None = the receiver window, as ns-2."""
    min_rto_ms: float = 200.0
    max_rto_s: float = 60.0
    init_rto_s: float = 3.0
    tick_ms: float = 10.0
    """RTT-sample granularity (ns-2 tcpTick_); 0 = exact."""
    delayed_ack: bool = False
    delack_ms: float = 100.0
    limited_transmit: bool = True
    """RFC 3042 (ns-2 singledup_ = 1)."""
    max_burst_pkts: int = 0
    """Packets released per ACK; 0 = unlimited (ns-2 maxburst_ = 0)."""
    poisson_mbps: float = 0.0
    """Open-loop Poisson traffic into the bottleneck."""
    cbr_mbps: float = 0.0
    """Open-loop constant-bit-rate traffic into the bottleneck."""
    open_loop_bytes: int | None = None
    """Open-loop packet size; None = pkt_bytes."""
    short_mbps: float = 0.0
    """Offered load of short TCP flows (Poisson arrivals of short_flow_pkts-packet transfers of
    the same variant, RTTs uniform in rtt_ms +/- rtt_spread_ms / 2); 0 = none."""
    short_flow_pkts: int = 14
    """Size of each short flow (Appenzeller et al.'s 14-packet flows)."""
    controller: str = "none"
    """Buffer controller changing the bottleneck capacity during the run."""
    controller_interval_ms: float = 100.0
    buffer_schedule: tuple[tuple[float, int], ...] = ()
    """(time_s, buffer_pkts) steps for controller="schedule"."""
    sample_interval_s: float = 0.1
    trace_max_events: int = 0
    """Bottleneck event trace length; 0 = off."""
    trace_start_s: float | None = None
    """Trace from this time on; None = warmup_s."""

    def to_dict(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict deep-copies every value and costs ~200 us, which
        # dominates validating a 100,000-job grid.
        d = {name: getattr(self, name) for name in _FIELDS}
        d["rtts_ms"] = None if self.rtts_ms is None else [float(x) for x in self.rtts_ms]
        d["buffer_schedule"] = [(float(t), int(b)) for t, b in self.buffer_schedule]
        return d

    def validate(self) -> SimConfig:
        """Raises ValueError naming the field and its allowed range; returns self."""
        try:
            _core.validate(self.to_dict())
        except TypeError as e:  # a value of the wrong type (e.g. a string for a number)
            raise ValueError(f"invalid type in config: {e}") from None
        return self

    @classmethod
    def from_fields(cls, **fields: Any) -> SimConfig:
        """Builds a config from keyword fields, rejecting unknown names with a ValueError."""
        unknown = sorted(set(fields) - _FIELD_SET)
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}; allowed: {', '.join(sorted(_FIELD_SET))}")
        if fields.get("rtts_ms") is not None:
            fields["rtts_ms"] = tuple(fields["rtts_ms"])
        if "buffer_schedule" in fields:
            fields["buffer_schedule"] = tuple(tuple(s) for s in fields["buffer_schedule"])
        return cls(**fields)


_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SimConfig))
_FIELD_SET = frozenset(_FIELDS)


