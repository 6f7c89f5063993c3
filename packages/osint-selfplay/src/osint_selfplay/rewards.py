"""TRL reward callables: picklable classes whose names are the metric keys.

* `AnswererReward`: osint-gym's single-turn score of each completion (answer, cited-evidence F1).
* `GeneratorReward`: a hard validity gate (osint-gym's proposal validation); an invalid proposal
  gets a negative reward graded by its failure reason; a valid one earns its frontier reward against the
  frozen answerer (`frontier_reward`: learnability where k sampled episodes vary, a penalty where they all
  agree), minus a near-duplicate penalty, plus grounding (the share of its evidence the offer showed).
  Every term is measured; none reads anything the model says about itself.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

from osint_gym.proposals import Offer, grounding, parse_proposal, validate_proposal
from osint_gym.single_turn import Context, score_completion
from osint_gym.tasks import DuplicateFilter, Task, task_signature
from osint_gym.tasks.task import DEFAULT_BUDGETS
from osint_selfplay.config import GeneratorConfig
from osint_selfplay.curriculum import choice_bin, task_hops
from osint_selfplay.results import GeneratorStep, ZeroVariance
from osint_selfplay.worlds import WorldPool


def completion_text(completion: Any) -> str:
    """TRL passes conversational completions as message lists; plain ones as strings."""
    if isinstance(completion, list):
        return "".join(m.get("content", "") for m in completion if isinstance(m, dict) and m.get("role") == "assistant")
    return completion if isinstance(completion, str) else ""


def learnability(p: float, kind: str = "r_zero") -> float:
    """Reward for a task the answerer solves with rate p: highest where it is learnable.

    r_zero (R-Zero): 1 - 2|p - 0.5|, peaking at p = 0.5, 0 at p = 0 or 1.
    azr (Absolute Zero): 1 - p for 0 < p < 1, and 0 for tasks always or never solved.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a solve rate is in [0, 1], got {p}")
    if kind == "r_zero":
        return 1.0 - 2.0 * abs(p - 0.5)
    if kind == "azr":
        return 1.0 - p if 0.0 < p < 1.0 else 0.0
    raise ValueError(f"unknown learnability kind {kind!r}")


def parl_terms(tool_calls: int, parallel_calls: int, useful_parallel_calls: int) -> tuple[float, float]:
    """(r_parallel, r_finish) from env counts: the share of tool calls made in parallel steps
    (against serial collapse) and the share of those that proved useful (against spurious parallelism)."""
    r_parallel = parallel_calls / tool_calls if tool_calls else 0.0
    r_finish = useful_parallel_calls / parallel_calls if parallel_calls else 0.0
    return r_parallel, r_finish


def annealed(weight: float, step: int, anneal_steps: int) -> float:
    """A weight that falls linearly from ``weight`` at step 0 to 0 at ``anneal_steps``."""
    return weight * max(0.0, 1.0 - step / anneal_steps)


def _groups(values: list[float], size: int) -> list[list[float]]:
    return [values[i : i + size] for i in range(0, len(values), size)]


ZERO_VARIANCE_METRIC = "answerer/zero_variance/all"


class _GroupCounter:
    """Counts the answerer's GRPO groups whose rewards had no variance, by task source (generated
    or seed): the signal self-play tasks are meant to add. Each group's 0/1 is logged per source and
    under ``ZERO_VARIANCE_METRIC``, whose per-step mean is the step's share. TRL's own
    ``frac_reward_zero_std`` misses groups of equal rewards that float32 does not hold exactly (eight
    episodes each rewarded 0.7 have a float32 std of 6e-8, not ``isclose`` to 0), so the share here is exact."""

    def __init__(self, num_generations: int) -> None:
        self.num_generations = num_generations
        self.groups: Counter[str] = Counter()  # source -> groups seen
        self.zero_variance: Counter[str] = Counter()  # source -> groups whose rewards were all equal

    def count_groups(self, rewards: list[float], source: list[str] | None, log_metric: Any) -> None:
        sources = source or ["seed"] * len(rewards)
        for start, group in zip(range(0, len(rewards), self.num_generations), _groups(rewards, self.num_generations)):
            src = sources[start]
            self.groups[src] += 1
            flat = max(group) - min(group) < 1e-9
            self.zero_variance[src] += flat
            if log_metric is not None:
                log_metric(f"answerer/zero_variance/{src}", float(flat))
                log_metric(ZERO_VARIANCE_METRIC, float(flat))

    def zero_variance_share(self) -> dict[str, ZeroVariance]:
        return {
            s: ZeroVariance(groups=self.groups[s], zero_variance=self.zero_variance[s],
                            share=self.zero_variance[s] / self.groups[s] if self.groups[s] else float("nan"))
            for s in self.groups
        }


