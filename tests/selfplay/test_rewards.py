from __future__ import annotations

import json

import pytest

from osint_gym import proposals
from osint_gym.single_turn import build_context
from osint_gym.tasks import TaskSampler
from osint_selfplay.config import GeneratorConfig
from osint_selfplay.curriculum import choice_bin
from osint_selfplay.errors import ConfigError
from osint_selfplay.rewards import AnswererReward, GeneratorReward, frontier_reward, learnability
from osint_selfplay.worlds import WorldPool


@pytest.mark.parametrize(
    ("p", "r_zero", "azr"), [(0.0, 0.0, 0.0), (0.25, 0.5, 0.75), (0.5, 1.0, 0.5), (0.75, 0.5, 0.25), (1.0, 0.0, 0.0)]
)
def test_learnability_values(p, r_zero, azr):
    assert learnability(p, "r_zero") == pytest.approx(r_zero)
    assert learnability(p, "azr") == pytest.approx(azr)


def test_learnability_rejects_bad_input():
    with pytest.raises(ValueError):
        learnability(1.5)
    with pytest.raises(ValueError):
        learnability(0.5, "other")


class FixedSolver:
    """Stands in for the frozen answerer: solve rates chosen by the test (the formula is under test,
    the sampling is tested with a real model in test_training.py); ``calls`` records each call's tasks."""

    def __init__(self, rate, k=8):
        self.rate, self.k = rate, k
        self.seen = []
        self.calls = []

    def solve_rates(self, tasks):
        self.seen += tasks
        self.calls.append(len(tasks))
        return [self.rate] * len(tasks)


@pytest.fixture(scope="module")
def pool():
    return WorldPool(2, 0)


@pytest.fixture(scope="module")
def world(pool):
    return pool.pick(0)


def _gold(world, i, mode="fixed"):
    offer = proposals.make_offer(world, 0, i, mode=mode)
    return offer, proposals.gold_proposal(world, offer)


def _msg(text):
    return [{"role": "assistant", "content": text}]


def test_generator_reward_grades_invalid_reasons(pool, world):
    cfg = GeneratorConfig()
    reward = GeneratorReward(pool, cfg, FixedSolver(0.5))
    offer, gold = _gold(world, 1)
    p = proposals.parse_proposal(gold)
    other = next(x for x in world.ids("person") if x != p.answer)
    cases = {
        "malformed": "just chatting",
        "unknown_entity": gold.replace(p.answer, "person_999999"),
        "edge_not_in_world": f"Q: {p.question}\nA: {p.answer}\nE: person_0 knows person_0",
        "answer_leaked": f"Q: {p.question} It is {p.answer}.\nA: {p.answer}\nE: "
        + "; ".join(" ".join(e) for e in p.evidence),
        "start_not_named": f"Q: Who is it?\nA: {p.answer}\nE: " + "; ".join(" ".join(e) for e in p.evidence),
        "answer_mismatch": f"Q: {p.question}\nA: {other}\nE: " + "; ".join(" ".join(e) for e in p.evidence),
    }
    out = reward(
        prompts=[None] * len(cases),
        completions=[_msg(c) for c in cases.values()],
        offer=[offer.to_json()] * len(cases),
        world_seed=[world.seed] * len(cases),
    )
    for (reason, _), value in zip(cases.items(), out):
        assert value == cfg.invalid_rewards[reason], reason
    assert all(v < 0 for v in out)
    assert {k: reward.reasons[k] for k in cases} == dict.fromkeys(cases, 1)


@pytest.mark.parametrize(("p", "kind", "expected"), [(0.0, "r_zero", -0.1), (0.125, "r_zero", 0.25),
                                                     (0.5, "r_zero", 1.0), (0.5, "azr", 0.5), (0.75, "azr", 0.25),
                                                     (1.0, "r_zero", -0.1), (1.0, "azr", -0.1)])
def test_frontier_reward_is_learnability_where_outcomes_vary_and_the_penalty_where_they_do_not(p, kind, expected):
    assert frontier_reward(p, kind, -0.1) == pytest.approx(expected)
    with pytest.raises(ValueError):
        frontier_reward(1.2, kind, -0.1)


def test_a_degenerate_proposal_scores_above_every_invalid_one_and_below_every_learnable_one():
    cfg = GeneratorConfig()
    assert max(cfg.invalid_rewards.values()) < cfg.degenerate_reward < frontier_reward(1 / cfg.solver_samples,
                                                                                       cfg.learnability, -0.1)
    for bad in (-0.3, 0.2):  # below an invalid reward, or above a learnable one's floor
        with pytest.raises(ConfigError, match="degenerate_reward"):
            GeneratorConfig(degenerate_reward=bad)


