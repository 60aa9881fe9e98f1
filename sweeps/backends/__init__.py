"""Simulator backends: the same config run on our engine, on ns-2, on ns-3, or on this host's
Linux TCP in real time (`backend=` in a sweep). One module each (see `base.Backend`) and one line here."""

from __future__ import annotations

from sweeps.backends import engine, kernel, ns2, ns3
from sweeps.backends.base import Backend, BackendResult

BACKENDS: dict[str, Backend] = {b.name: b for b in (engine.BACKEND, ns2.BACKEND, ns3.BACKEND, kernel.BACKEND)}
DEFAULT = "engine"


def get(name: str) -> Backend:
    """The backend called name; ValueError naming `backend` and the allowed values otherwise."""
    if name not in BACKENDS:
        raise ValueError(f"backend: unknown backend {name!r}; allowed: {', '.join(BACKENDS)}")
    return BACKENDS[name]


__all__ = ["BACKENDS", "DEFAULT", "Backend", "BackendResult", "get"]