class AnswererReward(_GroupCounter):
    """osint-gym's reward for single-turn answers; also counts zero-variance groups by task source."""

    def __init__(self, num_generations: int) -> None:
        super().__init__(num_generations)
        self.__name__ = "AnswererReward"
        self.seconds = 0.0  # time spent scoring (the self-play overhead benchmark reads it)

    def __call__(self, prompts: list[Any], completions: list[Any], task: list[str], context: list[str],
                 source: list[str] | None = None, **kwargs: Any) -> list[float]:
        t0 = time.perf_counter()
        rewards = []
        for comp, t, c in zip(completions, task, context):
            rewards.append(
                score_completion(Task.from_dict(json.loads(t)), completion_text(comp), Context.from_json(c)).total
            )
        self.count_groups(rewards, source, kwargs.get("log_metric"))
        self.seconds += time.perf_counter() - t0
        return rewards


FRONTIER_BAND = (0.2, 0.8)  # the frontier share's band: fixed, so the figure means the same in every run


def in_band(p: float, band: tuple[float, float] = FRONTIER_BAND) -> bool:
    return band[0] <= p <= band[1]


def frontier_reward(p: float, kind: str, degenerate: float) -> float:
    """The generator's reward for a valid task the frozen answerer solves with estimated rate ``p``:
    ``learnability(p, kind)`` where its outcomes vary (0 < p < 1), and ``degenerate`` for a task it always or
    never solves (Absolute Zero's contrast: most proposals are degenerate, and without a penalty a group of
    them all scores 0, which teaches nothing)."""
    if p in (0.0, 1.0):
        return degenerate
    return learnability(p, kind)


