"""Random-config fuzz of the engine's front door: `python -m sim.fuzz [--configs N] [--seed S]`
(`--hostile`: resource-hostile configs against their cost estimates, `sim/fuzz_cost.py`).

Each config is a small valid run with one to three parameters replaced, drawn from every
parameter the schema declares (top-level keys, every `tcp` key, the parking lot's links and
routes, buffer policies): a bound, a value inside the bounds, or a value outside
them or of the wrong type (bools for numbers, strings, NaN, infinities, 2^63, floats for ints).
Every config runs under a wall-clock limit, and the outcome must be one of:

- refused: `ValueError` whose single line starts with the dotted key it is about;
- finished: utilization and loss rates in [0, 1] in every table, no NaN in the summary;
- over the time limit, only if the config is big (its links' capacity over its duration is
  above `BIG_PKTS` packets); a small config over the limit is reported as a hang.

Anything else (a panic, another exception, a number out of range) is a failure. The bounds come
from the schema's `allowed` texts, so a new parameter is fuzzed without a line here.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

import sim
from sim import schema
from sim.fuzz_base import base_config, check_result, names_its_key
from sim.fuzz_cost import FUZZ_LIMITS
from sim.fuzz_cost import fuzz as fuzz_hostile

BIG_PKTS = 5e6
"""Packets a config must be able to send to be excused for outliving the time limit."""

_NUM = r"(-?[\d.]+(?:e[+-]?\d+)?|-2\^63|2\^63)"


class _TimeLimit(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    # Raised inside sim.run: the engine checks signals every 2^18 events and stops.
    raise _TimeLimit


def _num(text: str) -> float:
    return {"-2^63": -(2.0**63), "2^63": 2.0**63}.get(text) or float(text)


def bounds(allowed: str) -> tuple[float, float, bool] | None:
    """(low, high, integer) from a schema `allowed` text, if it states numeric bounds."""
    if m := re.search(rf"integer in \[{_NUM}, {_NUM}\]", allowed):
        return _num(m[1]), _num(m[2]), True
    if m := re.search(rf"number in \[{_NUM}, {_NUM}\]", allowed):
        return _num(m[1]), _num(m[2]), False
    if m := re.search(rf"(>=?) 0(?: \(at least {_NUM}\))? and <= {_NUM}", allowed):
        low = _num(m[2]) if m[2] else (0.0 if m[1] == ">=" else 1e-9)
        return low, _num(m[3]), False
    return None


def values(spec: dict[str, Any], rng: random.Random) -> tuple[list[Any], list[Any]]:
    """Candidate values for one parameter: (inside its bounds, outside them or of the wrong type)."""
    t = spec["type"]
    optional = t["type"] == "optional"
    kind = t["of"]["type"] if optional else t["type"]
    good: list[Any] = [None] if optional else []
    bad: list[Any] = ([] if optional else [None]) + ["1", float("nan"), float("inf"), -float("inf"), [1]]
    b = bounds(spec["allowed"])
    if kind in ("int", "float") and b:
        lo, hi, integer = b
        inside = math.exp(rng.uniform(math.log(max(lo, 1e-3)), math.log(max(hi, 1e-3) + 1)))
        as_type = (lambda x: int(x)) if integer else float
        good += [as_type(lo), as_type(hi), as_type(min(max(inside, lo), hi))]
        bad += [as_type(lo - 1), as_type(hi * 10), True] + ([1.5, 2**63, -(2**63) - 1] if integer else [])
    elif kind == "bool":
        good += [True, False]
        bad += [0, 1, "true"]
    elif kind == "str":
        good += [spec["default"]] + [a.strip() for a in spec["allowed"].removeprefix("one of ").split(",") if a]
        bad += ["nonesuch", 3]
    elif kind == "list":
        good.append(spec["default"])
        bad += [[], [[1, 2]], "123", [-1.0], [True]]
    return good, bad


def pick(spec: dict[str, Any], rng: random.Random) -> Any:
    good, bad = values(spec, rng)
    return rng.choice(good if good and rng.random() < 0.6 else bad)


@dataclass
class Outcome:
    config: dict[str, Any]
    kind: str  # "refused" | "finished" | "long" | "failure"
    detail: str = ""
    keys: list[str] = field(default_factory=list)


def _topology(rng: random.Random) -> dict[str, Any]:
    def link() -> dict[str, Any]:
        values = dict(
            rate_mbps=rng.choice([None, 0.0, 0.001, 5.0, -1.0, 1e8]),
            delay_ms=rng.choice([None, 0.0, 5.0, -1.0, 1e7]),
            buffer_pkts=rng.choice([None, 0, 10, -3, 2**63]),
        )
        return {k: v for k, v in values.items() if v is not None or rng.random() < 0.2}

    topo: dict[str, Any] = {"name": rng.choice(["parking_lot", "parking_lot", "dumbbell", "ring"])}
    if rng.random() < 0.7:
        topo["links"] = [link() for _ in range(rng.choice([0, 1, 2, 3, 17]))]
    if rng.random() < 0.5:
        topo["routes"] = [
            {"links": rng.choice([[0], [1], [0, 1], [2], [], [0, 0], ["a"]]), "flows": rng.choice([0, 1, 3, -1])}
            for _ in range(rng.choice([0, 1, 3]))
        ]
    return topo


def _policy(rng: random.Random) -> dict[str, Any]:
    steps = rng.choice([[], [(0.0, 5)], [(0.0, 5), (1.0, 2.7)], [(-1.0, 3)], [(0.5, -2)], [(0.0, 2**63)], "x"])
    name = rng.choice(["schedule", "abs", "adt", "bscl", "stanford", "enachescu", "fixed", "abs9000"])
    p: dict[str, Any] = {"name": name, "interval_ms": rng.choice([100.0, 200.0, 0.0, 1e-9, 1e7])}
    if name == "schedule":
        p["steps"] = steps
    elif name in ("abs", "adt"):
        p["target_util"] = rng.choice([0.95, 1.0, 0.0, 1.5])
        p["gain" if name == "adt" else "gain_util"] = rng.choice([100.0, 0.0, -1.0, 1e13])
    elif name == "bscl":
        p["target_loss"] = rng.choice([0.02, 0.0, 1.0])
    elif name != "fixed":
        p["factor"] = rng.choice([1.0, 2.0, 0.0, 1e7])
    return p


def _traffic(rng: random.Random) -> list[Any]:
    """Traffic groups of every kind, with values inside, at and beyond their bounds."""

    def group() -> Any:
        kind = rng.choice(["bulk", "http", "pareto", "udp", "ftp", None])
        g: dict[str, Any] = {} if kind is None else {"kind": kind}
        options = {
            "bulk": {"flows": [1, 3, 0, -1], "schedule": [None, [], [(0.5, 1)], [(1.0, 0), (0.5, 1)], [(0.5, 99)]]},
            "http": {
                "sessions": [1, 5, 0],
                "pages_max": [3, 2000, 0],
                "arrival": ["all", "poisson", "x"],
                "arrival_rate_per_s": [10.0, 0.0, 1e12],
                "object_shape": [1.2, 1.0, 0.5],
                "inter_object_s": [0.01, 0.0, 1e9],
            },
            "pareto": {
                "load_mbps": [0.5, 0.0, -1.0, 1e8],
                "shape": [1.5, 1.0, 0.5],
                "size": ["pareto", "fixed", "x"],
                "size_pkts": [1, 0, 2**40],
                "mean_bytes": [1.0, 1e5, 0.0],
            },
            "udp": {
                "flows": [1, 20, 0],
                "rate_mbps": [0.1, 0.0, -1.0, 1e9],
                "pattern": ["cbr", "poisson", "x"],
                "pkt_bytes": [None, 1, 0, 70_000],
            },
        }.get(kind or "bulk", {})
        for key, values in options.items():
            if rng.random() < 0.5:
                g[key] = rng.choice(values)
        if rng.random() < 0.3:
            g["route"] = rng.choice([[0], [1], [0, 1], [], [2], "x"])
        if rng.random() < 0.2:
            g["tcp"] = rng.choice(["cubic", "vegas", {"cc": "newreno", "recovery": "sack"}])
        return g if rng.random() < 0.95 else "x"

    return [group() for _ in range(rng.choice([0, 1, 2, 3]))]


def _queue(rng: random.Random) -> Any:
    """A queue discipline of the registry with some of its parameters fuzzed."""
    v = rng.choice(schema.unions()["queue"]["variants"])
    q = {"name": v["name"], **{s["key"]: pick(s, rng) for s in v["fields"] if rng.random() < 0.5}}
    return q if rng.random() < 0.95 else "x"


def mutate(cfg: dict[str, Any], rng: random.Random) -> list[str]:
    """Replaces one parameter of `cfg` with a fuzzed value; returns the dotted key."""
    sections = ("tcp", "topology", "buffer_policy", "queue", "traffic")
    top = [s for s in schema.CONFIG["fields"] if s["key"] not in sections]
    choice = rng.random()
    if choice < 0.12:
        cfg["topology"] = _topology(rng)
        return ["topology"]
    if choice < 0.16:
        cfg["traffic"] = _traffic(rng)
        return ["traffic"]
    if choice < 0.2:
        cfg["buffer_policy"] = _policy(rng)
        return ["buffer_policy"]
    if choice < 0.26:
        cfg["queue"] = _queue(rng)
        if rng.random() < 0.7:  # mostly with ECN senders, so that marking queues run
            base = cfg["tcp"] if isinstance(cfg.get("tcp"), dict) else {"cc": "newreno"}
            cfg["tcp"] = {**base, "ecn": True}
        return ["queue"]
    if choice < 0.4:
        tcp = schema.unions()["tcp"]
        spec = rng.choice(schema.union_specs(tcp))
        base = cfg["tcp"] if isinstance(cfg.get("tcp"), dict) else {"cc": "newreno"}
        cfg["tcp"] = {**base, spec["key"]: pick(spec, rng)}
        return [f"tcp.{spec['key']}"]
    spec = rng.choice(top)
    cfg[spec["key"]] = pick(spec, rng)
    return [spec["key"]]


def _capacity_pkts(cfg: dict[str, Any]) -> float:
    """Packets the config's fastest link could send over its duration (an upper bound on work)."""

    def num(v: Any, default: float) -> float:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else default

    rates = [num(cfg.get("core_mbps"), 100.0), num(cfg.get("access_mbps"), 0.0)]
    for key in ("poisson_mbps", "cbr_mbps", "short_mbps"):
        rates.append(num(cfg.get(key), 0.0))
    topo = cfg.get("topology")
    if isinstance(topo, dict) and isinstance(topo.get("links"), list):
        rates += [num(link.get("rate_mbps"), 100.0) for link in topo["links"] if isinstance(link, dict)]
    pkt = max(num(cfg.get("pkt_bytes"), 1000.0), 1.0)
    flows = max(num(cfg.get("flows"), 1.0), 1.0)
    return max(rates) * 1e6 / 8 / pkt * num(cfg.get("duration_s"), 60.0) + flows * 100


