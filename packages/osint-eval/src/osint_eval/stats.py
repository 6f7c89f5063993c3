"""Statistics: Wilson intervals for rates, seeded bootstrap intervals for means and paired deltas,
an exact McNemar (sign) test.

Every estimate carries its sample size; nothing here returns a bare number.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from osint_eval.schema import Estimate, McNemar

DEFAULT_BOOTSTRAP = 2000


def proportion_interval(successes: Any, *, alpha: float = 0.05) -> Estimate:
    """A success rate with its Wilson score interval (scipy). Unlike a bootstrap, it has non-zero width
    at 0% and 100%: 0 of 50 gives [0.0, 7.1%], not [0, 0]."""
    from scipy.stats import binomtest

    x = np.asarray(successes, dtype=bool)
    n, k = int(x.size), int(x.sum())
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    ci = binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="wilson")
    return Estimate(k / n, float(ci.low), float(ci.high), n)


def bootstrap_mean(values: Any, *, seed: int = 0, n_boot: int = DEFAULT_BOOTSTRAP, alpha: float = 0.05) -> Estimate:
    """Mean with a percentile-bootstrap interval (resampling the items, seeded)."""
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    if n == 1 or np.all(x == x[0]):
        return Estimate(float(x[0]), float(x[0]), float(x[0]), n)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    # chunks keep memory at n_boot/8 x n indices however large n is
    for start in range(0, n_boot, max(1, n_boot // 8)):
        stop = min(n_boot, start + max(1, n_boot // 8))
        means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return Estimate(float(x.mean()), float(lo), float(hi), n)


def paired_delta(
    candidate: Any, base: Any, *, seed: int = 0, n_boot: int = DEFAULT_BOOTSTRAP, alpha: float = 0.05
) -> Estimate:
    """Mean of candidate - base over the same items, with a bootstrap interval over items."""
    a, b = np.asarray(candidate, dtype=float), np.asarray(base, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same length, got {a.size} and {b.size}")
    return bootstrap_mean(a - b, seed=seed, n_boot=n_boot, alpha=alpha)


def mcnemar_exact(candidate: Any, base: Any) -> McNemar:
    """Exact two-sided McNemar test on paired successes (a sign test on the discordant pairs)."""
    a = np.asarray(candidate, dtype=bool)
    b = np.asarray(base, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same length, got {a.size} and {b.size}")
    c_only, b_only = int(np.sum(a & ~b)), int(np.sum(~a & b))
    k, m = min(c_only, b_only), c_only + b_only
    if m == 0:
        return McNemar(c_only, b_only, int(a.size), 1.0)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2**m
    return McNemar(c_only, b_only, int(a.size), min(1.0, 2 * tail))


def difference_of_means(later: Any, earlier: Any, *, seed: int = 0, n_boot: int = DEFAULT_BOOTSTRAP,
                        alpha: float = 0.05) -> Estimate:
    """mean(later) - mean(earlier) of two independent samples, with a percentile-bootstrap interval that
    resamples each sample on its own (scipy.stats.bootstrap); ``n`` is the smaller sample's size."""
    from scipy.stats import bootstrap

    a, b = np.asarray(later, dtype=float), np.asarray(earlier, dtype=float)
    n = int(min(a.size, b.size))
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    delta = float(a.mean() - b.mean())
    if (a.size == 1 and b.size == 1) or (np.all(a == a[0]) and np.all(b == b[0])):
        return Estimate(delta, delta, delta, n)
    res = bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis), n_resamples=n_boot,
                    confidence_level=1 - alpha, method="percentile", random_state=np.random.default_rng(seed),
                    vectorized=True)
    return Estimate(delta, float(res.confidence_interval.low), float(res.confidence_interval.high), n)
