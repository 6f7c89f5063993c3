"""The climb's rungs in osint-selfplay: the generator picks a path and the steps the answerer plays, its reward and
the curriculum's bins are per rung, R3's fixed schedule slides its seed tasks from the last step back to the whole
episode, training worlds take benchmark v2's settings, and the claims name their split."""

from __future__ import annotations

import random

import pytest

from osint_gym import proposals
from osint_gym.benchmark import BENCHMARKS
from osint_selfplay import data, streams
from osint_selfplay.claims import NAMES, paired_line
from osint_selfplay.config import GeneratorConfig, load_config
from osint_selfplay.curriculum import FrontierCurriculum, choice_bin, picks
from osint_selfplay.errors import ConfigError
from osint_selfplay.grpo_config import GRPOPhaseConfig
from osint_selfplay.rewards import GeneratorReward
from osint_selfplay.worlds import WorldPool

from .test_rewards import FixedSolver, _msg

MULTI = ["answerer.mode='multi_turn'", "canonical_graph_mode='choose'", "episode.observation_format='compact'",
         "episode.action_format='short'", "episode.max_steps=8", "episode.max_observation_chars=4000"]


@pytest.fixture(scope="module")
def cfg():
    return load_config(None, [*MULTI, "generator.rungs=true", "generator.max_hops=3", "generator.offer_filters=true",
                              "train_world='v2'", "train_worlds=2"])


@pytest.fixture(scope="module")
def pool(cfg):
    return WorldPool.for_run(cfg)


@pytest.fixture(scope="module")
def offer(cfg, pool):
    return proposals.make_offer(pool.pick(0), 5, 0, mode="choose", max_hops=3, filters=True, choices=4,
                                rungs=cfg.budgets())


def test_config_rules_for_rungs_worlds_and_the_reverse_schedule():
    for bad, match in (
        (["generator.rungs=true"], "generator.rungs needs canonical_graph_mode = 'choose'"),
        (["canonical_graph_mode='choose'", "generator.rungs=true"], "generator.rungs plays multi-turn episodes"),
        (["answerer.reverse_control=true"], "answerer.reverse_control plays multi-turn episodes"),
        (["train_world='v3'"], "train_world must be one of 'v0', 'v1', 'v2'; got 'v3'"),
    ):
        with pytest.raises(ConfigError, match=match):
            load_config(None, ["eval.curve_tasks=0", *bad] if "multi_turn" not in " ".join(bad) else bad)


def test_training_worlds_take_the_benchmark_versions_settings_on_seeds_of_their_own(cfg, pool):
    assert pool.config == BENCHMARKS["v2"].world_config and pool.config.decoy_density == 0.8
    assert pool.minimal_constraints
    split_seeds = {s.world_seed for b in BENCHMARKS.values() for s in b.splits.values()}
    assert not split_seeds & set(pool.seeds)
    default = WorldPool.for_run(load_config(None))
    assert default.config == BENCHMARKS["v0"].world_config and not default.minimal_constraints
    (world, task), = data.seed_tasks(pool, cfg, 1, 0)
    assert world.config.decoy_density == 0.8 and task.query is not None


def test_the_curriculum_picks_rungs_and_bins_them_by_steps_left(offer):
    options = picks(offer)
    assert options == [(k, left) for k, steps in enumerate(offer.steps, 1) for left in range(1, steps + 1)]
    bins = {choice_bin(offer, *refs) for refs in options}
    assert {b.left for b in bins} == {min(5, left) for _, left in options}
    assert choice_bin(offer, 1) == choice_bin(offer, 1, offer.steps[0])  # no steps named: the whole episode
    cur = FrontierCurriculum.from_observations(
        [{"bin": choice_bin(offer, 1, 1).key(), "solved": 50, "played": 100},
         {"bin": choice_bin(offer, 1, offer.steps[0]).key(), "solved": 0, "played": 100}])
    assert cur.rate(choice_bin(offer, 1, 1)) == pytest.approx(51 / 102)
    drawn = [cur.pick(offer, random.Random(s)) for s in range(300)]
    assert all(len(d) == 2 for d in drawn) and (1, 1) in drawn


