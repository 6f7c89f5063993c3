"""Running a policy on tasks, in single-turn or multi-turn mode, with batched turns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from osint_eval.interface import Policy, PolicyInput
from osint_gym import chat
from osint_gym.env import OSINTEnv
from osint_gym.episode import EndReason, EpisodeRecord
from osint_gym.single_turn import answer_messages, build_context, parse_answer, score_completion
from osint_gym.spec import DEFAULT_SPEC, EpisodeSpec
from osint_gym.tasks import Task
from osint_gym.world import World

MODES = ("single_turn", "multi_turn")
# multi-turn: batches of episodes in flight; the fastest that `benchmarks/bench_eval.py` tried for a tiny model
# on a 2-core CPU (benchmarks/RESULTS.md)
IN_FLIGHT = 8


@dataclass
class EpisodeResult:
    """osint-eval's row of one episode, the unit of its metrics and reports. A multi-turn row wraps the env's
    `EpisodeRecord` (``record``: every turn with its error, the parallel-call counts, the task) and reads its
    figures from it (`from_record`); the flat fields are what a report file keeps of it, so a row read back from
    a report, or a single-turn answer (no env episode), has ``record`` None."""

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
    end: EndReason = EndReason.ANSWERED  # how the episode ended ("token_budget": a turn over max_new_tokens)
    record: EpisodeRecord | None = field(default=None, compare=False, repr=False)  # the env's own, never written

    @classmethod
    def from_record(cls, record: EpisodeRecord) -> EpisodeResult:
        """The row of an env's episode record (also of one read back from an Inspect log), wrapping it."""
        task, b = record.task, record.breakdown
        return cls(
            task_id=task.task_id, family=task.family, difficulty=task.difficulty, question=task.question,
            gold_answers=list(task.answers), gold_evidence=[list(e) for e in task.evidence], submitted=record.answer,
            correct=b.correct, reward=b.total, breakdown=b.to_dict(), evidence_f1=b.evidence_f1,
            steps=record.critical_steps, tool_calls=record.tool_calls, invalid_actions=record.invalid_actions,
            parse_failures=record.parse_failures, agent_evidence=[list(e) for e in record.evidence],
            transcript=[{"action": t.action, "observation": t.observation} for t in record.turns], end=record.end,
            record=record,
        )

    def to_dict(self) -> dict[str, Any]:
        """The report's row (the env's record stays in memory: the report keeps its flat fields)."""
        out = asdict(replace(self, record=None))
        del out["record"]
        return out


def run_single_turn(policy: Policy, world: World, tasks: list[Task], *, context_mode: str = "triples",
                    n_distractors: int = 6, decoys: int = 3, seed: int = 0, batch_size: int = 64,
                    progress: Any = None) -> list[EpisodeResult]:
    """One completion per task from a prompt that holds the context; scored like an episode."""
    results: list[EpisodeResult] = []
    for start in range(0, len(tasks), batch_size):
        chunk = tasks[start : start + batch_size]
        contexts = [build_context(world, t, mode=context_mode, n_distractors=n_distractors, decoys=decoys, seed=seed)
                    for t in chunk]
        batch = [
            PolicyInput(answer_messages(t, c), t, world, start + i, 0, context=c)
            for i, (t, c) in enumerate(zip(chunk, contexts))
        ]
        completions = policy.act(batch)
        for task, context, completion in zip(chunk, contexts, completions):
            b = score_completion(task, completion, context)
            parsed = parse_answer(completion, context)
            results.append(EpisodeResult(
                task_id=task.task_id, family=task.family, difficulty=task.difficulty, question=task.question,
                gold_answers=list(task.answers), gold_evidence=[list(e) for e in task.evidence],
                submitted=parsed.answer, correct=b.correct, reward=b.total, breakdown=b.to_dict(),
                evidence_f1=b.evidence_f1, steps=1, tool_calls=0, invalid_actions=int(parsed.error is not None),
                parse_failures=int(parsed.error is not None), agent_evidence=[list(e) for e in parsed.evidence],
                transcript=[{"action": completion, "observation": f"Context:\n{context.text}"}],
            ))
        if progress is not None:
            progress.update(len(chunk))
    return results