def run_one(cfg: dict[str, Any], keys: list[str], limit_s: float) -> Outcome:
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        res = sim.run(**cfg)
    except _TimeLimit:
        big = _capacity_pkts(cfg) > BIG_PKTS
        return Outcome(cfg, "long" if big else "failure", "" if big else f"hang: over {limit_s} s", keys)
    except ValueError as e:
        msg = str(e)
        named = names_its_key(msg)
        return Outcome(cfg, "refused" if named else "failure", msg if named else f"unnamed refusal: {msg!r}", keys)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return Outcome(cfg, "failure", f"{type(e).__name__}: {e}", keys)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    problem = check_result(res)
    return Outcome(cfg, "failure" if problem else "finished", problem, keys)


def fuzz(n: int, seed: int, limit_s: float = 2.0) -> list[Outcome]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        cfg = base_config(rng)
        keys = [k for _ in range(rng.choice([1, 1, 2, 3])) for k in mutate(cfg, rng)]
        out.append(run_one(cfg, keys, limit_s))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit-s", type=float, default=2.0, help="wall-clock limit per config")
    parser.add_argument(
        "--hostile", action="store_true", help="resource-hostile configs, each within 3x of its estimate (fuzz_cost)"
    )
    args = parser.parse_args()
    if args.hostile:
        _main_hostile(args.configs, args.seed)
    outcomes = fuzz(args.configs, args.seed, args.limit_s)
    counts = {k: sum(o.kind == k for o in outcomes) for k in ("refused", "finished", "long", "failure")}
    keys = sorted({k.split(".")[0] if not k.startswith("tcp.") else k for o in outcomes for k in o.keys})
    print(f"{len(outcomes)} configs (seed {args.seed}): " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print(f"parameters fuzzed ({len(keys)}): {', '.join(keys)}")
    for o in outcomes:
        if o.kind == "failure":
            print(f"FAILURE {o.detail}\n  {json.dumps(o.config, default=str)}")
    sys.exit(1 if counts["failure"] else 0)


def _main_hostile(n: int, seed: int) -> None:
    outcomes = fuzz_hostile(n, seed)
    counts = {k: sum(o[2] == k for o in outcomes) for k in ("refused", "finished", "failure")}
    print(
        f"{n} hostile configs (seed {seed}, limits {FUZZ_LIMITS.max_events:g} events, "
        f"{FUZZ_LIMITS.max_memory_gb:g} GB): " + ", ".join(f"{v} {k}" for k, v in counts.items())
    )
    for cfg, keys, kind, detail in outcomes:
        if kind == "failure":
            print(f"FAILURE ({keys}) {detail}\n  {json.dumps(cfg, default=str)}")
    sys.exit(1 if counts["failure"] else 0)


if __name__ == "__main__":
    main()