def test_the_generator_reward_plays_each_rung_and_observes_it_in_its_bin(cfg, pool, offer):
    solver = FixedSolver(0.5, k=8)
    reward = GeneratorReward(pool, GeneratorConfig(), solver)
    steps = offer.steps[0]
    texts = [f"P: 1 {steps}", "P: 1 1", "P: 1 1", "P: 1"]  # the whole episode twice (P: 1 is P: 1 steps), one rung
    out = reward(prompts=[None] * 4, completions=[_msg(t) for t in texts], offer=[offer.to_json()] * 4,
                 world_seed=[pool.pick(0).seed] * 4)
    assert solver.calls == [2] and sorted(t.start_depth for _, t in solver.seen) == [0, steps - 1]
    assert [o["bin"] for o in reward.observations] == [choice_bin(offer, 1, steps).key(), choice_bin(offer, 1, 1).key()]
    assert all(v > 0 for v in out)


def test_r3_slides_the_start_from_the_last_step_back_to_the_whole_episode(pool):
    cfg = load_config(None, [*MULTI, "rounds=2", "train_world='v2'", "train_worlds=2"])
    assert data.REVERSE_STAGES == 4
    items = [(w, t, "seed") for w, t in data.seed_tasks(pool, cfg, 8, 0, difficulties=["medium", "hard"])]
    staged = [data.reverse_rungs(cfg, items, r) for r in range(2)]
    spec = cfg.episode.spec()
    for r, rows in enumerate(staged):
        for i, (world, task, _) in enumerate(rows):
            stage = (r * 8 + i) * 4 // 16
            steps = data.demonstration_steps(world, items[i][1], spec)
            if stage == 3 or steps is None:
                assert task.start_depth == 0
            else:
                assert task.start_depth == max(0, steps - stage - 1) and task.provenance["demonstration_steps"] == steps
                assert task.stamp is None  # its rows verify it with its rung
    first, last = staged[0][0][1], staged[1][-1][1]
    assert first.start_depth > 0 and last.start_depth == 0
    ordered = data.in_order(GRPOPhaseConfig(max_steps=3))
    assert ordered.shuffle_dataset is False and ordered.max_steps == 3


def test_the_claims_name_every_arm_and_their_split():
    assert NAMES == ("generator_reward_last_vs_first_quarter", "frontier_share_last_round", "hard_final_vs_warm_start",
                     "hard_final_vs_sft_control", "hard_final_vs_uniform_control", "hard_final_vs_curriculum_control",
                     "hard_final_vs_reverse_schedule", "hard_final_vs_imitation_reference", "easy_medium_final",
                     "easy_medium_final_vs_warm_start")
    from osint_eval.schema import Estimate, McNemar, PairedBlock
    from osint_selfplay.results import SubsetFigures

    block = PairedBlock(n=893, success_delta=Estimate(0.047, 0.031, 0.064, 893), reward_delta=None,
                        steps_delta=None, tool_calls_delta=None, mcnemar=McNemar(50, 8, 893, 1e-8))
    hard = SubsetFigures(difficulties=["hard"], n_tasks=893, splits=["v2:test", "v2:hard"],
                         comparisons={"final vs warm_start": block})
    assert paired_line(hard, "final vs warm_start") == (
        "+4.7 pts [+3.1, +6.4] (n=893) on v2:test + v2:hard, McNemar p=1e-08")
    assert paired_line(hard, "final vs reverse_control").startswith("not run: hatch run train-controls")


@pytest.mark.slow
def test_gold_proposals_with_rungs_do_not_depend_on_the_number_of_worker_processes(cfg, pool):
    """With rungs an offer's paths are demonstrated (about 0.5 s an offer), so warm_start.workers processes share
    the gold proposals: the rows are those of one process, in the same order, each naming a rung of its path."""
    import dataclasses

    def rows(workers):
        ws = dataclasses.replace(cfg.warm_start, generator_examples=6, workers=workers)
        return data.sft_generator_rows(pool, dataclasses.replace(cfg, warm_start=ws))

    one, two = rows(1), rows(2)
    assert len(one) == 6 and one == two
    offers = data.offer_rows(pool, cfg, 0, 6, streams.WARM_START_GENERATOR)
    for row, offered in zip(one, offers):
        assert row["prompt"] == offered["prompt"]  # row i is offer i's
        offer = proposals.Offer.from_json(offered["offer"])
        k, left = map(int, row["completion"][0]["content"].removeprefix("P:").split())
        assert 1 <= k <= len(offer.choices) and 1 <= left <= offer.steps[k - 1]  # a rung of the path it names
