"""The frozen answerer's solve-rate estimate: the configured number of episodes per distinct task."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from osint_selfplay import data, solver
from osint_selfplay.config import load_config
from osint_selfplay.solver import SolverSampler
from osint_selfplay.worlds import WorldPool

from .conftest import TINY


@pytest.fixture(scope="module")
def cfg():
    return load_config(None, ["answerer.mode='multi_turn'", "answerer.observation_format='compact'",
                              "answerer.action_format='short'", "generator.solver_samples=8",
                              "generator.solver_temperature=1.6", f"model.answerer='{TINY}'", "train_worlds=2"])


def test_the_sampler_plays_the_configured_episodes_of_each_distinct_task_once(cfg, tiny_path, monkeypatch):
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    items = data.seed_tasks(pool, cfg, 3, 0)
    played = []

    def fake_run(policy, pairs, *, spec, batch_size):
        played.append([t.task_id for _, t in pairs])
        # the i-th episode of a task is solved when i < (task's position + 1) * 2
        order = {t.task_id: j for j, (_, t) in enumerate(items)}
        counts: dict[str, int] = {}
        out = []
        for _, t in pairs:
            i = counts[t.task_id] = counts.get(t.task_id, -1) + 1
            out.append(SimpleNamespace(correct=i < (order[t.task_id] + 1) * 2))
        return out

    monkeypatch.setattr(solver, "run_multi_turn_items", fake_run)
    sampler = SolverSampler.from_config(cfg, tiny_path, seed=0)
    assert (sampler.k, sampler.temperature, sampler.workers) == (8, 1.6, 1)
    assert sampler.policy.temperature == 1.6
    rates = sampler.solve_rates([items[0], items[1], items[0], items[2]])  # the first task listed twice
    assert len(played) == 1 and len(played[0]) == 3 * 8  # three distinct tasks, 8 episodes each, one call
    assert played[0] == [t.task_id for _, t in items for _ in range(8)]
    assert rates == [2 / 8, 4 / 8, 2 / 8, 6 / 8]
    sampler.close()


def test_the_sampler_takes_its_settings_from_the_generator_table(cfg, tiny_path):
    sampler = SolverSampler.from_config(cfg, tiny_path, seed=3, temperature=0.7)
    assert (sampler.k, sampler.temperature, sampler.seed) == (8, 0.7, 3)  # an explicit temperature wins
    assert sampler.spec == cfg.answerer.episode_spec()
    sampler.close()
