from __future__ import annotations

import itertools
import json

import gymnasium as gym
import numpy as np
import pytest

from osint_gym.errors import ConfigError
from osint_gym.reward import RewardConfig, efficiency, evidence_scores, judge_answer, score_episode, step_penalty
from osint_gym.schema import Edge

GOLD = (Edge("account_1", "alias_of", "person_2"), Edge("person_2", "knows", "person_3"))


def test_judge_answer_is_exact():
    assert judge_answer("person_2", ["person_2"]) == (True, False)
    for variant in ("Person_2", " person_2", "person_2 ", "'person_2'", "id:person_2", "person_2.", "person_20", "person"):
        assert judge_answer(variant, ["person_2"]) == (False, False), variant
    assert judge_answer(["person_2", "person_3"], ["person_2"]) == (False, True)
    assert judge_answer("person_2, person_3", ["person_2"]) == (False, True)
    assert judge_answer("person_2 or person_3", ["person_2"]) == (False, True)
    assert judge_answer(["person_2"], ["person_2"]) == (True, False)
    assert judge_answer("Simon and Garfunkel", ["Simon and Garfunkel"]) == (True, False)  # KG names may contain "and"
    assert judge_answer("b", ["a", "b"]) == (True, False)  # Hits@1 over several gold answers


def test_evidence_scores_and_symmetry():
    assert evidence_scores(GOLD, GOLD) == (1.0, 1.0, 1.0)
    assert evidence_scores([Edge("person_3", "knows", "person_2")], GOLD) == (1.0, 0.5, pytest.approx(2 / 3))
    assert evidence_scores([], GOLD) == (0.0, 0.0, 0.0)
    p, r, f = evidence_scores(list(GOLD) + [Edge("x", "knows", "y")] * 3 + [Edge("a", "b", "c")], GOLD)
    assert (p, r) == (pytest.approx(2 / 4), 1.0)


def test_efficiency_and_step_penalty():
    assert efficiency(1, 24) == 1.0 and efficiency(25, 24) == 0.0 and efficiency(13, 24) == pytest.approx(0.5)
    cfg = RewardConfig()
    assert step_penalty(False, 0.0, cfg) == 0.0
    assert step_penalty(True, 0.0, cfg) == -0.02
    assert step_penalty(True, 0.19, cfg) == pytest.approx(-0.01)
    assert step_penalty(True, 0.2, cfg) == 0.0


def test_reward_values():
    best = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted="person_3", evidence=GOLD, critical_steps=1, max_steps=24)
    assert best.total == pytest.approx(1.5) and best.correct
    bare = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted="person_3", critical_steps=25, max_steps=24, penalties_paid=0.2)
    assert bare.total == pytest.approx(0.8)
    wrong = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted="person_9", evidence=GOLD, critical_steps=1, max_steps=24)
    assert wrong.total == pytest.approx(0.3) and not wrong.correct
    multi = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted=["person_3", "person_9"], evidence=GOLD)
    assert multi.multiple_candidates and multi.total == pytest.approx(0.2)
    none = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted=None, evidence=GOLD, penalties_paid=0.06)
    assert none.total == pytest.approx(-0.06) and none.evidence_f1 == 0.0


def test_correct_always_beats_wrong_over_a_grid():
    cfg = RewardConfig()
    lo, hi = cfg.bounds
    correct_min, wrong_max = np.inf, -np.inf
    for f1, steps, pen in itertools.product((0.0, 0.5, 1.0), (1, 12, 30), (0.0, 0.1, 0.2, 5.0)):
        ev = GOLD if f1 == 1.0 else GOLD[:1] if f1 == 0.5 else ()
        c = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted="person_3", evidence=ev, critical_steps=steps, max_steps=24, penalties_paid=pen)
        w = score_episode(gold_answers=["person_3"], gold_evidence=GOLD, submitted="nope", evidence=ev, critical_steps=steps, max_steps=24, penalties_paid=pen)
        for b in (c, w):
            assert lo <= b.total <= hi
        correct_min, wrong_max = min(correct_min, c.total), max(wrong_max, w.total)
    assert correct_min > wrong_max


def test_reward_config_enforces_its_ordering():
    with pytest.raises(ConfigError, match="correct - penalty_cap > evidence_weight"):
        RewardConfig(correct=0.4)
    with pytest.raises(ConfigError, match="must be a number >= 0"):
        RewardConfig(evidence_weight=-1)
    with pytest.raises(ConfigError, match="did you mean 'evidence_weight'"):
        RewardConfig.from_dict({"evidence_weigth": 0.1})


def test_no_sequence_of_non_answer_actions_earns_anything():
    env = gym.make("OSINT-v0")
    rng = np.random.default_rng(1)
    world = env.unwrapped.world
    ids = world.ids("person")[:30] + world.ids("account")[:30] + world.ids("post")[:30]
    for seed in range(20):
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            kind = rng.integers(3)
            if kind == 0:
                action = json.dumps({"tool": "get_profile", "args": {"handle_or_id": str(rng.choice(ids))}})
            elif kind == 1:
                action = json.dumps({"add_edge": [str(rng.choice(ids)), "knows", str(rng.choice(ids))]})
            else:
                action = "not an action"
            obs, r, term, trunc, info = env.step(action)
            assert r <= 0.0
            total += r
            done = term or trunc
        assert total <= 0.0 and not info["answered"]
