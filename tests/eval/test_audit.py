"""The shortcut audit: on every v1 split, in both single-turn context modes, no rule that reads counts,
positions or adjacency of the context's ids, and no named shortcut baseline, is more than 5 points from
the uniform type-correct guess; the audit itself answers what its rules say, and finds v0's leak."""

from __future__ import annotations

import pytest

from osint_eval.audit import FEATURES, audit, largest_gap
from osint_eval.baselines import SINGLE_TURN_SHORTCUTS
from osint_eval.policies import PolicyInput, make_policy
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.card import MEASURED
from osint_gym.schema import Edge
from osint_gym.single_turn import Context, build_context, score_completion

# rules that read which entities the question names: counting the named entities a candidate touches
# answers a question that names several (the gold is the one that meets all of them), so those are
# bounded one way only, on questions that name one entity
QUESTION_READING = ("next-to-named:max", "next-to-named:min")


def _rates(ref, mode):
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    contexts = [build_context(world, t, mode=mode) for t in tasks]
    return tasks, world, contexts, {r.rule: r.rate for r in audit(world, tasks, contexts)}


def _named_baselines(tasks, world, contexts):
    """The seeded success of random-guess and every single-turn shortcut baseline on these contexts."""
    batch = [PolicyInput([], t, world, i, 0, context=c) for i, (t, c) in enumerate(zip(tasks, contexts))]
    rates = {}
    for name in ("random-guess", *SINGLE_TURN_SHORTCUTS):
        answers = make_policy(name).act(batch)
        rates[name] = sum(score_completion(t, a, c).correct for t, c, a in zip(tasks, contexts, answers)) / len(tasks)
    return rates


@pytest.mark.parametrize("mode", ["triples", "records"])
@pytest.mark.parametrize("ref", ["v1:dev", "v1:test", "v1:hard"])
def test_no_shortcut_rule_is_more_than_5_points_from_the_uniform_guess_on_v1(ref, mode):
    tasks, world, contexts, rates = _rates(ref, mode)
    uniform = rates["uniform"]
    assert 0.05 < uniform < 0.2 and len(rates) == 1 + 2 * len(FEATURES)
    far = {r: round(100 * (v - uniform), 1) for r, v in rates.items()
           if r not in QUESTION_READING and abs(v - uniform) > 0.05}
    assert far == {}, (ref, mode, 100 * uniform)
    assert rates["next-to-named:min"] - uniform <= 0.05
    card = MEASURED[ref]["single_turn"][mode]  # the benchmark card's figures are these
    rule, rate = card["farthest_rule"]
    assert card["uniform"] == pytest.approx(uniform, abs=1e-4) and rates[rule] == pytest.approx(rate, abs=1e-4)
    for name, rate in _named_baselines(tasks, world, contexts).items():
        assert abs(rate - uniform) <= 0.05, (ref, mode, name, rate, uniform)
        assert card["baselines"][name] == pytest.approx(rate, abs=1e-4)


@pytest.mark.parametrize("ref", ["v1:test", "v1:hard"])
def test_touching_the_named_entity_says_nothing_on_questions_that_name_one(ref):
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    one = [t for t in tasks if len(t.query.named_entities()) == 1]
    for mode in ("triples", "records"):
        rows = {r.rule: r.rate for r in audit(world, one, [build_context(world, t, mode=mode) for t in one])}
        assert all(rows[r] - rows["uniform"] <= 0.05 for r in QUESTION_READING), (mode, rows)


def test_the_audit_finds_v0_triples_leak_that_the_named_baselines_missed():
    *_, rates = _rates("v0:test", "triples")
    # v0 writes the question's entities by name, and the decoys' starts, not their filter values: the gold
    # is the candidate with the most neighbours written by name
    assert rates["next-to-name:max"] - rates["uniform"] > 0.10


def test_audit_rules_answer_what_their_features_say():
    tasks = benchmark_tasks("v1:dev", limit=40)
    world = benchmark_world("v1:dev")
    task = next(t for t in tasks if t.answer_type == "person")
    others = [p for p in world.ids("person") if p != task.answer and world.surface(p) not in task.question][:2]
    loc, org = (next(x for x in world.ids(kind) if world.surface(x) not in task.question)
                for kind in ("location", "organization"))
    edges = (Edge(task.answer, "lives_in", loc), Edge(others[0], "lives_in", loc), Edge(task.answer, "works_at", org),
             Edge(others[1], "knows", others[0]))
    ctx = Context("", edges, (task.answer, loc, others[0], org, others[1]))
    rates = {r.rule: r.rate for r in audit(world, [task], [ctx])}
    # the gold: 2 mentions, first position, head of 2 edges; others[0]: 2 mentions; others[1]: 1, last
    assert rates["uniform"] == pytest.approx(1 / 3)
    assert rates["mentions:max"] == pytest.approx(1 / 2) and rates["mentions:min"] == 0.0
    assert rates["first-position:min"] == 1.0 and rates["first-position:max"] == 0.0
    assert rates["as-head:max"] == 1.0 and rates["relations:max"] == pytest.approx(1 / 2)
    assert largest_gap(audit(world, [task], [ctx])).rule in {"first-position:min", "as-head:max", "relations:max"}


V2 = ("v2:dev", "v2:test", "v2:hard")


@pytest.mark.slow
@pytest.mark.xdist_group("v2-splits")
@pytest.mark.parametrize("mode", ["triples", "records"])
@pytest.mark.parametrize("ref", V2)
def test_every_rule_and_next_to_named_are_within_5_points_of_the_uniform_guess_on_v2(ref, mode):
    """v2's gate: the question-reading rules too, both ways (v1 bounded them on one-name questions only)."""
    tasks, world, contexts, rates = _rates(ref, mode)
    uniform = rates["uniform"]
    far = {r: round(100 * (v - uniform), 1) for r, v in rates.items() if abs(v - uniform) > 0.05}
    assert far == {}, (ref, mode, 100 * uniform)
    card = MEASURED[ref]["single_turn"][mode]
    assert card["uniform"] == pytest.approx(uniform, abs=1e-4)
    assert card["question_reading"]["next-to-named:max"] == pytest.approx(rates["next-to-named:max"], abs=1e-4)
    for name, rate in _named_baselines(tasks, world, contexts).items():
        assert abs(rate - uniform) <= 0.05, (ref, mode, name, rate, uniform)
        assert card["baselines"][name] == pytest.approx(rate, abs=1e-4)


@pytest.mark.slow
@pytest.mark.xdist_group("v2-splits")
@pytest.mark.parametrize("ref", V2)
def test_scripted_multi_turn_baselines_stay_at_most_15_percent_and_the_oracle_at_least_97_on_v2(ref):
    from osint_eval.baselines import MULTI_TURN_SHORTCUTS
    from osint_eval.runner import run_multi_turn

    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    rates = {name: sum(r.correct for r in run_multi_turn(make_policy(name), world, tasks)) / len(tasks)
             for name in ("oracle", *MULTI_TURN_SHORTCUTS)}
    assert rates["oracle"] >= 0.97 and max(rates[n] for n in MULTI_TURN_SHORTCUTS) <= 0.15, rates
    assert rates == pytest.approx({n: MEASURED[ref]["multi_turn"][n] for n in rates}, abs=1e-9)
