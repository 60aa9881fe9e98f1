"""`python -m analysis atlas build|estimate|query|check ...` (docs/atlas.md)."""

from __future__ import annotations

from analysis.atlas.spec import AtlasSpec, load

EXPECTED_PROBES_PER_CELL = 9
"""Distinct buffers a cell's three targets take, for the estimate (a small atlas's mean, measured)."""


def estimate(spec: AtlasSpec) -> tuple[int, float]:
    """(cells, estimated core-hours): each cell's first probe costed by `sim.estimate`, times the
    probes a cell takes and the seeds."""
    import sim
    from analysis.atlas.probes import AtlasJobs
    from sweeps.schema import build_spec

    cells = spec.cells()
    jobs = AtlasJobs(spec, [(c, spec.first_guess(c), spec.seeds[0]) for c in cells], {})
    wall_s = sum(sim.estimate(build_spec(jobs.job(a)).sim).wall_s for a in jobs.asked)
    return len(cells), wall_s * EXPECTED_PROBES_PER_CELL * len(spec.seeds) / 3600


def build(args: list[str]) -> int:
    from rich.console import Console

    from analysis.atlas.build import answers, search
    from analysis.atlas.probes import atlas_ray
    from analysis.atlas.publish import publish
    from analysis.atlas.table import rows, write

    spec = load(args)
    cells, core_h = estimate(spec)
    console = Console(stderr=True)
    console.print(f"atlas {spec.name}: {cells} cells x {len(spec.targets)} targets, about {core_h:.2f} core-hours")
    with console.status(f"atlas {spec.name}: starting Ray...") as status, atlas_ray(spec):

        def progress(round_no: int, decided: int, total: int) -> None:
            status.update(f"atlas {spec.name}: round {round_no}, {decided} of {total} cells decided")

        states, stats = search(spec, progress)
    answered = answers(spec, states)
    table = rows(spec, answered)
    path = write(spec.results_dir, spec.name, table)
    outputs = publish(spec, table)
    flagged = sum(1 for _, _, a in answered if a.flags)
    print(
        f"atlas {spec.name}: {stats.cells} cells, {stats.rounds} rounds, {stats.probes} probes "
        f"({stats.runs_new} runs simulated now, {stats.packets:.3g} packets), {stats.wall_s:.0f} s; "
        f"{flagged} of {len(answered)} answers flagged -> {path}"
    )
    for out in outputs:
        print(f"  {out}")
    return 0


def main(action: str, args: list[str]) -> int:
    if action == "build":
        return build(args)
    if action == "estimate":
        spec = load(args)
        cells, core_h = estimate(spec)
        print(f"atlas {spec.name}: {cells} cells x {len(spec.targets)} targets, about {core_h:.2f} core-hours")
        return 0
    if action == "check":
        from analysis.atlas.check import main as check

        return check(args)
    from analysis.atlas.query import main as query

    return query(args)
