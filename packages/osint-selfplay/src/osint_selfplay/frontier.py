"""A round's frontier sample: the trained generator and its scripted control propose on the same offers.

The learned generator completes each offer's prompt (`osint_gym.proposals.sample_tasks`); where the
round measures the curriculum (``generator.curriculum``), `osint_selfplay.curriculum.FrontierCurriculum`,
estimated from the episodes the generator's reward played this round, picks a path of each of the same
offers. osint-gym validates both; the frozen answerer plays every distinct valid task k times (one
`SolverSampler` call: a path both picked is played once), and each arm's frontier share is the share of
its valid proposals whose estimated solve rate lies in `rewards.FRONTIER_BAND`. Only tasks the frontier
band admits train the answerer (`data.mix_answerer_rows`), the learned arm's in the self-play round, the
curriculum's in its control arm (`osint_selfplay.controls`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from osint_gym.proposals import Offer, Proposal, SampledBatch, format_proposal, sample_tasks, validate_sampled
from osint_gym.tasks import Task
from osint_gym.world import World
from osint_selfplay.curriculum import FrontierCurriculum, task_hops
from osint_selfplay.results import ArmFigures, GeneratorResult, GRPOResult, SampleResult
from osint_selfplay.rewards import FRONTIER_BAND, GeneratorReward, in_band

RateTasks = Callable[[list[tuple[World, Task]]], list[Task]]  # each task with its solve rate (`SolverSampler.rate`)
Generate = Callable[[list[list[dict[str, str]]]], list[str]]


def arm_figures(tasks: list[Task], proposals: int, **more: Any) -> ArmFigures:
    """One arm's figures (with ``more`` of its fields: the validator's reasons, the curriculum's bins): valid
    proposals, frontier share (`FRONTIER_BAND`), mean solve rate and hops."""
    rates = [float(t.provenance["solve_rate"]) for t in tasks]
    in_frontier = sum(map(in_band, rates))
    rungs = [t for t in tasks if "demonstration_steps" in t.provenance]
    if rungs:
        more |= {"mean_depth": sum(t.start_depth for t in rungs) / len(rungs),
                 "mean_left": sum(t.provenance["demonstration_steps"] - t.start_depth for t in rungs) / len(rungs),
                 "depths": {str(d): n for d, n in sorted(Counter(t.start_depth for t in rungs).items())}}
    return ArmFigures(
        proposals=proposals,
        valid=len(tasks),
        valid_rate=len(tasks) / max(1, proposals),
        in_frontier=in_frontier,
        frontier_share=in_frontier / len(rates) if rates else None,
        mean_solve_rate=sum(rates) / len(rates) if rates else None,
        mean_hops=sum(map(task_hops, tasks)) / len(tasks) if tasks else None,
        hops={str(h): n for h, n in sorted(Counter(map(task_hops, tasks)).items())},
        **more,
    )


def curriculum_batch(worlds: list[World], offers: list[Offer], curriculum: FrontierCurriculum, seed: str,
                     max_hops: int, id_prefix: str) -> SampledBatch:
    """The scripted curriculum's pick of every offer, validated like a generator's completion."""
    rng = random.Random(seed)
    picks = [format_proposal(Proposal("", "", (), curriculum.pick(offer, rng))) for offer in offers]
    return validate_sampled(worlds, offers, picks, max_hops=max_hops, id_prefix=id_prefix)


def with_rates(batches: list[SampledBatch], worlds_of: Callable[[Task], World], rate: RateTasks) -> list[list[Task]]:
    """Each batch's valid tasks with the frozen answerer's estimated solve rate in their provenance (and the stamp
    of the answerer's episodes, `SolverSampler.rate`); one call plays every task of every batch (the solver plays
    a task two batches share once)."""
    tasks = [t for b in batches for t in b.tasks]
    rated = rate([(worlds_of(t), t) for t in tasks]) if tasks else []
    out, start = [], 0
    for b in batches:
        out.append(rated[start : start + len(b.tasks)])
        start += len(b.tasks)
    return out


def sample_round(worlds: list[World], offers: list[Offer], generate: Generate, rate: RateTasks, *,
                 max_hops: int, round_index: int, curriculum: FrontierCurriculum | None, seed: int,
                 worlds_of: Callable[[Task], World]) -> tuple[SampleResult, dict[str, list[Any]]]:
    """(figures, files) of a round's frontier sample: the learned generator's proposals on ``offers`` and,
    given a ``curriculum``, the scripted curriculum's picks on the same offers, every valid task rated."""
    learned = sample_tasks(worlds, offers, generate, max_hops=max_hops, id_prefix=f"gen-r{round_index}-")
    batches = [learned]
    if curriculum is not None:
        batches.append(curriculum_batch(worlds, offers, curriculum, f"{seed}:curriculum:{round_index}", max_hops,
                                        f"cur-r{round_index}-"))
    rated = with_rates(batches, worlds_of, rate)
    learned_arm = arm_figures(rated[0], len(offers), reasons=learned.reasons)
    figures = learned_arm.extended(SampleResult, band=list(FRONTIER_BAND))
    files: dict[str, list[Any]] = {"proposals.jsonl": learned.records, "tasks.jsonl": [t.to_dict() for t in rated[0]]}
    if curriculum is not None:
        figures.curriculum = arm_figures(rated[1], len(offers), reasons=batches[1].reasons, bins=curriculum.to_dict())
        files["curriculum_tasks.jsonl"] = [t.to_dict() for t in rated[1]]
    return figures, files


def generator_result(grpo: GRPOResult, reward: GeneratorReward, **more: Any) -> GeneratorResult:
    """The generator phase's result: its GRPO figures, and from its `rewards.GeneratorReward` the validity, the frozen
    answerer's solve rates and the frontier share of the whole phase, and every step's rewards (the per-proposal
    values are in the phase's ``steps.jsonl``); ``more``: the phase's own fields."""
    rates = reward.solve_rates
    return grpo.extended(
        GeneratorResult,
        validity=dict(reward.reasons),
        reward_seconds=reward.seconds,
        solver_seconds=reward.solver_seconds,
        frozen_answerer_solve_rate_mean=sum(rates) / len(rates) if rates else None,
        frontier_share=sum(map(in_band, rates)) / len(rates) if rates else None,
        valid_proposals=len(rates),
        distinct_tasks_played=len(reward.observations),
        generator_steps=reward.steps,
        **more,
    )
