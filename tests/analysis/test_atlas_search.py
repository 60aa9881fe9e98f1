"""The atlas's per-cell search (analysis/atlas/search.py) against utilization curves given by
hand, noiseless or with seeds drawn around them: it brackets from the first guess, bisects on a
log scale to RESOLUTION, shares probes between targets, adds seeds where a probe is within noise,
answers a point inside a bracket its intervals support, and flags what it cannot answer."""

import math
import random

from analysis.atlas.build import CellState
from analysis.atlas.build import answers as answers_of
from analysis.atlas.search import RESOLUTION, Answer, Ask, Probe, step
from analysis.atlas.spec import Cell, load
from sim._core import t_interval


def run(curve, targets, start=100, cap=800, seeds=(1, 1), sigma=0.0, far=None):
    """Drives every target's search over one shared probe map, as the atlas's rounds do. With
    `seeds` (first, most) above one, each seed reads the curve plus a draw of sd `sigma`; `far`:
    how a one-seed probe decides (`search.side`)."""
    runs: dict[int, list[float]] = {}
    probes: dict[int, Probe] = {}
    for _ in range(200):
        asks = [a for t in targets if isinstance(a := step(probes, t, start, cap, seeds, far), Ask)]
        if not asks:
            break
        for a in asks:
            have = runs.setdefault(a.buffer_pkts, [])
            while len(have) < a.seeds:
                rng = random.Random(a.buffer_pkts * 1000 + len(have))
                have.append(curve(a.buffer_pkts) + rng.gauss(0, sigma))
            iv = t_interval(have, 0.95) if seeds[1] > 1 and len(have) > 1 else None
            mean = iv[0] if iv else sum(have) / len(have)
            probes[a.buffer_pkts] = Probe(mean, iv[1] if iv else None, len(have))
    answers = {t: step(probes, t, start, cap, seeds, far) for t in targets}
    assert all(isinstance(a, Answer) for a in answers.values()), "every search ends"
    return probes, answers


CELL = Cell("sack", "droptail", 16, 10.0, 50.0)


def saturating(knee: float):
    return lambda b: min(1.0, 0.8 + 0.2 * b / knee)


def test_finds_the_smallest_buffer_within_the_resolution_and_shares_probes():
    curve = saturating(37.0)  # 0.95 at 27.75, 0.99 at 35.15
    probes, answers = run(curve, (0.90, 0.95, 0.99))
    for t, a in answers.items():
        assert a.buffer_pkts is not None and not a.flags and a.confidence is None  # one seed: no interval
        assert curve(a.hi) >= t and curve(a.lo) < t and a.lo < a.buffer_pkts <= a.hi
        assert a.hi / a.lo <= RESOLUTION or a.hi - a.lo <= 1
        assert curve(a.buffer_pkts) >= t > curve(a.buffer_pkts - 1) - 0.01  # the crossing, to a packet
    alone = sum(len(run(curve, (t,))[0]) for t in (0.90, 0.95, 0.99))
    assert len(probes) < alone, "three targets share their probes"


def test_grows_from_a_guess_that_misses():
    _, answers = run(saturating(700.0), (0.95,))
    a = answers[0.95]
    assert a.buffer_pkts is not None and a.lo < 525 <= a.hi <= 525 * RESOLUTION


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
    probes, _ = run(curve, (0.95,), start=100)
    probes[150] = Probe(0.90)  # a probe above, as a rebuilt atlas may hold
    assert "non_monotone" in step(probes, 0.95, 100, 800, (1, 1)).flags


