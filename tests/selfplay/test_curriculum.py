"""The learned generator's scripted control (osint_selfplay.curriculum) and the frontier sample both arms draw."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections import Counter

import pytest

from osint_gym.benchmark import benchmark_world
from osint_gym.errors import ConfigError as GymConfigError
from osint_gym.proposals import MAX_CHOICES, make_offer
from osint_gym.schema import Edge
from osint_gym.tasks import Task
from osint_selfplay.curriculum import FrontierCurriculum, OfferBin, choice_bin, frontier_weight, task_hops
from osint_selfplay.errors import ConfigError
from osint_selfplay.frontier import arm_figures, sample_round


@pytest.fixture(scope="module")
def world():
    return benchmark_world("v0:train")


@pytest.fixture(scope="module")
def offer(world):
    return make_offer(world, 7, 2, mode="choose", max_hops=3, filters=True, choices=6)


def test_offers_are_unchanged_by_the_families_they_now_carry(world):
    """Offers of every mode hash as they did before choices carried their families (sha256 computed at bb95229)."""
    rows = []
    for i in range(30):
        for kw in ({"mode": "fixed"}, {"mode": "generate"}, {"mode": "choose", "max_hops": 2},
                   {"mode": "choose", "max_hops": 3, "filters": True}):
            d = json.loads(make_offer(world, 7, i, **kw).to_json())
            assert len(d.pop("families")) == (len(d["choices"]) if kw["mode"] == "choose" else 0)
            rows.append(d)
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    assert digest == "3ef7fad5f130ae367ddc586f9e382689999dbcf1b51ceaa1c925da14579b9d63"


def test_an_offer_numbers_the_asked_choices_and_refuses_a_count_out_of_range(world, offer):
    assert len(offer.choices) == len(offer.families) == len(offer.queries) == 6
    for bad in (1, MAX_CHOICES + 1, True, "3"):
        with pytest.raises(GymConfigError, match="choices must be an integer"):
            make_offer(world, 7, 2, mode="choose", choices=bad)


def test_a_choices_bin_is_its_family_hops_and_filters(offer):
    for k in range(1, 7):
        b = choice_bin(offer, k)
        query = offer.query(k)
        assert b == OfferBin(offer.families[k - 1], query.n_hops, min(2, sum(len(h.filters) for h in query.hops)))
        assert OfferBin.from_key(b.key()) == b
    with pytest.raises(ConfigError, match="no choice 7"):
        choice_bin(offer, 7)


def test_a_bins_rate_is_the_beta_posterior_mean_and_an_unplayed_bin_weighs_most():
    cur = FrontierCurriculum()
    b = OfferBin("event_tracing", 1, 0)
    assert cur.rate(b) == 0.5 and frontier_weight(cur.rate(b)) == 0.25
    cur.observe(b, 6, 8)
    cur.observe(b, 2, 8)
    assert cur.rate(b) == pytest.approx(9 / 18)
    cur.observe(OfferBin("x", 3, 2), 0, 16)
    assert cur.rate(OfferBin("x", 3, 2)) == pytest.approx(1 / 18)
    assert cur.to_dict()["x/3/2"] == {"played": 16, "solved": 0, "rate": pytest.approx(1 / 18)}
    with pytest.raises(ValueError):
        cur.observe(b, 9, 8)
    with pytest.raises(ValueError):
        frontier_weight(1.5)


def test_the_curriculum_picks_in_proportion_to_p_times_one_minus_p(offer):
    """Each choice is drawn with probability p(1 - p) of its bin over the offer's total (20,000 draws)."""
    rates = [0.05, 0.5, 0.9, 0.3, 0.0, 0.7]
    observations = []
    for k, p in zip(range(1, 7), rates):
        observations.append({"bin": choice_bin(offer, k).key(), "solved": round(p * 1000), "played": 1000})
    cur = FrontierCurriculum.from_observations(observations)
    weights = cur.weights(offer)
    # bins shared by two choices pool their episodes; the expected share follows the pooled rates
    expected = [w / sum(weights) for w in weights]
    rng = random.Random(0)
    counts = Counter(cur.pick(offer, rng)[0] for _ in range(20_000))
    for k, e in zip(range(1, 7), expected):
        assert counts[k] / 20_000 == pytest.approx(e, abs=0.015)
    distinct = {choice_bin(offer, k) for k in range(1, 7)}
    assert len(distinct) >= 3  # the offer spans several bins, so the proportions are a real test


def test_the_frontier_sample_rates_both_arms_in_one_call_and_counts_the_band(world):
    offers = [make_offer(world, 11, i, mode="choose", max_hops=3, filters=True, choices=4) for i in range(6)]
    worlds = [world] * len(offers)
    calls = []

    def rate(items):
        calls.append(len(items))
        # 1-hop paths at the frontier, others not
        return [dataclasses.replace(t, provenance={**t.provenance, "solve_rate": 0.5 if task_hops(t) == 1 else 0.0})
                for _, t in items]

    def generate(prompts):
        return ["P: 1", "P: 2", "P: 9", "nonsense", "P: 3", "P: 4"][: len(prompts)]

    cur = FrontierCurriculum.from_observations([])  # no episodes yet: uniform over the choices
    figures, files = sample_round(worlds, offers, generate, rate, max_hops=3, round_index=2, curriculum=cur,
                                  seed=0, worlds_of=lambda t: world)
    assert figures.curriculum is not None and calls == [figures.valid + figures.curriculum.valid]
    assert figures.proposals == 6 and figures.valid == 4 and (figures.reasons or {})["out_of_range"] == 1
    learned = [Task.from_dict(t) for t in files["tasks.jsonl"]]
    assert all(t.task_id.startswith("gen-r2-") for t in learned)
    ones = sum(1 for t in learned if t.provenance["solve_rate"] == 0.5)
    assert figures.in_frontier == ones and figures.frontier_share == pytest.approx(ones / 4)
    assert figures.curriculum.valid == 6 and len(files["curriculum_tasks.jsonl"]) == 6
    assert all(Task.from_dict(t).task_id.startswith("cur-r2-") for t in files["curriculum_tasks.jsonl"])


def test_an_arms_figures_count_hops_and_the_fixed_band():
    def task(hops, p):
        edges = tuple(Edge(f"person_{i}", "knows", f"person_{i + 1}") for i in range(hops))
        return Task("t", "q", (f"person_{hops}",), edges, "f", "easy", provenance={"solve_rate": p})

    tasks = [task(1, 0.2), task(2, 0.8), task(3, 0.85), task(1, 0.0)]
    fig = arm_figures(tasks, 5)
    assert fig.in_frontier == 2 and fig.frontier_share == 0.5 and fig.valid_rate == 0.8
    assert fig.mean_hops == 1.75 and fig.hops == {"1": 2, "2": 1, "3": 1}
    empty = arm_figures([], 3)
    assert empty.frontier_share is None and empty.to_dict()["frontier_share"] is None  # written: measured nothing
