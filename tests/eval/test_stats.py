from __future__ import annotations

import numpy as np
import pytest

from osint_eval.stats import bootstrap_mean, mcnemar_exact, paired_delta, proportion_interval


def test_bootstrap_interval_covers_the_truth_at_about_95_percent():
    rng = np.random.default_rng(0)
    covered = 0
    for trial in range(200):
        sample = rng.random(300) < 0.4
        est = bootstrap_mean(sample, seed=trial, n_boot=500)
        covered += est.lo <= 0.4 <= est.hi
        assert est.n == 300 and est.lo <= est.mean <= est.hi
    assert 0.90 <= covered / 200 <= 0.99


def test_paired_delta_detects_a_known_difference_and_covers_it():
    rng = np.random.default_rng(1)
    covered = 0
    for trial in range(100):
        base = rng.random(1000) < 0.30
        cand = base | (rng.random(1000) < 0.15)  # true delta = 0.7 * 0.15 = 0.105
        d = paired_delta(cand, base, seed=trial, n_boot=500)
        covered += d.lo <= 0.105 <= d.hi
        assert d.lo > 0
    assert covered >= 88


def test_identical_models_give_a_delta_interval_containing_zero():
    rng = np.random.default_rng(2)
    x = rng.random(500) < 0.5
    d = paired_delta(x, x, seed=0)
    assert (d.mean, d.lo, d.hi) == (0.0, 0.0, 0.0)
    noisy_same = paired_delta(rng.random(500) < 0.5, rng.random(500) < 0.5, seed=0)
    assert noisy_same.lo <= 0.0 <= noisy_same.hi


def test_bootstrap_is_seeded_and_reports_n():
    x = np.arange(50) % 3 == 0
    assert bootstrap_mean(x, seed=7) == bootstrap_mean(x, seed=7)
    assert bootstrap_mean([], seed=0).n == 0
    assert bootstrap_mean([1.0], seed=0).to_dict() == {"mean": 1.0, "lo": 1.0, "hi": 1.0, "n": 1}
    assert bootstrap_mean(x, seed=0).fmt(pct=True).endswith("(n=50)")


def test_mcnemar_exact_values():
    base = np.array([True] * 10 + [False] * 10)
    cand = np.array([True] * 10 + [True] * 8 + [False] * 2)
    r = mcnemar_exact(cand, base)
    assert (r.candidate_only, r.base_only, r.n) == (8, 0, 20)
    assert r.p_value == pytest.approx(2 / 2**8)
    assert mcnemar_exact(base, base).p_value == 1.0
    with pytest.raises(ValueError, match="same length"):
        mcnemar_exact([True], [True, False])


def test_rates_at_0_and_100_percent_get_non_zero_width_wilson_intervals():
    zero = proportion_interval([False] * 50)
    assert (zero.mean, zero.lo, zero.n) == (0.0, 0.0, 50)
    assert zero.hi == pytest.approx(1.959964**2 / (50 + 1.959964**2), abs=1e-4)  # Wilson: z^2 / (n + z^2) = 0.0713
    full = proportion_interval([True] * 20)
    assert full.mean == 1.0 and full.hi == 1.0 and full.lo == pytest.approx(20 / (20 + 1.959964**2), abs=1e-4)  # 0.839
    assert full.fmt(pct=True) == "100.0% [83.9, 100.0] (n=20)"
    assert proportion_interval([]).n == 0


def test_wilson_interval_covers_the_truth_at_about_95_percent():
    rng = np.random.default_rng(3)
    covered = sum(est.lo <= 0.1 <= est.hi for est in (proportion_interval(rng.random(60) < 0.1) for _ in range(400)))
    assert 0.90 <= covered / 400 <= 0.99
