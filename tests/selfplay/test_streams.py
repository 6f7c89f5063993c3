"""Named data streams: the items each phase of a run draws never overlap across phases."""

from __future__ import annotations

import json

from osint_selfplay import data, streams
from osint_selfplay.config import load_config
from osint_selfplay.evaluate import heldout_tasks
from osint_selfplay.worlds import TRAIN_SEED_BASE, WorldPool

from .conftest import micro_overrides


def _questions(rows):
    return {(r["world_seed"], json.loads(r["task"])["question"]) for r in rows}


def _user_prompts(rows):
    return {json.dumps(r["prompt"], sort_keys=True) for r in rows}


def test_train_warm_start_generator_sample_and_evaluation_streams_never_overlap(tmp_path):
    cfg = load_config(
        None,
        micro_overrides(
            tmp_path,
            **{
                "warm_start.answerer_examples": 48,
                "warm_start.generator_examples": 24,
                "answerer.tasks_per_round": 24,
                "answerer.generated_share": 0,
                "generator.prompts_per_round": 16,
                "generator.sample_tasks": 16,
                "eval.limit": 60,
            },
        ),
    )
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    train = [data.mix_answerer_rows(pool, cfg, [], r, streams.TRAIN)[0] for r in (0, 1)]
    train_first = data.mix_answerer_rows(pool, cfg, [], 0, streams.TRAIN_FIRST)[0]
    task_rows = {"train r0": train[0], "train r1": train[1], "train_first r0": train_first}
    warm = data.sft_answerer_rows(pool, cfg)
    offers = {"generator r0": data.generator_rows(pool, cfg, 0), "generator r1": data.generator_rows(pool, cfg, 1),
              "sample r0": data.sample_rows(pool, cfg, 0), "sample r1": data.sample_rows(pool, cfg, 1)}
    warm_offers = data.sft_generator_rows(pool, cfg)

    # answerer tasks: the questions (in their world) of every training set are disjoint, and no
    # warm-start demonstration shows the prompt of a training task
    names = list(task_rows)
    for i, a in enumerate(names):
        assert len(_questions(task_rows[a])) == len(task_rows[a]), a
        for b in names[i + 1:]:
            assert not _questions(task_rows[a]) & _questions(task_rows[b]), (a, b)
    warm_prompts = _user_prompts(warm)
    assert len(warm_prompts) == len(warm) == 48
    for name, rows in task_rows.items():
        assert not _user_prompts(rows) & warm_prompts, name
    # generator offers: every offer is drawn under its own stream's id, never another stream's
    offer_ids = {name: {json.loads(r["offer"])["offer_id"] for r in rows} for name, rows in offers.items()}
    warm_offer_rows = data.offer_rows(pool, cfg, 0, len(warm_offers), streams.WARM_START_GENERATOR)
    assert [r["prompt"] for r in warm_offer_rows] == [
        r["prompt"] for r in warm_offers
    ]  # the offers the warm start phrased
    offer_ids["warm_start"] = {json.loads(r["offer"])["offer_id"] for r in warm_offer_rows}
    for i, a in enumerate(offer_ids):
        assert len(offer_ids[a]) == len(offers.get(a, warm_offers)), a
        for b in list(offer_ids)[i + 1:]:
            assert not offer_ids[a] & offer_ids[b], (a, b)
    # ... and what the models see differs too. Four small worlds hold few distinct short paths, so
    # independent draws coincide by chance (1 of 16 here); a stream overlapping another would
    # repeat every one of its items.
    seen = {name: _user_prompts(rows) for name, rows in offers.items()} | {"warm_start": _user_prompts(warm_offers)}
    for i, a in enumerate(seen):
        for b in list(seen)[i + 1:]:
            assert len(seen[a] & seen[b]) <= 2, (a, b, len(seen[a] & seen[b]))
    # evaluation: the benchmark's held-out tasks live in a world no training stream uses
    held = heldout_tasks(cfg.eval.tasks, cfg.eval.difficulties, cfg.eval.limit)
    assert len(held) == 60
    eval_worlds = {t.provenance["world_seed"] for t in held}
    assert eval_worlds.isdisjoint(pool.seeds) and min(pool.seeds) >= TRAIN_SEED_BASE > max(eval_worlds)
    train_ids = {json.loads(r["task"])["task_id"] for rows in task_rows.values() for r in rows}
    assert train_ids.isdisjoint(t.task_id for t in held)


def test_stream_seeds_are_named_not_offset():
    names = (streams.TRAIN, streams.TRAIN_FIRST, streams.WARM_START, streams.WARM_START_GENERATOR, streams.GENERATOR,
             streams.SAMPLE, streams.GENERATE, streams.WORLDS)
    assert len({streams.stream_seed(0, name) for name in names}) == len(names)
    seeds = {streams.stream_seed(0, s, i) for s in ("grpo_generator", "grpo_answerer", "solver") for i in range(50)}
    assert len(seeds) == 150 and all(0 <= s < 2**31 for s in seeds)
    assert (
        streams.stream_seed(0, "solver", 1)
        == streams.stream_seed(0, "solver", 1)
        != streams.stream_seed(1, "solver", 0)
    )
    # training worlds of different run seeds are different worlds (offsets 1000 * seed + k overlapped)
    assert set(WorldPool(40, 0).seeds).isdisjoint(WorldPool(40, 1).seeds)
    assert len(set(WorldPool(40, 0).seeds)) == 40


def test_demonstrations_stay_at_their_difficulties_and_the_imitation_references_hard_ones_are_their_own():
    """The warm start demonstrates warm_start.difficulties only, whatever the answerer's seed tasks hold; the
    imitation reference's hard demonstrations come from a stream of their own."""
    cfg = load_config(None, ["answerer.mode='multi_turn'", "episode.observation_format='compact'",
                             "episode.action_format='short'", "answerer.seed_difficulties=['easy','medium','hard']",
                             "warm_start.answerer_examples=24", "train_worlds=4"])
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    assert cfg.warm_start.difficulties == ["easy", "medium"]
    warm = [t for _, t in data.seed_tasks(pool, cfg, 24, 0, streams.WARM_START,
                                          difficulties=cfg.warm_start.difficulties)]
    assert {t.difficulty for t in warm} == {"easy", "medium"}
    rows, counts = data.sft_multi_turn_rows(pool, cfg)
    hard_rows, hard_counts = data.hard_demonstrations(pool, cfg, 12)
    assert counts.episodes == 24 and hard_counts.episodes == 12 and hard_rows
    def questions(rows):  # the reset observation (the question), after any system message
        return {next(m["content"] for m in r["messages"] if m["role"] == "user") for r in rows}

    assert len(questions(rows)) == len(rows) and not questions(rows) & questions(hard_rows)
    seeds = data.seed_tasks(pool, cfg, 12, 0, streams.IMITATION, difficulties=["hard"])
    assert {t.difficulty for _, t in seeds} == {"hard"}
