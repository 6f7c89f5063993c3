from __future__ import annotations

import json

import pytest

from osint_eval.evaluate import evaluate
from osint_eval.metrics import compare, summarize
from osint_eval.policies import OraclePolicy, RandomGuessPolicy, RandomValidPolicy, make_policy
from osint_eval.runner import run_multi_turn, run_single_turn
from osint_eval.tasks import load_tasks
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets


@pytest.fixture(scope="module")
def dev():
    return load_tasks("v0:dev", limit=90)


def test_oracle_is_the_upper_bound_in_both_modes(dev):
    single = run_single_turn(OraclePolicy(), dev.world, dev.tasks)
    multi = run_multi_turn(OraclePolicy(), dev.world, dev.tasks, batch_size=16)
    assert all(r.correct for r in single) and all(r.correct for r in multi)
    assert all(r.evidence_f1 == 1.0 for r in single + multi)
    assert all(r.steps >= 2 and r.tool_calls >= 1 for r in multi)
    assert [r.task_id for r in multi] == [t.task_id for t in dev.tasks]


def test_multi_turn_runs_in_the_compact_rendering_under_its_budgets(dev):
    from osint_gym.errors import TaskError
    from osint_gym.tasks import verified

    budgets = Budgets(24, 4, 2000, "compact")
    tasks = []
    for t in dev.tasks[:30]:  # the tasks the oracle can solve when served this way (the runner verifies)
        try:
            tasks.append(verified(dev.world, t, budgets))
        except TaskError:
            continue
    assert len(tasks) >= 25
    spec = EpisodeSpec(Budgets(max_observation_chars=2000, observation_format="compact"), action_format="short")
    multi = run_multi_turn(OraclePolicy(), dev.world, tasks, spec=spec, batch_size=8)
    assert all(r.correct for r in multi)
    observations = [turn["observation"] for r in multi for turn in r.transcript]
    assert all(o.startswith("step ") and len(o) <= 2000 for o in observations)


def test_random_guess_is_chance_level_and_sees_only_the_context(dev):
    results = run_single_turn(RandomGuessPolicy(0), dev.world, dev.tasks)
    rate = sum(r.correct for r in results) / len(results)
    assert 0.15 < rate < 0.7
    for r in results:
        context = r.transcript[0]["observation"]
        assert r.submitted in context
    multi = run_multi_turn(RandomGuessPolicy(0), dev.world, dev.tasks)
    assert sum(r.correct for r in multi) < sum(r.correct for r in results)
    assert all(r.steps <= 2 for r in multi)


def test_random_valid_actions_are_valid(dev):
    multi = run_multi_turn(RandomValidPolicy(0), dev.world, dev.tasks[:30])
    assert all(r.parse_failures == 0 for r in multi)
    assert sum(r.correct for r in multi) < 15


def test_summaries_carry_n_and_intervals_by_group(dev):
    results = run_single_turn(OraclePolicy(), dev.world, dev.tasks)
    s = summarize(results)
    assert s.overall.n == 90 and s.overall.success.mean == 1.0
    assert sum(b.n for b in s.by_difficulty.values()) == 90
    assert sum(b.n for b in s.by_family.values()) == 90
    for block in list(s.by_difficulty.values()) + list(s.by_family.values()):
        assert block.success.n == block.n


def test_compare_is_paired_and_by_group(dev):
    oracle = run_single_turn(OraclePolicy(), dev.world, dev.tasks)
    guess = run_single_turn(RandomGuessPolicy(0), dev.world, dev.tasks)
    c = compare(guess, oracle)
    assert c.overall.n == 90 and c.overall.success_delta.lo > 0
    assert c.overall.mcnemar.base_only == 0 and c.overall.mcnemar.p_value < 0.01
    with pytest.raises(ValueError, match="same tasks"):
        compare(guess[:10], oracle)


def test_task_sources(tmp_path):
    from osint_gym.tasks import save_jsonl

    hard = load_tasks("v0:dev", difficulty="hard", family="network_discovery", limit=5)
    assert len(hard.tasks) == 5 and {t.family for t in hard.tasks} == {"network_discovery"}
    path = tmp_path / "t.jsonl"
    save_jsonl(hard.tasks, str(path))
    back = load_tasks(str(path))
    assert back.world_ref == "v0:dev" and [t.task_id for t in back.tasks] == [t.task_id for t in hard.tasks]
    # a task that does not belong to the given world is dropped and counted
    other = load_tasks(str(path), world="v0:test")
    assert other.tasks == [] and sum(other.rejected.values()) == 5


@pytest.mark.parametrize(("source", "message"), [("v0:nope", "unknown split"), ("missing.jsonl", "does not exist"),
                                                 ("v9:test", "unknown benchmark")])
def test_bad_task_sources(source, message):
    from osint_eval.errors import EvalError

    with pytest.raises(EvalError, match=message):
        load_tasks(source)


def test_evaluate_builds_a_complete_report(dev):
    report = evaluate({"oracle": OraclePolicy(), "guess": RandomGuessPolicy(1)}, dev, comparisons=[("guess", "oracle")],
                      progress=False, seed=3)
    assert report.tasks.n == 90 and report.seed == 3 and report.dry_run is False
    assert set(report.models) == {"oracle", "guess"} and "oracle vs guess" in report.comparisons
    assert report.versions["osint-gym"] and len(report.episodes["guess"]) == 90
    json.dumps(report.to_dict())


def test_make_policy_specs():
    assert isinstance(make_policy("random-guess"), RandomGuessPolicy)
    assert isinstance(make_policy("oracle"), OraclePolicy)
    from osint_eval.errors import EvalError

    with pytest.raises(EvalError, match="openai:<base_url>#<model>"):
        make_policy("openai:http://x")
    with pytest.raises(EvalError, match="does not exist"):
        make_policy("./no/such/model")


def test_a_multi_turn_row_wraps_the_envs_episode_record(dev):
    """The runner's row keeps the env's own record (turn errors and parallel calls included) and reads its figures
    from it; the report's row is the flat part, and reads back equal."""
    from osint_eval.runner import EpisodeResult

    (result,) = run_multi_turn(OraclePolicy(), dev.world, dev.tasks[:1])
    record = result.record
    assert record is not None and record.task.task_id == result.task_id == dev.tasks[0].task_id
    assert (result.steps, result.tool_calls, result.reward, result.correct, result.end) == (
        record.critical_steps, record.tool_calls, record.reward, record.correct, record.end)
    assert [t["action"] for t in result.transcript] == [t.action for t in record.turns]
    assert all(t.error is None for t in record.turns) and record.parallel_calls >= 0
    row = result.to_dict()
    assert "record" not in row and json.loads(json.dumps(row)) == row
    back = EpisodeResult(**row)
    assert back == result and back.record is None
    (single,) = run_single_turn(OraclePolicy(), dev.world, dev.tasks[:1])
    assert single.record is None and single.correct
