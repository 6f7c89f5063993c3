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


def _score(**kw):
    """score_episode with the gold answer person_3 and the evidence GOLD."""
    return score_episode(gold_answers=["person_3"], gold_evidence=GOLD, **kw)


def test_judge_answer_is_exact():
    assert judge_answer("person_2", ["person_2"]) == (True, False)
    for variant in (
        "Person_2",
        " person_2",
        "person_2 ",
        "'person_2'",
        "id:person_2",
        "person_2.",
        "person_20",
        "person",
    ):
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
    best = _score(submitted="person_3", evidence=GOLD, critical_steps=1, max_steps=24)
    assert best.total == pytest.approx(1.5) and best.correct
    bare = _score(submitted="person_3", critical_steps=25, max_steps=24, penalties_paid=0.2)
    assert bare.total == pytest.approx(0.8)
    wrong = _score(submitted="person_9", evidence=GOLD, critical_steps=1, max_steps=24)
    assert wrong.total == pytest.approx(0.3) and not wrong.correct
    multi = _score(submitted=["person_3", "person_9"], evidence=GOLD)
    assert multi.multiple_candidates and multi.total == pytest.approx(0.2)
    none = _score(submitted=None, evidence=GOLD, penalties_paid=0.06)
    assert none.total == pytest.approx(-0.06) and none.evidence_f1 == 0.0


def test_correct_always_beats_wrong_over_a_grid():
    cfg = RewardConfig()
    lo, hi = cfg.bounds
    correct_min, wrong_max = np.inf, -np.inf
    for f1, steps, pen in itertools.product((0.0, 0.5, 1.0), (1, 12, 30), (0.0, 0.1, 0.2, 5.0)):
        ev = GOLD if f1 == 1.0 else GOLD[:1] if f1 == 0.5 else ()
        c = _score(submitted="person_3", evidence=ev, critical_steps=steps, max_steps=24, penalties_paid=pen)
        w = _score(submitted="nope", evidence=ev, critical_steps=steps, max_steps=24, penalties_paid=pen)
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


def _judged(submitted, gold, known=()):
    b = score_episode(gold_answers=gold, gold_evidence=GOLD, submitted=submitted, known=known)
    return b.correct, b.multiple_candidates, round(b.total, 6)


def test_labelled_answer_is_judged_without_the_prose_after_it():
    # correct answer (1.0) + full efficiency at 1 step (0.2), no evidence, no penalty
    assert _judged("Answer: person_12\nbecause the post says so", ["person_12"]) == (True, False, 1.2)
    assert _judged("I looked it up.\nFinal answer = person_12\nperson_13 is a decoy", ["person_12"]) == (
        True,
        False,
        1.2,
    )
    assert _judged("answer:\n person_12\n", ["person_12"]) == (True, False, 1.2)
    assert _judged("Answer: person_12 person_13\nprose", ["person_12"]) == (False, True, -0.1)
    assert _judged("Answer:", ["person_12"]) == (False, False, 0.0)


@pytest.mark.parametrize(
    "listed",
    [
        "person_12, person_3",
        "person_12 person_3",
        "person_12\nperson_3",
        "person_12\tperson_3",
        "person_12;person_3",
        "person_12 / person_3",
        "person_12 and person_3",
        "person_12 | person_3",
        "person_12\n\nperson_3\n",
        ["person_12 person_3"],
        ["person_12", "person_3"],
    ],
)
def test_every_separator_makes_several_candidates(listed):
    assert _judged(listed, ["person_12"]) == (False, True, -0.1)


def test_an_entity_whose_name_holds_a_separator_is_one_candidate():
    kg = {"Sleep, My Love", "Douglas Sirk", "Simon and Garfunkel"}
    assert _judged("Sleep, My Love", ["Sleep, My Love"]) == (True, False, 1.2)  # gold
    assert _judged("Sleep, My Love", ["Kismet", "Sleep, My Love"]) == (True, False, 1.2)  # one of several gold answers
    assert _judged("Sleep, My Love", ["Douglas Sirk"], known=kg) == (False, False, 0.0)  # wrong, but one entity
    assert _judged("Answer: Sleep, My Love\nIt is a 1948 film.", ["Douglas Sirk"], known=kg) == (False, False, 0.0)
    assert _judged("Sleep, My Love", ["Douglas Sirk"]) == (False, True, -0.1)  # without the world: three words
    assert _judged("Sleep, My Love, Douglas Sirk", ["Douglas Sirk"], known=kg) == (False, True, -0.1)
    assert _judged(["Sleep, My Love", "Douglas Sirk"], ["Douglas Sirk"], known=kg) == (False, True, -0.1)


def test_a_world_names_its_entities_by_id_handle_and_name(world):
    person = world.ids("person")[0]
    name, handle = world.label(person), world.label(world.ids("account")[0])
    assert " " in name
    for one in (person, name, handle):
        assert judge_answer(one, ["nobody"], world) == (False, False), one
    assert judge_answer(f"{person} {world.ids('person')[1]}", ["nobody"], world) == (False, True)


def test_kg_single_turn_answers_are_judged_by_the_same_rules():
    from osint_gym.single_turn import Context, score_completion
    from osint_gym.tasks import Task

    task = Task(
        "t",
        "Who directed Sleep, My Love?",
        ("Douglas Sirk",),
        (Edge("Sleep, My Love", "directed_by", "Douglas Sirk"),),
        "kg",
        "easy",
    )
    ctx = Context(
        "Sleep, My Love directed_by Douglas Sirk\nSleep, My Love release_year 1948",
        (Edge("Sleep, My Love", "directed_by", "Douglas Sirk"), Edge("Sleep, My Love", "release_year", "1948")),
        ("Douglas Sirk", "1948"),
        ("Sleep, My Love directed_by Douglas Sirk", "Sleep, My Love release_year 1948"),
    )
    wrong_entity = score_completion(task, "Answer: Sleep, My Love\nIt is the film itself.", ctx)
    assert (wrong_entity.correct, wrong_entity.multiple_candidates, round(wrong_entity.total, 6)) == (False, False, 0.0)
    right = score_completion(
        task, "Sleep, My Love directed_by Douglas Sirk\nAnswer: Douglas Sirk\nHe directed it.", ctx
    )
    assert (right.correct, right.multiple_candidates, round(right.total, 6)) == (True, False, 1.5)  # + evidence F1 1.0
    both = score_completion(task, "Douglas Sirk 1948", ctx)
    assert (both.correct, both.multiple_candidates, round(both.total, 6)) == (False, True, -0.1)


def test_env_plain_text_answer_ignores_the_prose_after_it():
    env = gym.make("OSINT-v0")
    env.reset(seed=3)
    gold = env.unwrapped.task.answer
    *_, term, _, info = env.step(f"Answer: {gold}\nI am confident because the records agree.")
    assert term and info["correct"] and not info["reward_breakdown"]["multiple_candidates"]
    env.reset(seed=3)
    *_, info = env.step(json.dumps({"answer": f"{gold} person_0"}))
    assert not info["correct"] and info["reward_breakdown"]["multiple_candidates"]
