"""Datasets of each phase, as plain rows (``datasets.Dataset.from_list`` / JSONL compatible).

Rows keep what the rewards need as columns: the task and its context for the answerer, the offer
and its world's seed for the generator. Items are spread round robin over the training worlds;
every row is a pure function of (run seed, index).
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from osint_gym import chat, proposals
from osint_gym.agents import OracleAgent, unseen_ids
from osint_gym.errors import TaskError
from osint_gym.single_turn import answer_messages, build_context, gold_completion
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Task, TaskSampler, verified
from osint_gym.world import World
from osint_gym.world.names import rename_made_up_words
from osint_selfplay import streams
from osint_selfplay.config import RunConfig
from osint_selfplay.curriculum import task_hops
from osint_selfplay.results import DemonstrationCounts, DynamicSampling, TaskCounts, TaskMix
from osint_selfplay.worlds import WorldPool


def prompt_key(prompt: Any) -> str:
    """A row prompt as a key: the multi-turn rollout finds a row's task by its prompt."""
    return json.dumps(prompt, sort_keys=True)


def episode_prompt(world: World, task: Task, spec: EpisodeSpec) -> list[dict[str, Any]]:
    """The row prompt of a multi-turn task: the spec's opening of its episode in the plain format (the
    rollout opens each episode with `EpisodeSpec.start_messages` itself, in the tokenizer's format)."""
    observation, info = spec.reset(spec.make_env(world, task))
    return spec.start_messages(observation, info)


def answerer_row(world: World, task: Task, cfg: RunConfig, source: str) -> dict[str, Any]:
    ctx = build_context(world, task, mode=cfg.answerer.context_mode, n_distractors=cfg.answerer.n_distractors,
                        decoys=cfg.answerer.decoys, seed=cfg.seed)
    return {"prompt": answer_messages(task, ctx), "task": json.dumps(task.to_dict()), "context": ctx.to_json(),
            "source": source, "world_seed": world.seed}


def seed_tasks(pool: WorldPool, cfg: RunConfig, n: int, offset: int, stream: str = streams.TRAIN,
               part: int = 0, parts: int = 1, difficulties: list[str] | None = None) -> list[tuple[World, Task]]:
    """Verified osint-gym tasks spread over the training worlds, cycling ``difficulties`` (default the answerer's
    seed difficulties; one sampler per world: its task families are built once); only the items ``i`` of
    ``range(n)`` with ``i % parts == part`` (a worker's share: each item is a pure function of its index)."""
    diffs = difficulties or cfg.answerer.seed_difficulties
    budgets = cfg.budgets()
    samplers: dict[int | None, TaskSampler] = {}
    out = []
    for i in range(part, n, parts):
        world = pool.pick(offset + i)
        if world.seed not in samplers:
            samplers[world.seed] = TaskSampler(world, streams.stream_seed(cfg.seed, stream), budgets=budgets,
                                               minimal_constraints=pool.minimal_constraints)
        out.append((world, samplers[world.seed].sample(offset + i, difficulty=diffs[i % len(diffs)])))
    return out


def offer_rows(
    pool: WorldPool, cfg: RunConfig, start: int, n: int, stream: str = streams.GENERATOR
) -> list[dict[str, Any]]:
    rows = []
    for i in range(start, start + n):
        world = pool.pick(i)
        offer = proposals.make_offer(world, streams.stream_seed(cfg.seed, stream), i, mode=cfg.canonical_graph_mode,
                                     max_hops=cfg.generator.max_hops, filters=cfg.generator.offer_filters,
                                     choices=cfg.generator.offer_choices,
                                     rungs=cfg.budgets() if cfg.generator.rungs else None)
        rows.append(
            {"prompt": proposals.generator_messages(world, offer), "offer": offer.to_json(), "world_seed": world.seed}
        )
    return rows


def generator_rows(pool: WorldPool, cfg: RunConfig, round_index: int) -> list[dict[str, Any]]:
    n = cfg.generator.prompts_per_round
    return offer_rows(pool, cfg, round_index * n, n)


def sample_rows(pool: WorldPool, cfg: RunConfig, round_index: int) -> list[dict[str, Any]]:
    """The offers the trained generator is sampled on in round ``round_index``."""
    n = cfg.generator.sample_tasks
    return offer_rows(pool, cfg, round_index * n, n, streams.SAMPLE)


