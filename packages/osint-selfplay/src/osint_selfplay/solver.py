"""The frozen answerer used by the generator's learnability reward: k samples per proposed task.

Single-turn answerers are sampled on the task's context; multi-turn answerers (the agent that
self-play trains) run k episodes of each task in OSINT-v0 under the answerer's budgets, through
osint-eval's episode runner, so the solve rate is the one of the agent being trained.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from osint_eval.evaluate import run_items_sharded, worker_pool
from osint_eval.policies import HFPolicy
from osint_eval.runner import run_multi_turn_items
from osint_gym.errors import TaskError
from osint_gym.single_turn import answer_messages, build_context, score_completion
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Task, task_signature, verified
from osint_gym.world import World


def _rated(task: Task, rate: float) -> Task:
    """``task`` with its estimated solve rate in its provenance."""
    return dataclasses.replace(task, provenance={**task.provenance, "solve_rate": rate})


class SolverSampler:
    """Samples a frozen answerer checkpoint k times per task and returns solve rates.

    ``spec``: how the multi-turn answerer's episodes are served (`EpisodeConfig.spec`); given it,
    each sample is an episode through the env, ``episode_batch`` turns generated together. A task that the
    tool-only oracle cannot solve under the spec's budgets has rate 0 (counted in ``unsolvable``)."""

    def __init__(self, model_dir: str, *, k: int, temperature: float, context_mode: str,
                 n_distractors: int, seed: int, max_new_tokens: int, batch_size: int = 64, decoys: int = 3,
                 spec: EpisodeSpec | None = None, episode_batch: int = 16, decoding: str = "generate",
                 workers: int = 1) -> None:
        self.policy = HFPolicy(model_dir, batch_size=batch_size, max_new_tokens=max_new_tokens,
                               temperature=temperature, seed=seed, decoding=decoding)
        self.k, self.temperature = k, temperature
        self.context_mode, self.n_distractors, self.seed, self.decoys = context_mode, n_distractors, seed, decoys
        self.spec, self.episode_batch = spec, episode_batch
        self.unsolvable = 0
        self.workers = workers  # multi-turn: processes the episodes are shared out to (osint-eval's worker pool)
        self._pool: Any = None

    @classmethod
    def from_config(cls, cfg: Any, answerer: str, seed: int, temperature: float | None = None) -> SolverSampler:
        """The frozen answerer of a run config (``RunConfig``): k = generator.solver_samples at
        generator.solver_temperature (or ``temperature``), single-turn answers on the task's context,
        or multi-turn episodes under the answerer's budgets."""
        g, a = cfg.generator, cfg.answerer
        multi = a.mode == "multi_turn"
        t = g.solver_temperature if temperature is None else temperature
        return cls(answerer, k=g.solver_samples, temperature=t, context_mode=a.context_mode,
                   n_distractors=a.n_distractors, decoys=a.decoys, seed=seed,
                   max_new_tokens=cfg.play.max_new_tokens if multi else cfg.grpo_answerer.max_completion_length,
                   spec=cfg.episode.spec() if multi else None, episode_batch=cfg.play.batch_size,
                   decoding=cfg.model.decoding, workers=cfg.play.workers)

    def solve_rates(self, items: list[tuple[World, Task]]) -> list[float]:
        """Solve rate of each (world, task): the share of k samples that answer correctly."""
        return [float(t.provenance["solve_rate"]) for t in self.rate(items)]

    def rate(self, items: list[tuple[World, Task]]) -> list[Task]:
        """Each (world, task)'s task with its solve rate (``provenance["solve_rate"]``): the share of k samples
        that answer correctly. Multi-turn, a task played under the spec carries the stamp of its verification under
        the spec's budgets, so the answerer's rows do not verify it again."""
        if self.spec is not None:
            return self._episode_rates(items, self.spec)
        tasks = [t for _, t in items]
        contexts = [build_context(w, t, mode=self.context_mode, n_distractors=self.n_distractors, decoys=self.decoys,
                                  seed=self.seed) for w, t in items]
        outs = self.policy.generate(
            [answer_messages(t, c) for t, c in zip(tasks, contexts)],
            num_return_sequences=self.k,
            temperature=self.temperature,
        )
        rates = []
        for i, (task, ctx) in enumerate(zip(tasks, contexts)):
            samples = outs[i * self.k : (i + 1) * self.k]
            rates.append(sum(score_completion(task, s, ctx).correct for s in samples) / self.k)
        return [_rated(t, p) for t, p in zip(tasks, rates)]

    def _episode_rates(self, items: list[tuple[World, Task]], spec: EpisodeSpec) -> list[Task]:
        """k episodes of every distinct task under ``spec`` (a task listed twice is played once), the tasks of
        every world in flight together, so that turns are generated in full batches."""
        first: dict[Any, int] = {}  # task signature -> the item that stands for it
        playable: list[tuple[int, World, Task]] = []
        rates = [0.0] * len(items)
        tasks = [t for _, t in items]
        for i, (world, task) in enumerate(items):
            if first.setdefault(task_signature(task), i) != i:
                continue
            try:  # a generated task carries the stamp of its validation, under the default budgets
                tasks[i] = task = verified(world, task, spec.budgets)
            except TaskError:
                self.unsolvable += 1
                continue
            playable.append((i, world, task))
        repeated = [(world, task) for _, world, task in playable for _ in range(self.k)]  # each repeat its own episode
        if self.workers > 1 and len(repeated) > 1:
            if self._pool is None:  # spawned once, kept for the sampler's life (the frozen answerer's weights)
                self._pool = worker_pool(self.workers)
            results = run_items_sharded(self._pool, self.workers, self.policy, repeated, spec=spec,
                                        batch_size=self.episode_batch)
        else:
            results = run_multi_turn_items(self.policy, repeated, spec=spec, batch_size=self.episode_batch)
        for j, (i, _, _) in enumerate(playable):
            rates[i] = sum(r.correct for r in results[j * self.k : (j + 1) * self.k]) / self.k
        # a repeat of a task has the rate of its first listing; its stamp is its own (the wording may differ)
        return [_rated(tasks[i], rates[first[task_signature(task)]]) for i, (_, task) in enumerate(items)]

    def close(self) -> None:
        """Stop the worker processes (if any) and drop the model."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        self.policy.close()

    def __getstate__(self) -> dict[str, Any]:  # picklable: TRL may pickle reward functions (the pool stays here)
        return {**self.__dict__, "_pool": None}
