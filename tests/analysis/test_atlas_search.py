"""The atlas's per-cell search (analysis/atlas/search.py) against utilization curves given by
hand: it brackets from the first guess, bisects on a log scale to RESOLUTION, shares probes
between targets, and flags what it cannot answer."""

import math

from analysis.atlas.search import RESOLUTION, Probe, decided, next_buffer


def run(curve, targets, start=100, cap=800):
    """Drives every target's search over one shared probe map, as the atlas's rounds do."""
    probes: dict[int, Probe] = {}
    for _ in range(64):
        asked = {next_buffer(probes, t, start, cap) for t in targets} - {None}
        if not asked:
            break
        for b in asked:
            probes[b] = Probe(curve(b))
    return probes, {t: decided(probes, t, cap) for t in targets}


def saturating(knee: float):
    return lambda b: min(1.0, 0.8 + 0.2 * b / knee)


def test_finds_the_smallest_buffer_within_the_resolution_and_shares_probes():
    curve = saturating(37.0)  # 0.95 at 27.75, 0.99 at 35.15
    probes, answers = run(curve, (0.90, 0.95, 0.99))
    for t, a in answers.items():
        assert a is not None and a.buffer_pkts is not None and not a.flags
        assert curve(a.buffer_pkts) >= t and curve(a.lo) < t
        assert a.buffer_pkts / a.lo <= RESOLUTION or a.buffer_pkts - a.lo <= 1
    alone = sum(len(run(curve, (t,))[0]) for t in (0.90, 0.95, 0.99))
    assert len(probes) < alone, "three targets share their probes"


def test_grows_from_a_guess_that_misses():
    _, answers = run(saturating(700.0), (0.95,))
    a = answers[0.95]
    assert a.buffer_pkts is not None and 525 <= a.buffer_pkts <= 525 * RESOLUTION


def test_a_plateau_below_the_target_is_unreachable_with_its_utilization():
    probes, answers = run(lambda b: 0.83, (0.9,))
    a = answers[0.9]
    assert a.buffer_pkts is None and a.flags == ["unreachable"] and "0.8300" in a.reason
    assert max(probes) == 200, "one doubling shows the plateau"


def test_the_cap_ends_a_search_that_keeps_gaining():
    _, answers = run(lambda b: 0.5 + b / 4000, (0.99,))
    assert answers[0.99].flags == ["unreachable"] and "the cap" in answers[0.99].reason


def test_a_miss_above_the_answer_is_flagged_non_monotone():
    curve = lambda b: 0.97 if b < 60 or b > 90 else 0.90  # noqa: E731
    probes, answers = run(curve, (0.95,), start=100)
    probes[150] = Probe(0.90)  # a probe above, as a rebuilt atlas may hold
    assert "non_monotone" in decided(probes, 0.95, 800).flags


def test_a_probe_within_its_interval_of_the_target_is_undecidable():
    probes = {100: Probe(0.951, halfwidth=0.004)}
    a = decided(probes, 0.95, 800)
    assert a.buffer_pkts is None and a.flags == ["undecidable"]
    assert decided({100: Probe(math.nan)}, 0.95, 800).flags == ["failed"]
