"""The run fields of a tcp preset, for tests parametrized over every one (sim.VARIANTS): a law that
needs ECN marks (DCTCP) gets ECN and a step-marking queue, without which it is refused."""

from __future__ import annotations

from typing import Any


def variant(tcp: str) -> dict[str, Any]:
    if tcp == "dctcp":
        return dict(tcp=dict(cc="dctcp", recovery="sack", ecn=True), queue=dict(name="step", k_pkts=3))
    return dict(tcp=tcp)
