"""Few-shot demonstrations for a model's prompt: whole oracle episodes of other tasks, as conversation turns.

``osint-eval run|compare --few-shot K`` gives a model policy (`policies.HFPolicy`) K such episodes before each
task: the demonstrator's (`OracleAgent(names_first=True)`: it looks up what the question names, then follows the
evidence), served by the run's own `EpisodeSpec` (observation format, action syntax), on tasks of the benchmark's
dev split, which no test split shares. Each demonstration is the question, the actions with their
observations and the final answer, ending on the answer (the observation after it is left out).
"""

from __future__ import annotations

from typing import Any

from osint_eval.errors import EvalError
from osint_gym.spec import EpisodeSpec


def demonstrations(spec: EpisodeSpec, tasks: str, k: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """The turns of ``k`` demonstrated episodes on tasks of the dev split of ``tasks``'s benchmark (``v2:test`` ->
    ``v2:dev``); each episode's first user turn carries ``shot_start`` (the policy counts the shots by it)."""
    from osint_eval.tasks import load_tasks
    from osint_gym.agents import OracleAgent
    from osint_gym.benchmark import BENCHMARKS

    if k < 1:
        raise EvalError(f"--few-shot must be >= 1, got {k}")
    version = tasks.split(":", 1)[0]
    if ":" not in tasks or version not in BENCHMARKS:
        raise EvalError(f"--few-shot takes its demonstrations from a benchmark's dev split; --tasks {tasks!r} is "
                        "not a benchmark split")
    dev = load_tasks(f"{version}:dev", limit=k, seed=seed)
    turns: list[dict[str, Any]] = []
    for task in dev.tasks:
        record = spec.play_one(spec.make_env(dev.world, task), OracleAgent(spec.action_format, names_first=True))
        if not record.correct:  # the demonstrator solves every verified task; a miss would teach a wrong answer
            raise EvalError(f"the demonstrator did not solve {task.task_id} under these budgets; raise --max-steps")
        episode = [m for m in spec.conversation(record) if m["role"] != "system"]
        turns += [{**episode[0], "shot_start": True}, *episode[1:]]
    return turns
