"""What the ABS reproductions share: reading a policy's runs back (second-half means per 20-ms
interval, which constraint ABS held), the settle time and spread of a buffer series, and the
three-panel buffer / loss / utilization plot of the paper's time figures."""

from __future__ import annotations

import math
from typing import Any

import duckdb


def policy_label(policy: str, damping: str | None) -> str:
    """A run's policy as the reports name it: `abs_magnitude` for ABS damped with |u(n) - u(n-1)|."""
    return "abs_magnitude" if policy == "abs" and damping == "magnitude" else policy


def second_half(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    """Every ok run of preset `name` with its second-half figures: the mean buffer, the mean over
    sample intervals of drops / arrivals (as ABS measures p(n); intervals without arrivals count 0)
    and of utilization, the aggregate loss rate (drops / arrivals over the half), and for ABS the
    share of control intervals in which the utilization controller set the buffer (b_u >= b_p) and
    the mean of its own u(n)."""
    rows = con.execute(
        """
        WITH r AS (SELECT r.run_id, r.exec_id, r.flows, r.core_mbps, r.warmup_s, r.seed, r.loss_rate,
                          r.buffer_policy_damping AS damping, r.buffer_policy_target_util AS target_util,
                          r.buffer_policy_target_loss AS target_loss, r.buffer_policy_train AS train,
                          r.buffer_policy_gamma AS gamma, l.buffer_policy
                   FROM runs r JOIN links l USING (run_id, exec_id) WHERE r.name = ? AND r.status = 'ok'),
        ts AS (SELECT t.run_id, t.exec_id, avg(t.buffer_pkts) AS buffer_pkts,
                      avg(CASE WHEN t.arrivals > 0 THEN t.drops / t.arrivals ELSE 0 END) AS loss_interval,
                      avg(t.utilization) AS utilization
               FROM timeseries t JOIN r USING (run_id, exec_id) WHERE t.time_s > r.warmup_s GROUP BY ALL),
        c AS (SELECT c.run_id, c.exec_id, avg(CASE WHEN c.b_u_pkts >= c.b_p_pkts THEN 1.0 ELSE 0.0 END) AS util_share,
                     avg(c.u) AS u_abs
              FROM control c JOIN r USING (run_id, exec_id) WHERE c.time_s > r.warmup_s GROUP BY ALL)
        SELECT r.*, ts.buffer_pkts, ts.loss_interval, ts.utilization, c.util_share, c.u_abs
        FROM r JOIN ts USING (run_id, exec_id) LEFT JOIN c USING (run_id, exec_id)""",
        [name],
    )
    cols = [d[0] for d in rows.description]
    out = [dict(zip(cols, row)) for row in rows.fetchall()]
    for o in out:
        o["policy"] = policy_label(o["buffer_policy"], o["damping"])
    return out


def control_series(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, list[float]]:
    """A run's control table (link 0) as columns, in time order."""
    rows = con.execute(
        """SELECT time_s, buffer_pkts, b_u_pkts, b_p_pkts, gain_util, gain_loss, u, p, utilization
        FROM control WHERE run_id = ? AND link_id = 0 ORDER BY time_s""",
        [run_id],
    ).fetchall()
    names = ("time_s", "buffer_pkts", "b_u_pkts", "b_p_pkts", "gain_util", "gain_loss", "u", "p", "utilization")
    return {n: [r[i] for r in rows] for i, n in enumerate(names)}


def moving_mean(values: list[float], window: int) -> list[float]:
    """The trailing mean of the last `window` values at each point (fewer at the start)."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def settle_time_s(times: list[float], values: list[float], tol: float = 0.1, window: int = 1) -> float | None:
    """When a series settles: the first time after which its trailing mean over `window` points
    stays within `tol` (relative) of the mean of its last half; None if the last point is outside."""
    if not values:
        return None
    half = values[len(values) // 2 :]
    values = moving_mean(values, window)
    ref = sum(half) / len(half)
    outside = [i for i, v in enumerate(values) if abs(v - ref) > tol * abs(ref)]
    if not outside:
        return times[0]
    last = outside[-1]
    return None if last == len(values) - 1 else times[last + 1]


def spread(values: list[float]) -> dict[str, float]:
    """Min, 5th and 95th percentiles, max, mean, and (p95 - p5) / mean of a series."""
    if not values:
        return {k: math.nan for k in ("min", "p5", "p95", "max", "mean", "relative")}
    s = sorted(values)
    mean = sum(s) / len(s)
    p5, p95 = s[int(0.05 * (len(s) - 1))], s[int(0.95 * (len(s) - 1))]
    return {
        "min": s[0],
        "p5": p5,
        "p95": p95,
        "max": s[-1],
        "mean": mean,
        "relative": (p95 - p5) / mean if mean else math.nan,
    }


def plot_timeline(
    axes: Any,
    series: dict[str, list[float]],
    label: str,
    target_util: float | None = None,
    target_loss: float | None = None,
    smooth: int = 1,
) -> None:
    """The paper's panels in a column of three axes: b(n), p(n) and u(n) against time, p and u as
    trailing means over `smooth` intervals (a single 20-ms p(n) swings between 0 and 0.5)."""
    t = series["time_s"]
    axes[0].plot(t, series["buffer_pkts"], lw=0.8, label=label)
    axes[1].plot(t, moving_mean(series["p"], smooth), lw=0.6, label=label)
    axes[2].plot(t, moving_mean(series["u"], smooth), lw=0.6, label=label)
    for ax, target in ((axes[1], target_loss), (axes[2], target_util)):
        if target is not None:
            ax.axhline(target, color="k", ls=":", lw=0.8)
    mean = "" if smooth == 1 else f" (mean of {smooth})"
    for ax, ylabel in zip(axes, ("buffer b(n) (pkts)", f"loss p(n){mean}", f"input util. u(n){mean}")):
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[2].set_xlabel("time (s)")
