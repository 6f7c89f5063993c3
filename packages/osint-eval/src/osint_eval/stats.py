"""Statistics: seeded bootstrap intervals, paired deltas, an exact McNemar (sign) test.

Every estimate carries its sample size; nothing here returns a bare number.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_BOOTSTRAP = 2000


@dataclass(frozen=True)
class Estimate:
    mean: float
    lo: float  # 95% interval (or 1 - alpha)
    hi: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def fmt(self, pct: bool = False) -> str:
        """``"41.2% [38.1, 44.3] (n=1000)"`` or ``"0.412 [0.381, 0.443] (n=1000)"``."""
        if self.n == 0:
            return "n/a (n=0)"
        if pct:
            return f"{100 * self.mean:.1f}% [{100 * self.lo:.1f}, {100 * self.hi:.1f}] (n={self.n})"
        return f"{self.mean:.3f} [{self.lo:.3f}, {self.hi:.3f}] (n={self.n})"


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


def paired_delta(candidate: Any, base: Any, *, seed: int = 0, n_boot: int = DEFAULT_BOOTSTRAP, alpha: float = 0.05) -> Estimate:
    """Mean of candidate - base over the same items, with a bootstrap interval over items."""
    a, b = np.asarray(candidate, dtype=float), np.asarray(base, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same length, got {a.size} and {b.size}")
    return bootstrap_mean(a - b, seed=seed, n_boot=n_boot, alpha=alpha)


@dataclass(frozen=True)
class McNemar:
    candidate_only: int  # items the candidate got right and the base wrong
    base_only: int
    n: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
