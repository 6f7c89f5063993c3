"""One duplicate rule (osint_gym.tasks.DuplicateFilter) for the sampler, proposal batches and the generator reward."""

from __future__ import annotations

import dataclasses

import pytest

from osint_gym import proposals
from osint_gym.errors import ConfigError
from osint_gym.schema import Edge
from osint_gym.tasks import DuplicateFilter, TaskSampler, task_signature


@pytest.fixture(scope="module")
def tasks(world):
    return TaskSampler(world, 0).generate(3)


def _reworded(task, question):
    return dataclasses.replace(task, question=question, task_id="other")


def test_signature_ignores_wording_and_edge_direction_but_not_answer_or_world(tasks):
    t = tasks[0]
    flipped = tuple(Edge(e.tail, e.relation, e.head) if e.relation == "knows" else e for e in t.evidence)
    assert task_signature(_reworded(t, "Who, really?")) == task_signature(dataclasses.replace(t, evidence=flipped))
    assert task_signature(dataclasses.replace(t, answers=("person_99999",))) != task_signature(t)
    assert task_signature(dataclasses.replace(t, provenance={**t.provenance, "world_seed": -1})) != task_signature(t)


def test_filter_flags_same_question_or_same_signature_and_forgets_beyond_history(tasks):
    a, b, c = tasks
    f = DuplicateFilter()
    assert [f.admit(a), f.admit(b), f.admit(a)] == [True, True, False]
    assert f.is_duplicate(_reworded(a, "A wholly different wording?"))  # same world, answer, evidence
    assert f.is_duplicate(dataclasses.replace(c, question=a.question))  # same text, other task
    assert len(f) == 2 and not f.is_duplicate(c)
    text_only = DuplicateFilter(by_signature=False)
    text_only.add(a)
    assert not text_only.is_duplicate(_reworded(a, "A wholly different wording?"))
    short = DuplicateFilter(max_history=1)
    short.add(a)
    short.add(b)
    assert not short.is_duplicate(a) and short.is_duplicate(b) and len(short) == 1


def test_filter_jaccard_flags_near_copies_only(tasks):
    a, b, _ = tasks
    f = DuplicateFilter(jaccard=0.8)
    f.add(a)
    near = dataclasses.replace(b, question=a.question + " please")
    assert f.is_duplicate(near) and not f.is_duplicate(b)
    for bad in (0.0, 1.5):
        with pytest.raises(ConfigError, match="jaccard"):
            DuplicateFilter(jaccard=bad)
    with pytest.raises(ConfigError, match="max_history"):
        DuplicateFilter(max_history=0)


def test_sampler_generate_skips_repeated_questions_only(world):
    sampler = TaskSampler(world, 0)
    generated = sampler.generate(60)
    questions = [t.question for t in generated]
    assert len(set(questions)) == 60
    seen = DuplicateFilter(by_signature=False)
    expected, index = [], 0
    while len(expected) < 60:  # the same rule, applied by hand to consecutive samples
        t = TaskSampler(world, 0).sample(index)
        index += 1
        if seen.admit(t):
            expected.append(t.question)
    assert questions == expected and sampler.rejections["duplicate"] == index - 60


def test_validate_sampled_counts_a_reworded_repeat_as_duplicate(world):
    offer = proposals.make_offer(world, 0, 0)
    gold = proposals.gold_proposal(world, offer)
    reworded = gold.replace("Q: ", "Q: Tell me: ", 1)
    batch = proposals.validate_sampled([world] * 2, [offer] * 2, [gold, reworded], max_hops=2, id_prefix="s-")
    assert [r["reason"] for r in batch.records] == ["ok", "duplicate"] and len(batch.tasks) == 1