def sft_answerer_rows(pool: WorldPool, cfg: RunConfig) -> list[dict[str, Any]]:
    """Gold single-turn answers on verified tasks (the warm_start stream, disjoint from the GRPO seed tasks)."""
    rows = []
    for world, t in seed_tasks(pool, cfg, cfg.warm_start.answerer_examples, 0, streams.WARM_START,
                               difficulties=cfg.warm_start.difficulties):
        ctx = build_context(world, t, mode=cfg.answerer.context_mode, n_distractors=cfg.answerer.n_distractors,
                        decoys=cfg.answerer.decoys, seed=cfg.seed)
        gold = gold_completion(t, ctx, cite_evidence=cfg.answerer.cite_evidence)
        rows.append({"prompt": answer_messages(t, ctx), "completion": [{"role": "assistant", "content": gold}]})
    return rows


def sft_generator_rows(pool: WorldPool, cfg: RunConfig) -> list[dict[str, Any]]:
    """Gold proposals: verified offers phrased by osint-gym's question templates. With rungs each offer's paths are
    demonstrated (benchmarks/RESULTS.md, "Rungs"), so ``warm_start.workers`` processes share them as they share the
    demonstrations; each row is a pure function of its index."""
    parts = min(cfg.warm_start.workers, cfg.warm_start.generator_examples) if cfg.generator.rungs else 1
    pairs = [r for rows in _in_parts(_gold_proposals, parts, pool, cfg) for r in rows]
    return [row for _, row in sorted(pairs, key=lambda r: r[0])]


def _gold_proposals(pool: WorldPool, cfg: RunConfig, part: int, parts: int) -> list[tuple[int, dict[str, Any]]]:
    """The gold proposals of offers ``part, part + parts, ...`` as (index, row) pairs."""
    rows = []
    for i in range(part, cfg.warm_start.generator_examples, parts):
        row = offer_rows(pool, cfg, i, 1, streams.WARM_START_GENERATOR)[0]
        offer = proposals.Offer.from_json(row["offer"])
        gold = proposals.gold_proposal(pool.world(row["world_seed"]), offer, cfg.seed)
        rows.append((i, {"prompt": row["prompt"], "completion": [{"role": "assistant", "content": gold}]}))
    return rows


def _in_parts(fn: Callable[..., Any], parts: int, *args: Any) -> list[Any]:
    """``fn(*args, part, parts)`` for every part, in ``parts`` processes when there are several. The env and the
    oracle are pure Python: processes, not threads, keep every core busy; "spawn" keeps this process's torch
    threads (and any fork-unsafe state) out of the workers."""
    if parts <= 1:
        return [fn(*args, 0, 1)]
    with ProcessPoolExecutor(parts, mp_context=multiprocessing.get_context("spawn")) as ex:
        return list(ex.map(fn, *([a] * parts for a in args), range(parts), [parts] * parts))


SolveRates = Callable[[list[tuple[World, Task]]], list[float]]


def frontier_seed_tasks(pool: WorldPool, cfg: RunConfig, n: int, offset: int, stream: str,
                        solve_rates: SolveRates) -> tuple[list[tuple[World, Task]], DynamicSampling]:
    """Dynamic sampling of ``n`` seed tasks: ``n * answerer.seed_candidates`` candidates, each played
    by the current answerer (``solve_rates``: k samples per task); the ``n`` first whose estimated
    rate lies strictly between 0 and 1 (a GRPO group on them has reward variance) are kept in
    order. Candidates are never dropped silently: if too few are mixed, the first zero-variance
    ones fill the rest and are counted as ``unreplaced``; ``replaced`` counts the zero-variance
    tasks among the first ``n`` candidates (the ones plain sampling would have used)."""
    t0 = time.perf_counter()
    candidates = seed_tasks(pool, cfg, n * cfg.answerer.seed_candidates, offset, stream)
    rates = solve_rates(candidates)
    mixed = [i for i, p in enumerate(rates) if 0 < p < 1]
    flat = [i for i, p in enumerate(rates) if not 0 < p < 1]
    chosen = mixed[:n] + flat[: max(0, n - len(mixed))]
    kept = [candidates[i] for i in sorted(chosen)]
    counts = DynamicSampling(
        candidates=len(candidates),
        all_solved=sum(p == 1 for p in rates),
        none_solved=sum(p == 0 for p in rates),
        replaced=sum(not 0 < p < 1 for p in rates[:n]),
        unreplaced=max(0, n - len(mixed)),
        mean_rate_candidates=sum(rates) / len(rates) if rates else None,
        mean_rate_kept=sum(rates[i] for i in chosen) / len(chosen) if chosen else None,
        kept_difficulties=dict(Counter(t.difficulty for _, t in kept)),
        seconds=time.perf_counter() - t0,
    )
    return kept, counts


