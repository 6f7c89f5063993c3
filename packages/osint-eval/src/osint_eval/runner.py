"""Running a policy on tasks, in single-turn or multi-turn mode, with batched turns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from osint_gym import chat
from osint_gym.env import OSINTEnv
from osint_gym.single_turn import answer_messages, build_context, parse_answer, score_completion
from osint_gym.tasks import Task
from osint_gym.world import World

from osint_eval.policies import Policy, PolicyInput

MODES = ("single_turn", "multi_turn")


@dataclass
class EpisodeResult:
    task_id: str
    family: str
    difficulty: str
    question: str
    gold_answers: list[str]
    gold_evidence: list[list[str]]
    submitted: Any
    correct: bool
    reward: float
    breakdown: dict[str, Any]
    evidence_f1: float
    steps: int  # critical (sequential) steps
    tool_calls: int
    invalid_actions: int
    parse_failures: int
    agent_evidence: list[list[str]] = field(default_factory=list)
    transcript: list[dict[str, str]] = field(default_factory=list)  # {"action", "observation"}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_single_turn(policy: Policy, world: World, tasks: list[Task], *, context_mode: str = "triples",
                    n_distractors: int = 6, seed: int = 0, batch_size: int = 64, progress: Any = None) -> list[EpisodeResult]:
    """One completion per task from a prompt that holds the context; scored like an episode."""
    results: list[EpisodeResult] = []
    for start in range(0, len(tasks), batch_size):
        chunk = tasks[start : start + batch_size]
        contexts = [build_context(world, t, mode=context_mode, n_distractors=n_distractors, seed=seed) for t in chunk]
        batch = [PolicyInput(answer_messages(t, c), t, world, start + i, 0, context=c) for i, (t, c) in enumerate(zip(chunk, contexts))]
        completions = policy.act(batch)
        for task, context, completion in zip(chunk, contexts, completions):
            b = score_completion(task, completion, context)
            parsed = parse_answer(completion, context)
            results.append(EpisodeResult(
                task.task_id, task.family, task.difficulty, task.question, list(task.answers), [list(e) for e in task.evidence],
                parsed.answer, b.correct, b.total, b.to_dict(), b.evidence_f1, 1, 0, int(parsed.error is not None),
                int(parsed.error is not None), [list(e) for e in parsed.evidence],
                [{"action": completion, "observation": f"Context:\n{context.text}"}],
            ))
        if progress is not None:
            progress.update(len(chunk))
    return results


def run_multi_turn(policy: Policy, world: World, tasks: list[Task], *, max_steps: int = 24, max_parallel_calls: int = 4,
                   batch_size: int = 16, full_schemas: bool = False, progress: Any = None) -> list[EpisodeResult]:
    """Episodes in OSINT-v0 until the policy answers or the step budget ends; turns of up to
    ``batch_size`` episodes are generated together."""
    results: list[EpisodeResult | None] = [None] * len(tasks)
    for start in range(0, len(tasks), batch_size):
        idx = list(range(start, min(len(tasks), start + batch_size)))
        envs = {i: OSINTEnv(world=world, tasks=[tasks[i]], max_steps=max_steps, max_parallel_calls=max_parallel_calls) for i in idx}
        convs: dict[int, list[dict[str, str]]] = {}
        seen: dict[int, list[str]] = {}
        transcripts: dict[int, list[dict[str, str]]] = {i: [] for i in idx}
        for i in idx:
            obs, info = envs[i].reset(seed=0, options={"task_index": 0})
            convs[i] = chat.start_messages(obs, info["tools"] if full_schemas else None)
            seen[i] = [obs]
        active = list(idx)
        turn = 0
        while active:
            batch = [PolicyInput(convs[i], tasks[i], world, i, turn, env=envs[i], seen=seen[i]) for i in active]
            actions = policy.act(batch)
            still = []
            for i, action in zip(active, actions):
                obs, _, terminated, truncated, info = envs[i].step(action)
                convs[i] = convs[i] + [{"role": "assistant", "content": action}, chat.observation_message(obs)]
                seen[i].append(obs)
                transcripts[i].append({"action": action, "observation": obs})
                if terminated or truncated:
                    results[i] = _episode(tasks[i], envs[i], info, transcripts[i])
                else:
                    still.append(i)
            active = still
            turn += 1
        if progress is not None:
            progress.update(len(idx))
    return [r for r in results if r is not None]


def _episode(task: Task, env: OSINTEnv, info: dict[str, Any], transcript: list[dict[str, str]]) -> EpisodeResult:
    b = info["reward_breakdown"]
    return EpisodeResult(
        task.task_id, task.family, task.difficulty, task.question, list(task.answers), [list(e) for e in task.evidence],
        env.submitted, b["correct"], b["total"], b, b["evidence_f1"], info["critical_steps"], info["tool_calls"],
        info["invalid_actions"], info["parse_failures"], [list(e) for e in env.working_graph], transcript,
    )


def run(policy: Policy, world: World, tasks: list[Task], *, mode: str = "single_turn", **kwargs: Any) -> list[EpisodeResult]:
    if mode == "single_turn":
        return run_single_turn(policy, world, tasks, **kwargs)
    if mode == "multi_turn":
        return run_multi_turn(policy, world, tasks, **kwargs)
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