def test_noisy_probes_get_seeds_and_the_bracket_holds_the_crossing():
    """Seeds of sd 0.01 around a curve that crosses 0.95 at 27.75 packets: every probe starts on
    two seeds, one within noise of the target gets more, and the answer's bracket, at 95% on
    both ends, holds the true crossing."""
    curve = saturating(37.0)
    probes, answers = run(curve, (0.95,), seeds=(2, 8), sigma=0.01)
    a = answers[0.95]
    assert a.confidence == 0.95 and a.lo < 27.75 <= a.hi, a
    assert max(p.seeds for p in probes.values()) > 2, "a probe near the target got more seeds"
    assert min(p.seeds for p in probes.values()) == 2, "a probe far from it kept two"


def test_one_seed_decides_only_far_from_the_target_and_its_ends_count_as_confident():
    """Starting on one seed (as `small` does): a probe whose idle fraction is under half or over
    twice the target's decides alone; nearer, it takes seeds. The answer's bracket, decided so at
    both ends, holds the crossing at 95%; without `far` the same one-seed ends would not."""
    curve = saturating(37.0)  # 0.95 at 27.75
    probes, answers = run(curve, (0.95,), seeds=(1, 6), sigma=0.005, far=2)
    a = answers[0.95]
    assert a.confidence == 0.95 and a.lo < 27.75 <= a.hi, a
    for b, p in probes.items():
        idle = 1 - curve(b)
        if p.seeds == 1:
            assert idle <= 0.05 / 2 or idle > 0.05 * 2, (b, p)  # decided alone only far from 0.95
        elif 0.05 / 2 + 0.02 < idle < 0.05 * 2 - 0.02:
            assert p.seeds >= 2
    assert any(p.seeds == 1 for p in probes.values()) and any(p.seeds > 1 for p in probes.values())
    steep = lambda b: 0.85 if b < 28 else 0.995  # noqa: E731  every probe far from 0.95: one seed each
    probes, answers = run(steep, (0.95,), seeds=(1, 6), sigma=0.002, far=2)
    a = answers[0.95]
    assert a.lo < 28 <= a.hi <= a.lo * RESOLUTION and a.confidence == 0.95, a
    assert all(p.seeds == 1 for p in probes.values())
    assert step(probes, 0.95, 100, 800, (1, 6)).confidence is None, "one seed without `far` is not confident"
    spec = load(["+atlas=small"])  # the build's answers decide as its search did: `far` from the preset
    (_, _, built), *_ = [x for x in answers_of(spec, [CellState(CELL, 100, 800, probes=probes)]) if x[1] == 0.95]
    assert (built.lo, built.hi, built.confidence) == (a.lo, a.hi, 0.95)


def test_a_curve_flatter_than_the_noise_is_undecidable_and_the_bracket_is_the_answer():
    """From 0.94 to 0.96 over 16 to 64 packets with seeds of sd 0.05: eight seeds cannot place the
    crossing (at 32), so the answer is a bracket wider than a step, flagged, that holds it."""
    curve = lambda b: min(1.0, 0.5 + 0.45 * b / 16) if b < 16 else min(1.0, 0.94 + 0.02 * math.log2(b / 16) / 2)  # noqa: E731
    _, answers = run(curve, (0.95,), seeds=(2, 8), sigma=0.05)
    a = answers[0.95]
    assert "undecidable" in a.flags and a.hi / a.lo > RESOLUTION and a.lo < 32 <= a.hi, a
    assert a.buffer_pkts is not None and a.lo < a.buffer_pkts <= a.hi and "the bracket is the answer" in a.reason


def test_a_failed_run_is_a_failed_answer():
    assert step({100: Probe(math.nan)}, 0.95, 100, 800, (1, 1)).flags == ["failed"]


def test_a_cells_search_starts_at_the_stanford_rule():
    """BDP / sqrt(N): the BDP for one flow, a sixteenth of it for 256."""
    small = load(["+atlas=small"])
    one, many = Cell("cubic", "droptail", 1, 1000.0, 200.0), Cell("cubic", "droptail", 256, 1000.0, 200.0)
    assert small.first_guess(one) == round(small.bdp(one)) == 16667
    assert small.first_guess(many) == round(small.bdp(many) / 16) == 1042