def demonstration_steps(world: World, task: Task, spec: EpisodeSpec) -> int | None:
    """The number of steps the demonstrator takes on ``task`` under ``spec`` (its rungs), None if it does not solve
    it there."""
    env = spec.make_env(world, task)
    spec.reset(env)
    try:
        return len(env.demonstration())
    except TaskError:
        return None


Items = list[tuple[World, Task, str]]  # (world, task, source) in a phase's training order
# R3's stages: the answerer plays the last 1, 2, 3 steps of a task's demonstration, then the whole episode
REVERSE_STAGES = 4


def reverse_rungs(cfg: RunConfig, items: Items, round_index: int) -> Items:
    """R3's fixed reverse curriculum (arXiv 2402.05808) over a phase's tasks in training order: the rounds' tasks
    run through `REVERSE_STAGES` stages, and a task of stage s (0-based) starts where only the last s + 1
    steps of its demonstration are left, the last stage at depth 0 (a task the demonstrator does not solve within the
    budgets stays at depth 0). Each task records its demonstration's length."""
    spec, stages = cfg.episode.spec(), REVERSE_STAGES
    out = []
    for i, (world, task, source) in enumerate(items):
        stage = min(stages - 1, (round_index * len(items) + i) * stages // (cfg.rounds * len(items)))
        steps = demonstration_steps(world, task, spec) if stage < stages - 1 else None
        if steps is not None:
            task = dataclasses.replace(task, start_depth=max(0, steps - stage - 1), stamp=None,  # its rows verify it
                                       provenance={**task.provenance, "demonstration_steps": steps})
        out.append((world, task, source))
    return out


def in_order(phase: Any) -> Any:
    """A ``[grpo_*]`` phase config whose trainer takes its rows in order (TRL's ``shuffle_dataset = False``): a
    schedule's stages come one after the other."""
    return type(phase)(**{**phase.to_dict(), "shuffle_dataset": False})


def mix_answerer_rows(pool: WorldPool, cfg: RunConfig, generated: list[Task], round_index: int,
                      stream: str = streams.TRAIN, solve_rates: SolveRates | None = None,
                      reverse: bool = False) -> tuple[list[dict[str, Any]], TaskMix]:
    """The answerer's round dataset: generated tasks up to ``generated_share``, seed tasks for the
    rest; if too few generated tasks validated (or lay in the ``answerer.frontier`` band of
    estimated solve rates), seed tasks top them up and the counts are returned. Given
    ``solve_rates`` and ``answerer.seed_candidates`` > 1, the seed tasks are dynamically sampled
    (`frontier_seed_tasks`) and its counts are the mix's ``dynamic_sampling``.
    Rows are single-turn prompts or multi-turn episode openings, by ``answerer.mode``; ``reverse``: the tasks start at
    R3's rungs (`reverse_rungs`)."""
    total = cfg.answerer.tasks_per_round
    want = round(total * cfg.answerer.generated_share)
    band = cfg.answerer.frontier
    in_band = [t for t in generated if not band or band[0] <= t.provenance.get("solve_rate", -1.0) <= band[1]]
    outside = len(generated) - len(in_band)
    used = in_band[:want]
    top_up = want - len(used)
    items = [(pool.world(t.provenance["world_seed"]), t, "generated") for t in used]
    dynamic: DynamicSampling | None = None
    candidates = cfg.answerer.seed_candidates
    if solve_rates is not None and candidates > 1:
        offset = round_index * total * candidates
        seeds, dynamic = frontier_seed_tasks(pool, cfg, total - len(used), offset, stream, solve_rates)
    else:
        seeds = seed_tasks(pool, cfg, total - len(used), round_index * total, stream)
    items += [(w, t, "seed") for w, t in seeds]
    random.Random(f"{cfg.seed}:{stream}_mix:{round_index}").shuffle(items)
    if reverse:  # R3: the stages follow the (seeded) training order
        items = reverse_rungs(cfg, items, round_index)
    over_budget = 0
    if cfg.answerer.mode == "multi_turn":
        rows, over_budget = multi_turn_rows(pool, cfg, items)
    else:
        rows = [answerer_row(w, t, cfg, source) for w, t, source in items]
    hops = [task_hops(t) for _, t, _ in items]
    return rows, TaskMix(generated=len(used), seed=total - len(used), top_up=top_up, wanted_generated=want,
                         valid_generated=len(generated), outside_frontier=outside, frontier=list(band),
                         rows=len(rows), unsolvable_under_budget=over_budget, dynamic_sampling=dynamic,
                         mean_hops=sum(hops) / len(hops) if hops else None,
                         hops={str(h): n for h, n in sorted(Counter(hops).items())},
                         generated_mean_hops=sum(map(task_hops, used)) / len(used) if used else None,
                         **_depths([t.start_depth for _, t, _ in items]))


def _depths(depths: list[int]) -> dict[str, Any]:
    """A task mix's start depths (rungs), where any task has one: their mean and count per depth."""
    if not any(depths):
        return {}
    return {"mean_depth": sum(depths) / len(depths), "depths": {str(d): n for d, n in sorted(Counter(depths).items())}}


def relabel_tasks(pool: WorldPool, cfg: RunConfig, generated: list[Task],
                  round_index: int) -> tuple[list[tuple[World, Task]], TaskCounts]:
    """The tasks the answerer plays for relabelling in round ``round_index``: the round's generated
    tasks whose estimated solve rate lies in ``answerer.frontier`` (all valid ones if it is empty),
    then seed tasks of their own stream up to ``relabel.tasks``."""
    total = cfg.relabel.tasks
    band = cfg.answerer.frontier
    in_band = [t for t in generated if not band or band[0] <= t.provenance.get("solve_rate", -1.0) <= band[1]][:total]
    items = [(pool.world(t.provenance["world_seed"]), t) for t in in_band]
    items += seed_tasks(pool, cfg, total - len(items), round_index * total, streams.RELABEL)
    return items, TaskCounts(generated=len(in_band), seed=total - len(in_band))


def warm_start_rows(pool: WorldPool, cfg: RunConfig, role: str,
                    native: bool = False) -> tuple[list[dict[str, Any]], DemonstrationCounts | None]:
    """(rows, demonstration counts) of a ``role``'s warm start ("generator", "answerer" or "shared"):
    gold proposals for the generator, demonstrator episodes (multi-turn; ``native``: in the format of a
    template that renders tools) or gold answers for the answerer; as ``messages`` rows when any row is
    multi-turn."""
    rows: list[dict[str, Any]] = []
    counts = None
    if role in ("generator", "shared"):
        rows += sft_generator_rows(pool, cfg)
    if role in ("answerer", "shared"):
        if cfg.answerer.mode == "multi_turn":
            demos, counts = sft_multi_turn_rows(pool, cfg, native=native)
            rows += demos
        else:
            rows += sft_answerer_rows(pool, cfg)
    return (as_messages(rows) if any("messages" in r for r in rows) else rows), counts


def as_messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """prompt/completion rows as ``messages`` rows (to mix them with multi-turn demonstrations)."""
    return [r if "messages" in r else {"messages": r["prompt"] + r["completion"]} for r in rows]


# ---------------------------------------------------------------------------- multi-turn answerer
def multi_turn_rows(
    pool: WorldPool, cfg: RunConfig, items: list[tuple[World, Task, str]]
) -> tuple[list[dict[str, Any]], int]:
    """(rows, tasks dropped): rows whose prompt is the episode's opening (system + reset observation).
    A task the tool-only oracle cannot solve under the episode's budgets is dropped and counted; a task whose
    stamp covers them (a seed task, a generated one the frozen answerer played: `SolverSampler.rate`) is not
    verified again. Rows whose prompt repeats an earlier one are dropped (the rollout finds a row's task by
    its prompt)."""
    spec = cfg.episode.spec()
    rows, seen, dropped = [], set(), 0
    for world, task, source in items:
        try:
            task = verified(world, task, spec.budgets)
        except TaskError:
            dropped += 1
            continue
        prompt = episode_prompt(world, task, spec)
        key = prompt_key(prompt)
        if key in seen:
            continue
        seen.add(key)
        rows.append({"prompt": prompt, "task": json.dumps(task.to_dict()), "world_seed": world.seed, "source": source})
    return rows, dropped


def sft_multi_turn_rows(pool: WorldPool, cfg: RunConfig, stream: str = streams.WARM_START, *,
                        native: bool = False) -> tuple[list[dict[str, Any]], DemonstrationCounts]:
    """(rows, counts): oracle trajectories in the multi-turn chat format (``messages`` rows; the loss
    is on the assistant turns only): how to look names up, call tools, cite evidence and answer.
    Each one is a real episode through the env (`osint_gym.agents.run_episode`) by the demonstrator
    (``OracleAgent(names_first=True)``), kept only if it was correct and used no id before the agent
    could have seen it (`osint_gym.agents.unseen_ids`). ``warm_start.workers`` processes share the
    items; every demonstration is a pure function of its index, so the rows do not depend on them. ``stream``:
    the named stream of their tasks (the warm start's, or the imitation reference's). ``native``: the
    conversations in the format of a template that renders tools (`osint_gym.chat`), each row with the
    env's tool schemas (``tools``, JSON) for the template, as the rollout and evaluation give them."""
    parts = min(cfg.warm_start.workers, cfg.warm_start.answerer_examples)
    results = _in_parts(_demonstrations, parts, pool, cfg, stream, native)
    by_index = sorted((i, row) for rows, _ in results for i, row in rows)
    counts: dict[str, Any] = {k: sum(c[k] for _, c in results) for k in results[0][1]}
    return [row for _, row in by_index], DemonstrationCounts(**counts)


def template_row(messages: list[dict[str, Any]], schemas: list[dict[str, Any]],
                 native: bool) -> dict[str, Any]:
    """A plain training conversation as a ``messages`` row in the template's format: as it is, or (``native``)
    in the tool-call format with the env's tool schemas as the row's ``tools`` (JSON, as TRL's SFT reads them)."""
    if not native:
        return {"messages": messages}
    return {"messages": chat.native_messages(messages), "tools": json.dumps(schemas)}


def rename_words(messages: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """One training conversation with its made-up words renamed at random (``warm_start.rename_words``,
    `osint_gym.world.names.rename_made_up_words`), consistently across its messages, from the seed ``key``:
    demonstrations and relabelled conversations alike, so no training text favours the words the
    training worlds happen to write."""
    texts = rename_made_up_words([m["content"] for m in messages], random.Random(key))
    return [{**m, "content": t} for m, t in zip(messages, texts)]


def hard_demonstrations(pool: WorldPool, cfg: RunConfig, n: int,
                        native: bool = False) -> tuple[list[dict[str, Any]], DemonstrationCounts]:
    """``n`` oracle demonstrations of hard tasks from their own stream (the imitation reference's: never the warm
    start's, whose demonstrations stay at the configured difficulties), as `sft_multi_turn_rows` makes them."""
    hard = dataclasses.replace(cfg, warm_start=dataclasses.replace(cfg.warm_start, answerer_examples=n,
                                                                   difficulties=["hard"]))
    return sft_multi_turn_rows(pool, hard, streams.IMITATION, native=native)


def _demonstrations(
    pool: WorldPool, cfg: RunConfig, stream: str, native: bool, part: int, parts: int
) -> tuple[list[tuple[int, dict[str, Any]]], dict[str, int]]:
    """The demonstrations of items ``part, part + parts, ...`` as (index, row) pairs, and their counts."""
    spec = cfg.episode.spec()
    rows = []
    counts = {"episodes": 0, "incorrect": 0, "unseen_ids": 0, **({"renamed": 0} if cfg.warm_start.rename_words else {})}
    n = cfg.warm_start.answerer_examples
    items = seed_tasks(pool, cfg, n, 0, stream, part=part, parts=parts, difficulties=cfg.warm_start.difficulties)
    for index, (world, task) in zip(range(part, n, parts), items):
        env = spec.make_env(world, task)
        record = spec.play_one(env, OracleAgent(action_format=spec.action_format, names_first=True))
        counts["episodes"] += 1
        if not record.correct:  # only demonstrations that worked within this run's budgets
            counts["incorrect"] += 1
            continue
        if unseen_ids(record):
            counts["unseen_ids"] += 1
            continue
        messages = spec.conversation(record)  # plain: its words are renamed as text, then it converts
        if cfg.warm_start.rename_words:
            # the warm start's key names no stream (it predates the imitation stream; its rows stay the same)
            named = "" if stream == streams.WARM_START else f"{stream}:"
            renamed = rename_words(messages, f"rename-words:{named}{cfg.seed}:{index}")
            counts["renamed"] += renamed != messages  # episodes that named an organisation or event
            messages = renamed
        rows.append((index, template_row(messages, env.schemas, native)))
    return rows, counts
