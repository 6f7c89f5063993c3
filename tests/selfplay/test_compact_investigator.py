"""The compact rendering and short action syntax reach multi-turn training and evaluation."""

from __future__ import annotations

import json

from osint_gym import chat
from osint_gym.compact import parse_compact
from osint_gym.tasks import verified
from osint_selfplay import data
from osint_selfplay.config import load_config
from osint_selfplay.worlds import WorldPool

from .conftest import micro_overrides


def _cfg(tmp_path):
    return load_config(None, micro_overrides(tmp_path, **{
        "answerer.mode": "'multi_turn'", "answerer.max_turns": 8, "answerer.max_observation_chars": 1200,
        "answerer.observation_format": "'compact'", "answerer.action_format": "'short'",
        "answerer.tasks_per_round": 6, "answerer.generated_share": 0.0, "answerer.seed_difficulties": "['easy', 'medium']",
        "warm_start.answerer_examples": 12}))


def test_demonstrations_are_compact_observations_and_short_actions(tmp_path):
    cfg = _cfg(tmp_path)
    rows, counts = data.sft_multi_turn_rows(WorldPool(cfg.train_worlds, cfg.seed), cfg)
    assert len(rows) >= 10  # the oracle solves (nearly) every easy/medium task under these budgets
    for row in rows:
        msgs = row["messages"]
        assert msgs[0] == chat.system_message(short=True)
        actions = [m["content"] for m in msgs if m["role"] == "assistant"]
        assert not any(a.lstrip().startswith("{") for a in actions)  # short syntax, not JSON
        assert actions[-1].splitlines()[-1].startswith("answer ")
        for m in msgs[2:]:
            if m["role"] == "user":  # observations: compact lines that parse back into records
                assert m["content"].startswith("step ") and len(m["content"]) <= 1200
                parse_compact(m["content"])


def test_round_rows_are_verified_under_the_compact_budget(tmp_path):
    cfg = _cfg(tmp_path)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, counts = data.mix_answerer_rows(pool, cfg, [], 0)
    assert counts["rows"] == len(rows) >= 5 and counts["unsolvable_under_budget"] + len(rows) <= 6
    budgets = data.answerer_budgets(cfg)
    assert budgets.observation_format == "compact" and budgets.max_observation_chars == 1200
    for row in rows:
        task = json.loads(row["task"])
        assert row["prompt"][0] == chat.system_message(short=True)
        assert json.loads(task["stamp"])["budgets"]["observation_format"] == "compact"
        world = pool.world(row["world_seed"])
        from osint_gym.tasks import Task

        t = Task.from_dict(task)
        assert verified(world, t, budgets) is t  # the stamp covers the served budgets: nothing re-verified