class GeneratorReward:
    """Validity gate + frontier reward against the frozen answerer + diversity + grounding.

    Each distinct valid task (completions of one offer that name the same path are one task) is played
    ``solver.k`` times by the frozen answerer, once per phase: its estimated solve rate rewards every
    completion that proposed it, at that step and at every later one (offers recur when the phase's steps
    run over its prompts more than once). Per step it keeps a record (`steps`: rewards, solve rates, frontier
    share) and per distinct task an observation (`observations`: the offered path's curriculum bin, its
    episodes and successes), from which `osint_selfplay.curriculum` estimates its bins."""

    def __init__(self, pool: WorldPool, cfg: GeneratorConfig, solver: Any,
                 max_steps: int = DEFAULT_BUDGETS.max_steps) -> None:
        self.__name__ = "GeneratorReward"
        self.pool = pool
        self.cfg = cfg
        self.solver = solver  # .solve_rates(list[(World, Task)]) -> list[float] and .k; None in dry runs
        self.max_steps = max_steps  # a proposal is verified under osint-gym's default budgets (its stamp's)
        # recent valid proposals (this batch included): osint-gym's one duplicate rule plus the near-copy rule
        self.history = DuplicateFilter(jaccard=cfg.duplicate_jaccard, max_history=cfg.history_size)
        self.reasons: Counter[str] = Counter()
        self.solve_rates: list[float] = []
        self.steps: list[GeneratorStep] = []
        self.observations: list[dict[str, Any]] = []
        self.estimates: dict[Any, float] = {}  # task signature -> its estimated solve rate (one per phase)
        self.seconds = 0.0  # validation and scoring, without the frozen answerer's sampling
        self.solver_seconds = 0.0

    def _validate(self, completions: list[Any], offer: list[str],
                  world_seed: list[int]) -> tuple[list[float | None], list[tuple[int, Task, Offer, Any]]]:
        rewards: list[float | None] = [None] * len(completions)
        valid: list[tuple[int, Task, Offer, Any]] = []
        for i, (comp, off, seed) in enumerate(zip(completions, offer, world_seed)):
            proposal = parse_proposal(completion_text(comp))
            the_offer = Offer.from_json(off)
            verdict, task = validate_proposal(
                self.pool.world(seed), proposal, offer=the_offer, max_hops=self.cfg.max_hops, max_steps=self.max_steps
            )
            self.reasons[verdict.reason.value] += 1
            if task is None:
                rewards[i] = float(self.cfg.invalid_rewards.get(verdict.reason.value, -1.0))
            else:
                valid.append((i, task, the_offer, proposal))
        return rewards, valid

    def _rates(self, valid: list[tuple[int, Task, Offer, Any]]) -> list[float]:
        """The estimated solve rate of each valid proposal. The answerer is frozen for the whole phase, so each
        distinct task is played once (``solver.k`` episodes) and its estimate reused at every later step."""
        if self.solver is None:
            return [0.5] * len(valid)
        signatures = [task_signature(task) for _, task, _, _ in valid]
        new: dict[Any, int] = {}  # signature -> the first proposal of a task not yet played
        for i, signature in enumerate(signatures):
            if signature not in self.estimates:
                new.setdefault(signature, i)
        tasks = [valid[i][1] for i in new.values()]
        items = [(self.pool.world(t.provenance["world_seed"]), t) for t in tasks]
        rates = self.solver.solve_rates(items) if items else []
        for (signature, i), p in zip(new.items(), rates):
            self.estimates[signature] = p
            _, _, the_offer, proposal = valid[i]
            if the_offer.mode == "choose" and proposal.refs:
                self.observations.append({"bin": choice_bin(the_offer, *proposal.refs[:2]).key(),
                                          "solved": round(p * self.solver.k), "played": self.solver.k})
        return [self.estimates[signature] for signature in signatures]

    def __call__(self, prompts: list[Any], completions: list[Any], offer: list[str], world_seed: list[int],
                 trainer_state: Any = None, **kwargs: Any) -> list[float]:
        t0 = time.perf_counter()
        rewards, valid = self._validate(completions, offer, world_seed)
        t1 = time.perf_counter()
        rates = self._rates(valid) if valid else []
        t2 = time.perf_counter()
        self.solver_seconds += t2 - t1
        log_metric = kwargs.get("log_metric")
        for (i, task, the_offer, proposal), p in zip(valid, rates):
            duplicate = self.history.is_duplicate(task)
            self.history.add(task)
            parts = {
                "frontier": self.cfg.learnability_weight
                * frontier_reward(p, self.cfg.learnability, self.cfg.degenerate_reward),
                "diversity": -self.cfg.diversity_weight if duplicate else 0.0,
                "grounding": self.cfg.grounding_weight * grounding(the_offer, proposal),
            }
            rewards[i] = sum(parts.values())
            self.solve_rates.append(p)
            if log_metric is not None:
                for name, value in parts.items():
                    log_metric(f"generator/{name}", value)
                log_metric("generator/solve_rate", p)
                log_metric("generator/in_frontier_band", float(in_band(p)))
        if log_metric is not None:
            log_metric("generator/valid_rate", len(valid) / max(1, len(completions)))
        out = [float(r) for r in rewards]  # type: ignore[arg-type]
        step = trainer_state.global_step + 1 if trainer_state is not None else len(self.steps) + 1
        self.steps.append(GeneratorStep(step=step, rewards=out, solve_rates=rates, valid=len(valid),
                                        proposals=len(out),
                                        frontier_share=sum(map(in_band, rates)) / len(rates) if rates else None,
                                        hops=[task_hops(t) for _, t, _, _ in valid]))
        self.seconds += (t1 - t0) + (time.perf_counter() - t2)
        return out


class EpisodeReward(_GroupCounter):
    """Multi-turn answerer reward: the env's episode reward (from the rollout) plus the optional,
    annealed PARL terms, every one computed from env counts; also counts zero-variance groups by
    task source."""

    def __init__(self, parl: Any, num_generations: int) -> None:
        super().__init__(num_generations)
        self.__name__ = "EpisodeReward"
        self.parl = parl

    def __call__(self, prompts: list[Any], completions: list[Any], env_reward: list[float], tool_calls: list[int],
                 parallel_calls: list[int], useful_parallel_calls: list[int], trainer_state: Any = None,
                 source: list[str] | None = None, **kwargs: Any) -> list[float]:
        step = trainer_state.global_step if trainer_state is not None else 0
        lp = annealed(self.parl.lambda_parallel, step, self.parl.anneal_steps)
        lf = annealed(self.parl.lambda_finish, step, self.parl.anneal_steps)
        out = []
        log_metric = kwargs.get("log_metric")
        for r, calls, par, useful in zip(env_reward, tool_calls, parallel_calls, useful_parallel_calls):
            r_par, r_fin = parl_terms(calls, par, useful)
            out.append(float(r) + lp * r_par + lf * r_fin)
            if log_metric is not None:
                log_metric("parl/r_parallel", r_par)
                log_metric("parl/r_finish", r_fin)
        if log_metric is not None:
            log_metric("parl/lambda_parallel", lp)
            log_metric("parl/lambda_finish", lf)
        self.count_groups(out, source, log_metric)
        return out
