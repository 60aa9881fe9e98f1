"""Do the intervals of precision-stopped runs cover the long-run value? (issue 57, acceptance 1;
docs/precision.md, "Coverage"). For each config: one long run gives the long-run value (20,000 s
by default: at 3,000 s one run's own error in Dick's utilization, 0.0008, was a third of the
half-width asked); N runs with seeds 1..N stop at their precision target; count the 95%
intervals that hold it.

The flows' RTTs are fixed (evenly spaced over the preset's range) rather than drawn per seed: a
run's interval is about that run's own long-run value, and seeds that drew different RTTs have
different ones (the spread across seeds is what replications, `precision.max_seeds`, are for).

`python -m bench.coverage [--runs 200] [--ref-s 20000]`; a few minutes on 2 cores."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

import sim


def _spread(n: int, low_ms: float, high_ms: float) -> list[float]:
    return [low_ms + (high_ms - low_ms) * (i + 0.5) / n for i in range(n)]


BBR_TCP = {"cc": "bbr", "recovery": "rack_tlp", "release": "paced", "init_cwnd_pkts": 10}
CONFIGS: dict[str, tuple[dict, dict]] = {
    # Dick (2005): 60 Reno flows at 45 Mb/s, RTTs 80-120 ms, 0.5 x 562.5 pkts / sqrt(60) = 36 pkts.
    "dick_reno_60_0.5x": (
        dict(
            tcp="reno",
            flows=60,
            core_mbps=45,
            rtts_ms=_spread(60, 80, 120),
            pkt_bytes=1000,
            wmax_pkts=10000,
            buffer_pkts=36,
            start_window_s=1,
        ),
        dict(metrics=["utilization", "loss_rate"], halfwidth=[0.005, 0.001]),
    ),
    # 8 CUBIC flows, RTTs 20-200 ms, through CoDel at 20 Mb/s with a 1-BDP (110 ms) buffer.
    "cubic_8_codel": (
        dict(
            tcp="cubic_2622",
            queue="codel",
            flows=8,
            core_mbps=20,
            rtts_ms=_spread(8, 20, 200),
            pkt_bytes=1500,
            wmax_pkts=100000,
            buffer_pkts=183,
            start_window_s=5,
        ),
        dict(metrics=["utilization", "mean_queue_delay_ms"], halfwidth=[0.005, 0.5]),
    ),
    # 4 BBR flows of one 40-ms RTT at 10 Mb/s, a 0.5-BDP drop-tail buffer (17 pkts).
    "bbr_4_0.5bdp": (
        dict(
            tcp=BBR_TCP,
            flows=4,
            core_mbps=10,
            rtt_ms=40,
            pkt_bytes=1500,
            wmax_pkts=100000,
            buffer_pkts=17,
            start_window_s=1,
        ),
        dict(metrics=["utilization", "mean_queue_delay_ms"], halfwidth=[0.005, 0.5]),
    ),
}
MAX_DURATION_S = 1000.0


def _summary(args: tuple[str, int, float | None]) -> dict:
    name, seed, ref_s = args
    base, target = CONFIGS[name]
    if ref_s:  # the long-run value: a fixed run, its first 10% cut as warm-up
        return sim.run(**base, seed=seed, duration_s=ref_s, warmup_s=ref_s / 10).summary.to_pylist()[0]
    precision = {**target, "max_duration_s": MAX_DURATION_S}
    return sim.run(**base, seed=seed, duration_s=60, precision=precision).summary.to_pylist()[0]


def coverage(name: str, runs: int, ref_s: float, pool) -> None:
    t0 = time.monotonic()
    ref = _summary((name, 100_000, ref_s))
    rows = pool.map(_summary, [(name, s, None) for s in range(1, runs + 1)], chunksize=1)
    stopped = sum(r["stop_reason"] == "precision" for r in rows)
    measured = sorted(r["measured_s"] for r in rows)
    print(
        f"{name}: {runs} runs, {stopped} stopped at their target, measured {measured[runs // 2]:.0f} s "
        f"(median; {measured[0]:.0f}-{measured[-1]:.0f}), {time.monotonic() - t0:.0f} s wall"
    )
    for metric in CONFIGS[name][1]["metrics"]:
        hw = [r[f"{metric}_halfwidth"] for r in rows]
        covered = sum(h is not None and abs(r[metric] - ref[metric]) <= h for r, h in zip(rows, hw))
        bias = sum(r[metric] for r in rows) / runs - ref[metric]
        print(
            f"  {metric}: long-run {ref[metric]:.5g} ({ref_s:.0f} s); covered {covered}/{runs} = "
            f"{covered / runs:.1%}; mean of the estimates minus long-run {bias:+.2g}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--ref-s", type=float, default=20_000.0)
    ap.add_argument("--only", choices=sorted(CONFIGS))
    a = ap.parse_args()
    with mp.get_context("spawn").Pool(2) as pool:
        for name in [a.only] if a.only else CONFIGS:
            coverage(name, a.runs, a.ref_s, pool)


if __name__ == "__main__":
    main()
