"""Datasets of each phase, as plain rows (``datasets.Dataset.from_list`` / JSONL compatible).

Rows keep what the rewards need as JSON columns: the task and its context for the answerer, the
offer for the generator. Every row is a pure function of (world, seed, index).
"""

from __future__ import annotations

import json
import random
from typing import Any

from osint_gym import proposals
from osint_gym.single_turn import answer_messages, build_context, gold_completion
from osint_gym.tasks import Task, TaskSampler
from osint_gym.world import World

from osint_selfplay.config import RunConfig
from osint_selfplay.rewards import context_to_json


def answerer_row(world: World, task: Task, cfg: RunConfig, source: str) -> dict[str, Any]:
    ctx = build_context(world, task, mode=cfg.answerer.context_mode, n_distractors=cfg.answerer.n_distractors, seed=cfg.seed)
    return {"prompt": answer_messages(task, ctx), "task": json.dumps(task.to_dict()), "context": context_to_json(ctx), "source": source}


def seed_tasks(world: World, cfg: RunConfig, n: int, offset: int) -> list[Task]:
    """Verified osint-gym tasks from the training world, balanced over the configured difficulties."""
    sampler = TaskSampler(world, cfg.seed)
    diffs = cfg.answerer.seed_difficulties
    return [sampler.sample(offset + i, difficulty=diffs[i % len(diffs)]) for i in range(n)]


def generator_rows(world: World, cfg: RunConfig, round_index: int) -> list[dict[str, Any]]:
    n = cfg.generator.prompts_per_round
    rows = []
    for i in range(n):
        offer = proposals.make_offer(world, cfg.seed, round_index * n + i, mode=cfg.canonical_graph_mode, max_hops=cfg.generator.max_hops)
        rows.append({"prompt": proposals.generator_messages(world, offer), "offer": offer.to_json()})
    return rows


def sft_answerer_rows(world: World, cfg: RunConfig) -> list[dict[str, Any]]:
    """Gold single-turn answers on verified tasks (indices disjoint from the GRPO seed tasks)."""
    tasks = seed_tasks(world, cfg, cfg.warm_start.answerer_examples, offset=10_000_000)
    rows = []
    for t in tasks:
        row = answerer_row(world, t, cfg, "warm_start")
        rows.append({"prompt": row["prompt"], "completion": [{"role": "assistant", "content": gold_completion(t, cfg.answerer.cite_evidence)}]})
    return rows


def sft_generator_rows(world: World, cfg: RunConfig) -> list[dict[str, Any]]:
    """Gold proposals: verified offers phrased by osint-gym's question templates."""
    rows = []
    for i in range(cfg.warm_start.generator_examples):
        offer = proposals.make_offer(world, cfg.seed, 20_000_000 + i, mode=cfg.canonical_graph_mode, max_hops=cfg.generator.max_hops)
        rows.append({"prompt": proposals.generator_messages(world, offer),
                     "completion": [{"role": "assistant", "content": proposals.gold_proposal(world, offer, cfg.seed)}]})
    return rows


def mix_answerer_rows(world: World, cfg: RunConfig, generated: list[Task], round_index: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The answerer's round dataset: generated tasks up to ``generated_share``, seed tasks for the
    rest; if too few generated tasks validated, seed tasks top them up and the count is returned."""
    total = cfg.answerer.tasks_per_round
    want = round(total * cfg.answerer.generated_share)
    used = generated[:want]
    top_up = want - len(used)
    seeds = seed_tasks(world, cfg, total - len(used), offset=round_index * 100_000)
    rows = [answerer_row(world, t, cfg, "generated") for t in used] + [answerer_row(world, t, cfg, "seed") for t in seeds]
    random.Random(f"mix:{cfg.seed}:{round_index}").shuffle(rows)
    return rows, {"generated": len(used), "seed": len(seeds), "top_up": top_up, "wanted_generated": want}
