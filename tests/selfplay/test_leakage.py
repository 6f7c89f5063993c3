"""The answerer's prompts built by osint-selfplay never name the gold answer or the hidden evidence
outside the context that stands for retrieved records."""

from __future__ import annotations

import json
import os

from osint_gym.tasks import Task, names_entity
from osint_selfplay import data
from osint_selfplay.config import load_config
from osint_selfplay.worlds import WorldPool

N = int(os.environ.get("OSINT_LEAK_ROWS", "1200"))


def _secrets(task):
    named = set(task.query.named_entities())
    return set(task.answers) | ({n for e in task.evidence for n in (e.head, e.tail)} - named)


def test_single_turn_prompts_hide_the_answer_outside_the_context():
    cfg = load_config(None, ["train_worlds=6", f"answerer.tasks_per_round={N}", "answerer.generated_share=0.0",
                             "answerer.seed_difficulties=['easy', 'medium', 'hard']"])
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    assert len(rows) == N
    for row in rows:
        task = Task.from_dict(json.loads(row["task"]))
        world = pool.world(row["world_seed"])
        system, user = row["prompt"]
        question_part, _, context_part = user["content"].partition("\nContext:\n")
        for secret in _secrets(task):
            assert not names_entity(world, system["content"] + "\n" + question_part, secret), (task.task_id, secret)
        assert task.answer in context_part  # the context stands for records already retrieved


def test_multi_turn_prompts_show_nothing_of_the_answer():
    cfg = load_config(None, ["train_worlds=4", "answerer.mode='multi_turn'", "answerer.tasks_per_round=300",
                             "answerer.generated_share=0.0", "answerer.seed_difficulties=['easy', 'medium', 'hard']"])
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows, _ = data.mix_answerer_rows(pool, cfg, [], 0)
    assert len(rows) >= 290  # a few prompts that repeat across worlds are dropped
    for row in rows:
        task = Task.from_dict(json.loads(row["task"]))
        world = pool.world(row["world_seed"])
        text = json.dumps(row["prompt"])
        for secret in _secrets(task):
            assert not names_entity(world, " ".join(m["content"] for m in row["prompt"]), secret), (
                task.task_id,
                secret,
            )
            assert f'"{secret}"' not in text