def test_completions_naming_one_path_are_played_once_and_observed_in_its_bin(pool, world):
    offer = proposals.make_offer(world, 0, 3, mode="choose", max_hops=2, filters=True)
    solver = FixedSolver(0.25, k=8)
    reward = GeneratorReward(pool, GeneratorConfig(), solver)
    texts = ["P: 1", "P: 1", "P: 2", "P: 9", "P: 1", "P: 2"]
    out = reward(prompts=[None] * 6, completions=[_msg(t) for t in texts], offer=[offer.to_json()] * 6,
                 world_seed=[world.seed] * 6)
    assert solver.calls == [2]  # two distinct paths, one call
    assert out[3] == GeneratorConfig().invalid_rewards["out_of_range"]
    assert [o["bin"] for o in reward.observations] == [choice_bin(offer, 1).key(), choice_bin(offer, 2).key()]
    assert all(o["solved"] == 2 and o["played"] == 8 for o in reward.observations)
    (step,) = reward.steps
    assert step.valid == 5 and step.proposals == 6 and step.frontier_share == 1.0
    assert step.rewards == out and step.solve_rates == [0.25] * 5


def test_generator_reward_for_valid_proposals_is_learnability_diversity_grounding(pool, world):
    cfg = GeneratorConfig()
    offers_golds = [_gold(world, i) for i in range(3)]
    for rate, expected_learn in ((0.0, cfg.degenerate_reward), (0.25, 0.5), (0.5, 1.0), (1.0, cfg.degenerate_reward)):
        reward = GeneratorReward(pool, cfg, FixedSolver(rate))
        out = reward(
            prompts=[None] * 3,
            completions=[_msg(g) for _, g in offers_golds],
            offer=[o.to_json() for o, _ in offers_golds],
            world_seed=[world.seed] * 3,
        )
        assert out == pytest.approx([expected_learn + cfg.grounding_weight] * 3)
    # a repeat of a proposal (in the batch, or later from history) is penalised
    reward = GeneratorReward(pool, cfg, FixedSolver(0.5))
    offer, gold = offers_golds[0]
    out = reward(
        prompts=[None] * 2, completions=[_msg(gold)] * 2, offer=[offer.to_json()] * 2, world_seed=[world.seed] * 2
    )
    assert out[0] == pytest.approx(1.0 + cfg.grounding_weight)
    assert out[1] == pytest.approx(1.0 + cfg.grounding_weight - cfg.diversity_weight)
    again = reward(prompts=[None], completions=[_msg(gold)], offer=[offer.to_json()], world_seed=[world.seed])
    assert again[0] == pytest.approx(1.0 + cfg.grounding_weight - cfg.diversity_weight)


def test_generator_diversity_uses_the_gym_duplicate_rule_within_its_history_window(pool, world):
    cfg = GeneratorConfig(history_size=1)
    reward = GeneratorReward(pool, cfg, FixedSolver(0.5))
    (o0, g0), (o1, g1) = _gold(world, 0), _gold(world, 1)
    reworded = g0.replace("Q: ", "Q: Tell me: ", 1)  # same world, answer and evidence: the same task
    out = reward(prompts=[None] * 4, completions=[_msg(g0), _msg(reworded), _msg(g1), _msg(g0)],
                 offer=[o0.to_json(), o0.to_json(), o1.to_json(), o0.to_json()], world_seed=[world.seed] * 4)
    fresh, repeat = 1.0 + cfg.grounding_weight, 1.0 + cfg.grounding_weight - cfg.diversity_weight
    # the last g0 comes after g1 pushed it out of a one-task history, so it is fresh again
    assert out == pytest.approx([fresh, repeat, fresh, fresh])


def test_grounding_rewards_evidence_the_offer_showed(pool, world):
    cfg = GeneratorConfig()
    offer, gold = _gold(world, 4)
    elsewhere, _ = _gold(world, 5)
    other = proposals.parse_proposal(proposals.gold_proposal(world, elsewhere))
    other_gold = proposals.format_proposal(proposals.Proposal(other.question, other.answer, elsewhere.path))
    reward = GeneratorReward(pool, cfg, FixedSolver(0.5))
    # a valid proposal about a path the offer did not show earns no grounding
    out = reward(prompts=[None, None], completions=[_msg(gold), _msg(other_gold)], offer=[offer.to_json()] * 2,
                 world_seed=[world.seed] * 2)
    assert out[0] == pytest.approx(1.0 + cfg.grounding_weight)
    assert out[1] == pytest.approx(1.0)


