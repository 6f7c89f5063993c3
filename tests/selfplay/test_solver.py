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
    return load_config(None, ["answerer.mode='multi_turn'", "episode.observation_format='compact'",
                              "episode.action_format='short'", "generator.solver_samples=8",
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
    assert sampler.spec == cfg.episode.spec()
    sampler.close()


def test_a_generated_task_is_verified_once_for_the_answerers_budgets(cfg, tiny_path, monkeypatch):
    """A proposal comes back stamped (default budgets); the sampler verifies it once under the answerer's compact
    budgets and returns it with that stamp and its rate, so the answerer's rows take it without verifying again."""
    from osint_gym import proposals
    from osint_gym.tasks import verify as verify_module
    from osint_gym.tasks.task import DEFAULT_BUDGETS
    from osint_gym.tasks.verify import world_fingerprint

    pool = WorldPool(cfg.train_worlds, cfg.seed)
    world = pool.pick(0)
    offer = proposals.make_offer(world, 5, 0, mode="choose", max_hops=2)
    verdict, task = proposals.validate_proposal(world, proposals.parse_proposal("P: 1"), offer=offer, max_hops=2)
    assert verdict.ok and task is not None
    fp = world_fingerprint(world)
    assert task.verified_for(fp, DEFAULT_BUDGETS)  # the proposal's validation is its stamp
    spec = cfg.episode.spec()
    assert not task.verified_for(fp, spec.budgets)  # compact observations: a stamp covers only its own format

    calls = []
    real = verify_module.verify_task

    def counting(*args, **kwargs):
        calls.append(kwargs.get("observation_format"))
        return real(*args, **kwargs)

    monkeypatch.setattr(verify_module, "verify_task", counting)
    monkeypatch.setattr(solver, "run_multi_turn_items",
                        lambda policy, pairs, *, spec, batch_size: [SimpleNamespace(correct=True)] * len(pairs))
    sampler = SolverSampler.from_config(cfg, tiny_path, seed=0)
    (rated,) = sampler.rate([(world, task)])
    sampler.close()
    assert calls == ["compact"] and rated.provenance["solve_rate"] == 1.0 and rated.question == task.question
    rows, dropped = data.multi_turn_rows(pool, cfg, [(world, rated, "generated")])
    assert calls == ["compact"] and dropped == 0 and len(rows) == 1  # the rows trust the sampler's stamp
