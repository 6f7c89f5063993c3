"""The frozen answerer used by the generator's learnability reward: k samples per proposed task."""

from __future__ import annotations

from typing import Any

from osint_gym.single_turn import answer_messages, build_context, score_completion
from osint_gym.tasks import Task
from osint_gym.world import World


class SolverSampler:
    """Samples a frozen answerer checkpoint k times per task and returns solve rates."""

    def __init__(self, model_dir: str, *, k: int, temperature: float, context_mode: str,
                 n_distractors: int, seed: int, max_new_tokens: int, batch_size: int = 64, decoys: int = 3) -> None:
        from osint_eval.policies import HFPolicy

        self.policy = HFPolicy(model_dir, batch_size=batch_size, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
        self.k, self.temperature = k, temperature
        self.context_mode, self.n_distractors, self.seed, self.decoys = context_mode, n_distractors, seed, decoys

    def solve_rates(self, items: list[tuple[World, Task]]) -> list[float]:
        """Solve rate of each (world, task): the share of k samples that answer correctly."""
        tasks = [t for _, t in items]
        contexts = [build_context(w, t, mode=self.context_mode, n_distractors=self.n_distractors, decoys=self.decoys,
                                  seed=self.seed) for w, t in items]
        outs = self.policy.generate([answer_messages(t, c) for t, c in zip(tasks, contexts)], num_return_sequences=self.k,
                                    temperature=self.temperature)
        rates = []
        for i, (task, ctx) in enumerate(zip(tasks, contexts)):
            samples = outs[i * self.k : (i + 1) * self.k]
            rates.append(sum(score_completion(task, s, ctx).correct for s in samples) / self.k)
        return rates

    def __getstate__(self) -> dict[str, Any]:  # picklable: TRL may pickle reward functions
        return self.__dict__.copy()
