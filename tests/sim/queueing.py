"""Reference queueing formulas for the simulator tests (computed independently of the engine)."""

import math


def md1k_loss(rho: float, k: int) -> float:
    """Loss probability of an M/D/1/K queue (K = places including the one in service).

    Embedded Markov chain at departure epochs (states 0..K-1), then the time-average
    probability of a full system, p_K = 1 - 1 / (pi_0 + rho), which Poisson arrivals see
    (PASTA). Standard M/G/1/K analysis.
    """
    a = [math.exp(-rho) * rho**j / math.factorial(j) for j in range(k + 1)]
    n = k
    p = [[0.0] * n for _ in range(n)]
    for i in range(n):
        base = 0 if i == 0 else i - 1
        for j in range(base, n):
            p[i][j] = a[j - base] if j < n - 1 else 1.0 - sum(a[: n - 1 - base])
    pi = [1.0 / n] * n
    for _ in range(100_000):
        new = [sum(pi[i] * p[i][j] for i in range(n)) for j in range(n)]
        done = max(abs(x - y) for x, y in zip(new, pi)) < 1e-16
        pi = new
        if done:
            break
    return 1.0 - 1.0 / (pi[0] + rho)
