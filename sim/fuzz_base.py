"""What the two fuzzes share (`sim/fuzz.py`, the front door's; `sim/fuzz_cost.py`, the hostile
one): the small valid run each config starts from, and the checks of a result and of a refusal.
docs/engine.md, "Fuzzed".
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import sim


def base_config(rng: random.Random) -> dict[str, Any]:
    """A small valid run (a few flows, 3 s) for a fuzz to change one to three things in."""
    return dict(
        flows=rng.randint(1, 8),
        core_mbps=rng.choice([1.0, 10.0]),
        duration_s=3.0,
        warmup_s=1.0,
        start_window_s=0.5,
        rtt_ms=rng.choice([20.0, 100.0]),
        seed=rng.randint(0, 1000),
    )


def check_result(res: sim.SimResult) -> str:
    """'' if the tables are in range, else what is not."""
    m = res.metrics()
    problems = [f"summary {k} = {v}" for k, v in m.items() if isinstance(v, float) and math.isnan(v)]
    for table, cols in (
        ("summary", ("utilization", "loss_rate", "access_loss_rate")),
        ("links", ("utilization", "loss_rate")),
        ("timeseries", ("utilization",)),
    ):
        t = res.summary if table == "summary" else getattr(res, table)
        for c in cols:
            bad = [v for v in t.column(c).to_pylist() if v is not None and not (0.0 <= v <= 1.0)]
            if bad:
                problems.append(f"{table}.{c} outside [0, 1]: {bad[:3]}")
    return "; ".join(problems)


def names_its_key(msg: str) -> bool:
    """A refusal as the front door gives it: one line that starts with the dotted key."""
    return bool(re.match(r"^[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*: ", msg)) and "\n" not in msg
