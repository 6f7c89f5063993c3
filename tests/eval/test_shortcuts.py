"""Shortcut baselines: what they answer, that no single-turn shortcut beats the uniform type-correct
guess on v0:test, and that every report names the strongest scripted baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osint_eval import policies
from osint_eval.baselines import (
    SHORTCUTS,
    SHORTCUTS_BY_MODE,
    SINGLE_TURN_SHORTCUTS,
    ShortcutPolicy,
    adjacency_is_the_question,
)
from osint_eval.evaluate import evaluate
from osint_eval.policies import PolicyInput, make_policy
from osint_eval.reading import first_reference
from osint_eval.report import baseline_note, markdown, render_html
from osint_eval.runner import run_multi_turn
from osint_eval.schema import Report
from osint_eval.stats import proportion_interval
from osint_eval.tasks import load_tasks
from osint_gym.benchmark import card as benchmark_card
from osint_gym.card import MEASURED
from osint_gym.schema import Edge
from osint_gym.single_turn import Context, build_context, score_completion


@pytest.fixture(scope="module")
def v0_test():
    taskset = load_tasks("v0:test")
    contexts = [build_context(taskset.world, t) for t in taskset.tasks]
    return taskset, contexts


def _success(policy, taskset, contexts, keep=None):
    batch = [
        PolicyInput([], t, taskset.world, i, 0, context=c) for i, (t, c) in enumerate(zip(taskset.tasks, contexts))
    ]
    answers = policy.act(batch)
    rows = [(t, c, a) for t, c, a in zip(taskset.tasks, contexts, answers) if keep is None or keep(t)]
    return proportion_interval([score_completion(t, a, c).correct for t, c, a in rows])


def test_single_turn_shortcuts_land_within_5_points_of_the_uniform_type_correct_guess(v0_test):
    taskset, contexts = v0_test
    assert len(taskset.tasks) == 1000
    chance = _success(make_policy("random-guess"), taskset, contexts)
    for name in ("most-frequent", "first-mentioned", "last-mentioned"):
        rate = _success(make_policy(name), taskset, contexts)
        assert abs(rate.mean - chance.mean) <= 0.05, (name, rate.fmt(pct=True), chance.fmt(pct=True))
    # adjacency: on every task where the world gives the named start another neighbour of the answer type
    free = lambda t: not adjacency_is_the_question(taskset.world, t)  # noqa: E731
    adjacent, chance_free = (
        _success(p, taskset, contexts, free) for p in (make_policy("adjacent"), make_policy("random-guess"))
    )
    assert adjacent.n == 804 and abs(adjacent.mean - chance_free.mean) <= 0.05, (
        adjacent.fmt(pct=True),
        chance_free.fmt(pct=True),
    )


def test_shortcut_rules_answer_what_their_names_say(world_task):
    world, task = world_task
    start = task.query.start
    p0, p1, p2, p3, p4 = [p for p in world.ids("person") if p != start and p != task.answer][:5]
    loc = next(
        x for x in world.ids("location") if world.surface(x) not in task.question
    )  # a place the question does not name
    edges = (Edge(p0, "knows", p1), Edge(p2, "knows", p1), Edge(p2, "lives_in", loc), Edge(start, "knows", p3),
             Edge(p3, "knows", p4))
    ctx = Context("", edges, (p0, p1, p2, loc, p3, p4))  # the start is named, so not among the ids
    item = PolicyInput([], task, world, 0, 0, context=ctx)
    picks = {name: ShortcutPolicy(name).act([item])[0] for name in SINGLE_TURN_SHORTCUTS}
    # p1 and p3 both appear twice: the tie goes to the first mentioned; p3 is the one person next to the named start
    assert picks == {"most-frequent": p1, "first-mentioned": p0, "last-mentioned": p4, "adjacent": p3}
    assert ShortcutPolicy("adjacent").act(
        [PolicyInput([], task, world, 0, 0, context=Context("", edges[:3], (p0, p1, p2, loc)))]
    )[0] in {p0, p1, p2}


def test_first_reference_and_naive_search_search_once_then_answer_the_first_typed_id():
    assert first_reference("Who operates @lina_brandt?") == "@lina_brandt"
    assert first_reference("Start from Saltor Cloud Hackathon 2024. Take the thread.") == "Saltor Cloud Hackathon 2024"
    assert first_reference("Who wrote thread_6, knowing @ab_c?") == "thread_6"
    assert first_reference("who?") is None
    dev = load_tasks("v0:dev", limit=40)
    results = run_multi_turn(make_policy("naive-search"), dev.world, dev.tasks)
    assert all(r.parse_failures == 0 and r.steps <= 2 for r in results)
    first = json.loads(results[0].transcript[0]["action"])
    assert first == {"tool": "search_threads", "args": {"query": first_reference(dev.tasks[0].question)}}
    assert sum(r.correct for r in results) < 20 and sum(r.tool_calls for r in results) <= 40


def test_every_report_names_the_strongest_scripted_baseline_next_to_each_model(tmp_path):
    dev = load_tasks("v0:dev", limit=60)
    pols = {n: make_policy(n) for n in ("oracle", "random-guess", *SINGLE_TURN_SHORTCUTS)}
    report = evaluate(pols, dev, progress=False)
    scripted = {n: m.overall.success.mean for n, m in report.models.items() if n != "oracle"}
    best = report.strongest_baseline
    assert best is not None and best.name != "oracle" and best.success.mean == max(scripted.values())
    assert best.success.n == 60
    note = baseline_note(report)
    oracle_gap = 100 * (1.0 - best.success.mean)
    assert note is not None and f"oracle +{oracle_gap:.1f} pts" in note and best.name in note
    assert note in markdown(report) and note in render_html(report)
    back = Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert back.strongest_baseline == best
    legacy = report.to_dict()
    del legacy["strongest_baseline"]  # a report written before the field existed still loads
    assert Report.from_dict(legacy).strongest_baseline is None
    assert evaluate({"oracle": make_policy("oracle")}, dev, progress=False).strongest_baseline is None


def test_every_registered_shortcut_is_a_policy_spec_of_its_name_and_mode():
    assert SHORTCUTS_BY_MODE == {"single_turn": ("most-frequent", "first-mentioned", "last-mentioned", "adjacent"),
                                 "multi_turn": ("naive-search", "overlap-search")}
    for name, shortcut in SHORTCUTS.items():
        policy = make_policy(name, seed=3)
        assert (policy.name, policy.seed, shortcut.name) == (name, 3, name) and name in policies.SCRIPTED
        assert len(shortcut.description) > 20
    with pytest.raises(Exception, match="did you mean 'most-frequent'"):
        make_policy("most-frequnt")
    with pytest.raises(ValueError, match="unknown shortcut 'random-guess'; known: most-frequent"):
        ShortcutPolicy("random-guess")


def test_the_card_and_the_readme_name_every_single_turn_shortcut_of_the_registry():
    readme = (Path(__file__).resolve().parents[2] / "packages" / "osint-eval" / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in SHORTCUTS)
    for measured in MEASURED.values():
        for mode in ("triples", "records"):
            assert list(measured["single_turn"][mode]["baselines"]) == ["random-guess", *SINGLE_TURN_SHORTCUTS]
    header = next(line for line in benchmark_card("v1:hard").splitlines() if line.startswith("| context mode"))
    assert header.startswith("| context mode | uniform guess | " + " | ".join(SINGLE_TURN_SHORTCUTS) + " | farthest")


@pytest.fixture(scope="module")
def world_task():
    dev = load_tasks("v0:dev", limit=200)
    task = next(t for t in dev.tasks if t.family == "network_discovery" and t.query.start is not None)
    return dev.world, task


def test_cli_baselines_print_the_strongest_next_to_the_model(tmp_path, capsys):
    from osint_eval.cli import main

    out = tmp_path / "r"
    assert main(["run", "--policy", "oracle", "--baselines", "--tasks", "v0:dev", "--limit", "30", "--out", str(out),
                 "--leaderboard", "", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    report = Report.from_dict(json.loads((out / "report.json").read_text()))
    assert set(report.models) == {"oracle", "random-guess", *SINGLE_TURN_SHORTCUTS}
    assert report.strongest_baseline is not None and baseline_note(report) in printed
    assert "Strongest scripted baseline" in (out / "report.md").read_text()


def test_a_name_in_the_context_is_no_marker_of_the_start(v0_test):
    """Decoy starts are written by name too: "a candidate next to any name" is a type-correct guess."""
    taskset, contexts = v0_test
    world, hits = taskset.world, []
    for i, (task, ctx) in enumerate(zip(taskset.tasks, contexts)):
        shown = set(ctx.entities)
        names = {n for e in ctx.edges for n in (e.head, e.tail) if n not in shown}
        near = sorted({n for e in ctx.edges if e.head in names or e.tail in names for n in (e.head, e.tail)
                       if n in shown and world.type_of(n) == task.answer_type})
        hits.append(near[i % len(near)] == task.answer if near else False)
    chance = _success(make_policy("random-guess"), taskset, contexts)
    assert abs(sum(hits) / len(hits) - chance.mean) <= 0.05
