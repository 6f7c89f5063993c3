"""Dynamic sampling of the answerer's seed tasks: candidates the current answerer always or never
solves (a GRPO group on them has no reward variance) are replaced by the next candidates, and counted."""

from __future__ import annotations

import json

import pytest

from osint_selfplay import data, streams
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError
from osint_selfplay.report import format_summary
from osint_selfplay.worlds import WorldPool

from .conftest import micro_overrides


def _cfg(tmp_path, candidates):
    return load_config(None, micro_overrides(tmp_path, **{
        "answerer.tasks_per_round": 4, "answerer.generated_share": 0.0, "answerer.seed_candidates": candidates}))


class _Rates:
    """A scripted answerer: the i-th candidate's solve rate is ``rates[i]``; it records what it played."""

    def __init__(self, rates):
        self.rates, self.played = rates, []

    def __call__(self, items):
        self.played.append([t.task_id for _, t in items])
        return self.rates[: len(items)]


def _ids(rows):
    return sorted(json.loads(r["task"])["task_id"] for r in rows)


def test_the_first_mixed_candidates_replace_the_zero_variance_ones(tmp_path):
    cfg = _cfg(tmp_path, 3)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rates = _Rates([1.0, 0.0, 0.5, 1.0, 0.25, 0.0, 0.0, 1.0, 0.75, 0.5, 0.0, 1.0])
    rows, mix = data.mix_answerer_rows(pool, cfg, [], 0, streams.TRAIN, rates)
    candidates = data.seed_tasks(pool, cfg, 12, 0, streams.TRAIN)
    assert rates.played == [[t.task_id for _, t in candidates]]  # one pre-pass over all 12 candidates
    assert _ids(rows) == sorted(candidates[i][1].task_id for i in (2, 4, 8, 9))
    dyn = mix.dynamic_sampling
    assert dyn is not None and (dyn.candidates, dyn.all_solved, dyn.none_solved) == (12, 4, 4)
    assert (dyn.replaced, dyn.unreplaced) == (3, 0)  # candidates 0, 1 and 3 were zero-variance
    assert dyn.mean_rate_candidates == pytest.approx(6.0 / 12) and dyn.mean_rate_kept == pytest.approx(0.5)
    assert sum(dyn.kept_difficulties.values()) == 4 and mix.seed == 4


def test_too_few_mixed_candidates_are_filled_by_zero_variance_ones_and_counted(tmp_path):
    cfg = _cfg(tmp_path, 2)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, mix = data.mix_answerer_rows(pool, cfg, [], 1, streams.TRAIN, _Rates([0.0] * 6 + [0.5, 0.0]))
    candidates = data.seed_tasks(pool, cfg, 8, 1 * 4 * 2, streams.TRAIN)  # round 1's candidates, after round 0's
    assert _ids(rows) == sorted(candidates[i][1].task_id for i in (0, 1, 2, 6))
    dyn = mix.dynamic_sampling
    assert dyn is not None and (dyn.replaced, dyn.unreplaced, dyn.none_solved) == (4, 3, 7) and len(rows) == 4


def test_one_candidate_per_task_plays_nothing_and_keeps_the_plain_seed_tasks(tmp_path):
    cfg = _cfg(tmp_path, 1)
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rates = _Rates([0.5] * 4)
    rows, mix = data.mix_answerer_rows(pool, cfg, [], 0, streams.TRAIN, rates)
    assert rates.played == [] and mix.dynamic_sampling is None
    assert rows == data.mix_answerer_rows(pool, cfg, [], 0, streams.TRAIN)[0]


@pytest.mark.parametrize("bad", ["0", "-2", "1.5", "true"])
def test_a_bad_candidate_count_is_one_config_error(tmp_path, bad):
    with pytest.raises(ConfigError, match=r"^answerer.seed_candidates must be"):
        load_config(None, micro_overrides(tmp_path, **{"answerer.seed_candidates": bad}))


def test_the_round_line_reports_the_replacements():
    dyn = {"candidates": 12, "all_solved": 4, "none_solved": 4, "replaced": 3, "unreplaced": 0,
           "mean_rate_candidates": 0.5, "mean_rate_kept": 0.5, "kept_difficulties": {"easy": 4}, "seconds": 1.25}
    mix = {"generated": 0, "seed": 4, "top_up": 0, "dynamic_sampling": dyn}
    text = format_summary({"rounds": [{"round": 0, "sampled": {}, "generator": {}, "answerer": {"mix": mix}}]})
    assert ("dynamic sampling of seed tasks: 12 candidates played, 4 always and 4 never solved; 3 replaced, "
            "0 unreplaced (too few mixed); mean estimated solve rate 0.500 -> 0.500 kept, in 1.250 s") in text