def test_copying_the_prompt_example_is_not_rewarded(pool, world):
    offer, _ = _gold(world, 6)
    prompt = proposals.generator_messages(world, offer)[1]["content"]
    reward = GeneratorReward(pool, GeneratorConfig(), FixedSolver(0.5))
    assert reward(prompts=[None], completions=[_msg(prompt)], offer=[offer.to_json()], world_seed=[world.seed])[0] < 0


def test_answerer_reward_is_the_env_score_and_counts_zero_variance_groups(world):
    tasks = TaskSampler(world, 0).generate(2)
    rows = []
    for t in tasks:
        ctx = build_context(world, t)
        rows.append((json.dumps(t.to_dict()), ctx.to_json(), t))
    reward = AnswererReward(num_generations=4)
    (t1, c1, task1), (t2, c2, task2) = rows
    completions = [_msg(task1.answer), _msg("wrong_1"), _msg(""), _msg(task1.answer)] + [_msg("nope")] * 4
    out = reward(prompts=[None] * 8, completions=completions, task=[t1] * 4 + [t2] * 4, context=[c1] * 4 + [c2] * 4,
                 source=["generated"] * 4 + ["seed"] * 4)
    assert out[0] == pytest.approx(1.2) and out[3] == pytest.approx(1.2)
    assert out[1] == 0.0 and out[2] == pytest.approx(-0.02)
    assert out[4:] == [0.0] * 4
    shares = reward.zero_variance_share()
    assert shares["generated"].share == 0.0 and shares["seed"].share == 1.0


def test_rewards_pickle_and_have_stable_names(pool):
    import pickle

    g = GeneratorReward(pool, GeneratorConfig(), None)
    a = AnswererReward(8)
    assert (g.__name__, a.__name__) == ("GeneratorReward", "AnswererReward")
    assert pickle.loads(pickle.dumps(a)).num_generations == 8
    assert pickle.loads(pickle.dumps(g)).cfg == GeneratorConfig()


@pytest.mark.parametrize("sep", [", ", " ", " or ", "\t"])
def test_answerer_listing_every_context_entity_scores_below_one_wrong_guess(world, sep):
    task = TaskSampler(world, 0).sample(2)
    ctx = build_context(world, task)
    wrong = next(e for e in ctx.entities if e not in task.answers)
    reward = AnswererReward(num_generations=2)
    out = reward(prompts=[None] * 2, completions=[_msg(sep.join(ctx.entities)), _msg(wrong)],
                 task=[json.dumps(task.to_dict())] * 2, context=[ctx.to_json()] * 2)
    assert out == pytest.approx([-0.1, 0.0])


def test_answerer_ids_one_per_line_are_judged_by_the_last_line_only(world):
    """Lines are the single-turn format's structure: earlier lines are citations, never answers,
    so listing ids one per line scores exactly what the last id alone scores."""
    task = TaskSampler(world, 0).sample(2)
    ctx = build_context(world, task)
    ids = sorted(ctx.entities, key=lambda e: e in task.answers)  # the gold answer last
    reward = AnswererReward(num_generations=4)
    listed = [_msg("\n".join(ids)), _msg(ids[-1]), _msg("\n".join(reversed(ids))), _msg(ids[0])]
    out = reward(prompts=[None] * 4, completions=listed, task=[json.dumps(task.to_dict())] * 4,
                 context=[ctx.to_json()] * 4)
    assert out == pytest.approx([1.2, 1.2, 0.0, 0.0])


def test_a_choose_proposal_out_of_range_gets_its_graded_reward_and_a_valid_one_is_grounded(pool, world):
    cfg = GeneratorConfig()
    reward = GeneratorReward(pool, cfg, FixedSolver(0.5))
    offer = proposals.make_offer(world, 0, 1, mode="choose", max_hops=2)
    texts = [f"P: {len(offer.choices) + 1}", "P: 1 2", proposals.gold_proposal(world, offer)]
    out = reward(
        prompts=[None] * 3,
        completions=[_msg(t) for t in texts],
        offer=[offer.to_json()] * 3,
        world_seed=[world.seed] * 3,
    )
    assert out[:2] == [cfg.invalid_rewards["out_of_range"], cfg.invalid_rewards["malformed"]] == [-0.8, -1.0]
    assert out[2] == cfg.learnability_weight * 1.0 + cfg.grounding_weight * 1.0  # p = 0.5: full learnability, grounded
    assert dict(reward.reasons) == {"out_of_range": 1, "malformed": 1, "ok": 1}
