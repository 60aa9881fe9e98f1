"""`python -m analysis atlas build|estimate|query|check ...` (docs/atlas.md)."""

from __future__ import annotations

import time
from typing import Any

from analysis.atlas.spec import AtlasSpec, load

BUILD_OVER_FIRST_PROBES = 11.5
"""A build's runs cost this many times its cells' first probes as `sim.estimate` costs them:
measured on `small` (engine 0.22.0: 92.4 core-minutes of runs, 14,144 runs of 5,147 probes,
against 483 s estimated for its 576 first probes on one seed; docs/atlas.md, "Measured")."""


def estimate(spec: AtlasSpec) -> tuple[int, float]:
    """(cells, estimated core-hours): each cell's first probe on one seed costed by `sim.estimate`,
    times what a small atlas's whole search measured to cost over that (BUILD_OVER_FIRST_PROBES)."""
    import sim
    from analysis.atlas.probes import AtlasJobs
    from sweeps.schema import build_spec

    cells = spec.cells()
    jobs = AtlasJobs(spec, [(c, spec.first_guess(c), spec.seeds[0]) for c in cells], {})
    wall_s = sum(sim.estimate(build_spec(jobs.job(a)).sim).wall_s for a in jobs.asked)
    return len(cells), wall_s * BUILD_OVER_FIRST_PROBES / 3600


def cost_text(core_h: float) -> str:
    """`about 1,005 core-hours`, or `about 3 min of one core` for a small build."""
    from sweeps.launch import duration_text

    return f"about {core_h:,.0f} core-hours" if core_h >= 10 else f"about {duration_text(core_h * 3600)} of one core"


def build(args: list[str]) -> int:
    from rich.console import Console

    from analysis.atlas.build import answers, search
    from analysis.atlas.probes import atlas_ray
    from analysis.atlas.publish import publish
    from analysis.atlas.table import rows, write
    from sweeps.heartbeat import Heartbeat, clock, eta_text

    spec = load(args)
    cells, core_h = estimate(spec)
    console = Console(stderr=True)
    console.print(f"atlas {spec.name}: {cells} cells x {len(spec.targets)} targets, {cost_text(core_h)}")
    now: dict[str, Any] = {"round": 0, "decided": 0, "total": cells, "stats": None, "at": time.monotonic()}

    def progress(round_no: int, decided: int, total: int, stats: Any) -> None:
        now.update({"round": round_no, "decided": decided, "total": total, "stats": stats, "at": time.monotonic()})
        now["counts"] = None

    def describe() -> str:
        st, counts, running = now["stats"], now.get("counts"), time.monotonic() - now["at"]
        done = f", {st.probes} probes, {st.runs_new} runs simulated, {st.packets:.3g} packets" if st else ""
        runs = ""
        if counts is not None:  # the round's sweep: its runs so far, and when it should end
            finished = counts.ok + counts.failed
            eta = eta_text(running, finished, counts.total - counts.cached)
            runs = f": {finished + counts.cached} of {counts.total} runs, {eta} for the round"
        return (
            f"atlas {spec.name}: round {now['round']} ({clock(running)}{runs}), "
            f"{now['decided']} of {now['total']} cells decided{done}"
        )

    with Heartbeat(console, describe), atlas_ray(spec):
        states, stats = search(spec, progress, watch=lambda counts: now.update(counts=counts))
    answered = answers(spec, states)
    table = rows(spec, answered)
    path = write(spec.results_dir, spec.name, table)
    outputs = publish(spec, table, states)
    flagged = sum(1 for _, _, a in answered if a.flags)
    print(
        f"atlas {spec.name}: {stats.cells} cells, {stats.rounds} rounds, {stats.probes} probes, {stats.runs} runs "
        f"({stats.runs_new} simulated now, {stats.packets:.3g} packets), {stats.wall_s:.0f} s; "
        f"{flagged} of {len(answered)} answers flagged -> {path}"
    )
    for out in outputs:
        print(f"  {out}")
    return 0


def add_parsers(sub: Any) -> None:
    """`atlas build|estimate|query|check`, each with its own help naming its keys (from the
    modules that read them)."""
    from analysis.atlas.check import OWN
    from analysis.atlas.lookup import KEYS
    from analysis.atlas.spec import AXES, CONF_DIR, SETTINGS

    presets = ", ".join(sorted(p.stem for p in (CONF_DIR / "atlas").glob("*.yaml")))
    spec_keys = (
        f"+atlas=NAME (a preset of conf/atlas/: {presets}; atlas=NAME works too); axis overrides "
        f"{', '.join(f'{a}=' for a in AXES)} (comma lists); settings {', '.join(f'{s}=' for s in SETTINGS)}; "
        "results_dir=; any other sweep key (pkt_bytes=1500) for every probe."
    )
    at = sub.add_parser("atlas", help="the buffer atlas: build, estimate, query or check (docs/atlas.md)")
    actions = at.add_subparsers(dest="action", required=True, metavar="{build,estimate,query,check}")
    helps = {
        "build": ("search every cell's minimum buffer and write the atlas table and page", spec_keys),
        "estimate": ("the cells and core-hours a build would take, running nothing", spec_keys),
        "query": (
            "the minimum buffer at a point, measured or interpolated from the built atlas",
            f"keys: {', '.join(f'{k}=' for k in KEYS)}. tcp, queue, flows, core_mbps, rtt_ms and target are "
            "required; traffic defaults to none; atlas=NAME (or +atlas=NAME) picks one built atlas. Example: "
            "query tcp=cubic queue=droptail flows=300 core_mbps=1000 rtt_ms=80 target=0.95",
        ),
        "check": (
            "random cells of a built atlas: their brackets' ends probed again by long runs on new seeds",
            f"keys: {', '.join(f'{k}=' for k in OWN)} (whole numbers), and {spec_keys}",
        ),
    }
    for action, (summary, keys) in helps.items():
        a = actions.add_parser(action, help=summary, description=f"{summary}. {keys}")
        a.add_argument("overrides", nargs="*", metavar="key=value", help="see above")
        if action == "query":
            a.add_argument("--format", choices=("text", "json"), default="text", help="json: for scripts")
        a.set_defaults(fn=lambda args, action=action: main(action, args.overrides, getattr(args, "format", "text")))


def main(action: str, args: list[str], fmt: str = "text") -> int:
    if action == "build":
        return build(args)
    if action == "estimate":
        spec = load(args)
        cells, core_h = estimate(spec)
        print(f"atlas {spec.name}: {cells} cells x {len(spec.targets)} targets, {cost_text(core_h)}")
        return 0
    if action == "check":
        from analysis.atlas.check import main as check

        return check(args)
    from analysis.atlas.lookup import main as query

    return query(args, fmt)