class _PolicyAgent:
    """An osint-eval `Policy` as osint-gym's `BatchAgent`: the conversation and the observations seen
    so far are kept per episode; each turn, every pending episode goes to the policy in one batch.
    A policy whose chat template renders tools (``native_tools``) gets the conversation in that
    template's tool-call format (`osint_gym.chat`), the others the plain JSON-action format."""

    def __init__(self, policy: Policy, worlds: list[World], tasks: list[Task], full_schemas: bool,
                 spec: EpisodeSpec = DEFAULT_SPEC) -> None:
        self.policy, self.worlds, self.tasks, self.full_schemas = policy, worlds, tasks, full_schemas
        self.spec = spec
        self.native = bool(getattr(policy, "native_tools", False))
        self.convs: dict[int, list[dict[str, Any]]] = {}
        self.seen: dict[int, list[str]] = {}
        self.envs: dict[int, OSINTEnv] = {}
        self.turn: dict[int, int] = {}

    def reset(self, index: int, env: OSINTEnv, observation: str, info: dict[str, Any]) -> None:
        # the spec's opening, as the training rollout and the demonstrations build it
        self.convs[index] = self.spec.start_messages(observation, info, native=self.native,
                                                     full_schemas=self.full_schemas)
        self.seen[index], self.envs[index], self.turn[index] = [observation], env, 0

    def act(self, pending: list[tuple[int, str]]) -> list[str | None]:
        batch = []
        for i, obs in pending:
            if self.turn[i]:  # the observation of the previous action
                self.convs[i] = self.convs[i] + chat.result_messages(obs, self.convs[i][-1], native=self.native)
                self.seen[i].append(obs)
            batch.append(PolicyInput(self.convs[i], self.tasks[i], self.worlds[i], i, self.turn[i],
                                     env=self.envs[i], seen=self.seen[i]))
        actions: list[str | None] = list(self.policy.act(batch))
        # the per-turn token budget: a model turn that did not end within the policy's max_new_tokens
        # ends its episode (the env scores it as its own truncation), as the token budget does in training
        unfinished = getattr(self.policy, "last_unfinished", ())  # duck-typed policies may not have it
        if len(unfinished) == len(actions):
            actions = [None if cut else a for a, cut in zip(actions, unfinished)]
        for (i, _), action in zip(pending, actions):
            if action is not None:
                self.convs[i] = self.convs[i] + [chat.assistant_message(action, native=self.native)]
            self.turn[i] += 1
        return actions


def run_multi_turn(policy: Policy, world: World, tasks: list[Task], *, spec: EpisodeSpec = DEFAULT_SPEC,
                   batch_size: int = 16, full_schemas: bool = False, progress: Any = None,
                   in_flight: int = IN_FLIGHT) -> list[EpisodeResult]:
    """Episodes in OSINT-v0 until the policy answers or the step budget ends, through osint-gym's one
    episode loop; ``in_flight * batch_size`` episodes run at once, their turns generated in batches of
    ``batch_size``. ``spec`` (`osint_gym.episode.EpisodeSpec`) is how the episodes are served: the env's
    budgets and observation format, the action syntax the system prompt asks for (the env accepts both)
    and, with ``describe_tools=False``, no system message and a reset observation of the question alone
    (the format of a model trained from scratch on it, osint-selfplay's ``answerer.describe_tools``)."""
    return run_multi_turn_items(policy, [(world, t) for t in tasks], spec=spec, batch_size=batch_size,
                                full_schemas=full_schemas, progress=progress, in_flight=in_flight)


def run_multi_turn_items(policy: Policy, items: list[tuple[World, Task]], *, spec: EpisodeSpec = DEFAULT_SPEC,
                         batch_size: int = 16, full_schemas: bool = False, progress: Any = None,
                         in_flight: int = IN_FLIGHT) -> list[EpisodeResult]:
    """`run_multi_turn` over (world, task) pairs: tasks of several worlds (a self-play run's training worlds)
    share the episodes in flight, so their turns are generated in full batches."""
    envs = [spec.make_env(w, t) for w, t in items]
    agent = _PolicyAgent(policy, [w for w, _ in items], [t for _, t in items], full_schemas, spec)
    # in_flight batches of episodes run at once and a finished one's slot takes the next task, so a
    # model policy sorts each turn's many prompts into batches of similar length (`HFPolicy.generate`)
    records = spec.play(envs, agent, max_active=in_flight * batch_size,
                        on_end=(lambda i, r: progress.update(1)) if progress is not None else None)
    return [EpisodeResult.from_record(r) for r in records]


def episode_result(record: EpisodeRecord) -> EpisodeResult:
    """osint-eval's row of an env's episode record (`EpisodeResult.from_record`)."""
    return EpisodeResult.from_record(record)


def run(
    policy: Policy, world: World, tasks: list[Task], *, mode: str = "single_turn", **kwargs: Any
) -> list[EpisodeResult]:
    recorded = policy.recorded(tasks, mode)  # episodes played elsewhere (an Inspect log)
    if recorded is not None:
        if kwargs.get("progress") is not None:
            kwargs["progress"].update(len(recorded))
        return recorded
    if mode == "single_turn":
        return run_single_turn(policy, world, tasks, **kwargs)
    if mode == "multi_turn":
        return run_multi_turn(policy, world, tasks, **kwargs)
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
