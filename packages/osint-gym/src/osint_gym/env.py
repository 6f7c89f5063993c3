"""OSINT-v0: investigate a hidden world through tools and name one entity.

## Description
A hidden world of people, accounts, organisations, places, events, posts and forum threads
(with aliases, name collisions, decoy accounts, misattributed posts, stale profiles and rumours)
sits behind a set of platform tools. Each episode poses one verified question whose answer is a
single entity id. The agent searches, reads records, optionally collects evidence edges into a
working graph, and answers.

## Observation Space
``Text(max_observation_chars, charset=osint_gym.text.CHARSET)``. On reset: the question and the
tool list. After a step: compact JSON ``{"step": k, "steps_left": n, "results": [...]}`` with one
entry per call (``{"call", "ok", "result"}`` or ``{"call", "ok": false, "error"}``).

## Action Space
``Text(16384, charset=CHARSET)``: what an LLM emits. A JSON object anywhere in the text, the
OpenAI function-call shape, ``<tool_call>`` tags, or a dict/list of those (see
`osint_gym.actions`). One action may carry up to ``max_parallel_calls`` tool calls, executed
together in one step, plus any number of ``add_edge`` calls and at most one ``answer``.

## Tools
search_posts, get_post, get_user_posts, get_mentions, search_threads, get_thread,
get_user_activity, get_profile, search_people, get_connections, search_notes; plus the control
actions add_edge(src, rel, dst) and answer(entity_id). OpenAI-style schemas are in
``info["tools"]`` after reset.

## Reward
See `osint_gym.reward`:
``R = correct * (1.0 + 0.2 * efficiency) + 0.3 * evidence_F1 - penalties``, paid at the answer;
an invalid action costs 0.02 at that step (capped at 0.2 per episode); several candidate ids cost
0.1 more and are never correct. R is in [-0.3, 1.5]; the breakdown is ``info["reward_breakdown"]``
once the episode ends.

## Episode End
Terminates on ``answer``. Truncates after ``max_steps`` sequential steps (the env owns this
budget because task verification proves every task solvable within it and the efficiency term
uses it; a parallel action counts as one step).

## Arguments
``seed`` (world seed, default 0), ``world_config`` (WorldConfig or dict), ``world`` (a prebuilt
World, e.g. a loaded MetaQA graph), ``tasks`` (fixed task list), ``benchmark`` ("v0:test"),
``difficulty``, ``family``, ``task_seed``, ``max_steps`` (24), ``max_parallel_calls`` (4),
``reward_config``, ``max_observation_chars`` (16384), ``render_mode`` ("ansi").
``reset(seed=..., options={"task": Task|dict, "task_index": int, "family": str, "difficulty": str})``.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from osint_gym.actions import MAX_ACTION_CHARS, Call, parse_action
from osint_gym.errors import ConfigError, TaskError
from osint_gym.reward import RewardBreakdown, RewardConfig, score_episode, step_penalty
from osint_gym.schema import RELATIONS, Edge, canonical_edge
from osint_gym.tasks import DEFAULT_MAX_PARALLEL_CALLS, DEFAULT_MAX_STEPS, DIFFICULTIES, Task, TaskSampler, verify_task
from osint_gym.text import CHARSET, fit_text, to_json
from osint_gym.tools import Notes, ToolError, tool_schemas, tools_for
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world


class OSINTEnv(gym.Env[str, str]):
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        seed: int = 0,
        world_config: WorldConfig | dict[str, Any] | None = None,
        world: World | None = None,
        tasks: Sequence[Task] | None = None,
        benchmark: str | None = None,
        difficulty: str | None = None,
        family: str | None = None,
        task_seed: int | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        max_parallel_calls: int = DEFAULT_MAX_PARALLEL_CALLS,
        reward_config: RewardConfig | dict[str, Any] | None = None,
        max_observation_chars: int = 16_384,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if difficulty is not None and difficulty not in DIFFICULTIES:
            raise ConfigError(f"difficulty must be one of {DIFFICULTIES} or None, got {difficulty!r}")
        for name, value, lo in (("max_steps", max_steps, 1), ("max_parallel_calls", max_parallel_calls, 1),
                                ("max_observation_chars", max_observation_chars, 256)):
            if isinstance(value, bool) or not isinstance(value, int) or value < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {value!r}")
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.max_parallel_calls = max_parallel_calls
        self.max_observation_chars = max_observation_chars
        self.reward_config = RewardConfig.from_dict(reward_config) if isinstance(reward_config, dict) else (reward_config or RewardConfig())
        self.difficulty, self.family = difficulty, family

        if benchmark is not None:
            from osint_gym.benchmark import benchmark_tasks, benchmark_world

            world = benchmark_world(benchmark)
            tasks = benchmark_tasks(benchmark, family=family, difficulty=difficulty)
        if world is None:
            cfg = WorldConfig.from_dict(world_config) if isinstance(world_config, dict) else world_config
            world = cached_world(cfg or WorldConfig(), seed)
        self.world = world
        self.tools = tools_for(world)
        self.schemas = tool_schemas(world)
        self.tasks: list[Task] | None = None
        self.sampler: TaskSampler | None = None
        if tasks is not None:
            self.tasks = [t for t in tasks if (family is None or t.family == family) and (difficulty is None or t.difficulty == difficulty)]
            if not self.tasks:
                raise ConfigError("no task left after the family/difficulty filters")
            for t in self.tasks[:0] if benchmark else self.tasks:  # benchmark tasks were verified when built
                self._check_task(t)
        else:
            self.sampler = TaskSampler(
                world, seed if task_seed is None else task_seed, families=[family] if family else None,
                difficulty=difficulty, max_steps=max_steps, max_parallel_calls=max_parallel_calls,
            )
        self.observation_space = spaces.Text(max_observation_chars, charset=CHARSET)
        self.action_space = spaces.Text(MAX_ACTION_CHARS, charset=CHARSET)
        self._tool_help = ", ".join(
            f"{s['function']['name']}({', '.join(s['function']['parameters']['properties'])})" for s in self.schemas
        )
        self.task: Task | None = None
        self._done = True

    # ------------------------------------------------------------------ helpers
    def _check_task(self, task: Task) -> None:
        # Given tasks are verified against the standard budget: an env run with a tighter budget
        # (a harder evaluation) may truncate them, but they stay valid tasks.
        verdict = verify_task(self.world, task, max_steps=max(self.max_steps, DEFAULT_MAX_STEPS),
                              max_parallel_calls=self.max_parallel_calls)
        if not verdict.ok:
            raise TaskError(f"task {task.task_id!r} is not valid in this world: {verdict.reason.value}: {verdict.detail}")

    def _pick_task(self, options: dict[str, Any]) -> Task:
        unknown = set(options) - {"task", "task_index", "family", "difficulty"}
        if unknown:
            raise ConfigError(f"unknown reset option(s) {sorted(unknown)}; known: task, task_index, family, difficulty")
        if options.get("task") is not None:
            task = options["task"]
            task = Task.from_dict(task) if isinstance(task, dict) else task
            if not isinstance(task, Task):
                raise TaskError(f"options['task'] must be a Task or a dict, got {type(task).__name__}")
            self._check_task(task)
            return task
        index = options.get("task_index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise ConfigError(f"options['task_index'] must be an integer >= 0, got {index!r}")
        if self.tasks is not None:
            pool = [t for t in self.tasks if t.family == options.get("family", t.family)
                    and t.difficulty == options.get("difficulty", t.difficulty)]
            if not pool:
                raise ConfigError(f"no task matches options {options}")
            i = index if index is not None else int(self.np_random.integers(len(pool)))
            return pool[i % len(pool)]
        assert self.sampler is not None
        i = index if index is not None else int(self.np_random.integers(2**31 - 1))
        return self.sampler.sample(i, family=options.get("family"), difficulty=options.get("difficulty"))

    def _obs(self, data: Any) -> str:
        return fit_text(data if isinstance(data, str) else to_json(data), self.max_observation_chars)

    def _info(self, **extra: Any) -> dict[str, Any]:
        info = {
            "step": self.critical_steps,
            "critical_steps": self.critical_steps,
            "tool_calls": self.tool_calls,
            "invalid_actions": self.invalid_actions,
            "parse_failures": self.parse_failures,
            "evidence_edges": len(self.working_graph),
        }
        info.update(extra)
        return info

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.task = self._pick_task(dict(options or {}))
        self.notes = Notes()
        self.working_graph: dict[Edge, None] = {}
        self.critical_steps = self.tool_calls = self.invalid_actions = self.parse_failures = 0
        self.penalty_paid = 0.0
        self.call_log: list[tuple[bool, Any]] = []  # (part of a parallel step, ToolOutput or None)
        self.submitted: Any = None
        self.breakdown: RewardBreakdown | None = None
        self._done = False
        self.transcript: list[tuple[Any, str]] = []  # (action, observation), formatted by render()
        text = (
            f"{self.task.question}\n"
            f"Investigate with tools and answer with one entity id. Budget: {self.max_steps} steps, up to "
            f"{self.max_parallel_calls} tool calls per step.\nActions: {self._tool_help}"
        )
        info = self._info(
            task_id=self.task.task_id, family=self.task.family, difficulty=self.task.difficulty,
            tools=self.schemas, max_steps=self.max_steps, max_parallel_calls=self.max_parallel_calls,
        )
        return self._obs(text), info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done:
            return self._obs({"error": "the episode is over; call reset()"}), 0.0, True, False, self._info(action_error="episode over")
        self.critical_steps += 1
        parsed = parse_action(action)
        results: list[dict[str, Any]] = []
        error: str | None = parsed.error
        answer_calls: list[Call] = []
        if parsed.ok:
            error, answer_calls = self._run_calls(parsed.calls, results)
        else:
            self.parse_failures += 1
        invalid = error is not None
        if invalid:
            self.invalid_actions += 1
        reward = step_penalty(invalid, self.penalty_paid, self.reward_config)
        self.penalty_paid -= reward
        terminated = bool(answer_calls)
        truncated = not terminated and self.critical_steps >= self.max_steps
        extra: dict[str, Any] = {"action_error": error}
        if terminated:
            values = [c.args["entity_id"] for c in answer_calls]
            flat = [v for val in values for v in (val if isinstance(val, list) else [val])]
            self.submitted = flat[0] if len(flat) == 1 else flat
        if terminated or truncated:
            self._done = True
            self.breakdown = self._score()
            paid_before = self.penalty_paid + reward  # penalties returned by earlier steps
            reward = self.breakdown.total + paid_before  # so that the episode's rewards sum to the total
            extra.update(self._episode_summary())
        obs: dict[str, Any] = {"step": self.critical_steps, "steps_left": self.max_steps - self.critical_steps}
        if results:
            obs["results"] = results
        elif error is not None:  # the action as a whole was rejected (parse error, unknown tool, too many calls)
            obs["error"] = error
        if terminated:
            obs["answer_submitted"] = True
        text = self._obs(obs)
        self.transcript.append((action, text))
        return text, float(reward), terminated, truncated, self._info(**extra)

    def _run_calls(self, calls: tuple[Call, ...], results: list[dict[str, Any]]) -> tuple[str | None, list[Call]]:
        """Execute tool and add_edge calls in order; return (first error, answer calls)."""
        tool_calls = [c for c in calls if c.name in self.tools]
        unknown = [c.name for c in calls if c.name not in self.tools and c.name not in ("add_edge", "answer")]
        if unknown:
            return f"unknown tool {unknown[0][:60]!r}; known: {', '.join(list(self.tools) + ['add_edge', 'answer'])}", []
        if len(tool_calls) > self.max_parallel_calls:
            return f"{len(tool_calls)} tool calls in one step (max {self.max_parallel_calls})", []
        error: str | None = None
        parallel = len(tool_calls) > 1
        answers: list[Call] = []
        for call in calls:
            if call.name == "answer":
                value = call.args.get("entity_id") if isinstance(call.args, dict) and len(call.args) == 1 else None
                if isinstance(value, str) or (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
                    answers.append(call)
                    continue
                entry = {"call": "answer", "ok": False, "error": "answer needs {\"entity_id\": \"<id>\"}"}
            elif call.name == "add_edge":
                message = self._add_edge(call.args)
                entry = {"call": "add_edge", "ok": message is None}
                entry.update({"error": message} if message else {"result": "added"})
            else:
                self.tool_calls += 1
                try:
                    out = self.tools[call.name](self.world, self.notes, call.args)
                    self.call_log.append((parallel, out))
                    entry = {"call": call.name, "ok": True, "result": out.data}
                except ToolError as exc:
                    self.call_log.append((parallel, None))
                    message = str(exc)
                    entry = {"call": call.name, "ok": False, "error": message}
            if not entry["ok"] and error is None:
                error = entry["error"]
            results.append(entry)
        return error, answers

    def _add_edge(self, args: Any) -> str | None:
        if not isinstance(args, dict) or not all(isinstance(args.get(k), str) for k in ("src", "rel", "dst")):
            return "add_edge needs string fields src, rel, dst"
        extra = set(args) - {"src", "rel", "dst"}
        if extra:
            return f"add_edge: unknown field {sorted(extra)[0]!r}"
        if not self.world.kind.knows_relation(args["rel"]):
            return f"unknown relation {args['rel'][:40]!r}; known: {', '.join(RELATIONS)}"
        edge = canonical_edge(Edge(args["src"], args["rel"], args["dst"]))
        if edge not in self.notes.supported():
            return "that edge is not shown by any record you retrieved"
        self.working_graph[edge] = None
        return None

    def _score(self) -> RewardBreakdown:
        assert self.task is not None
        return score_episode(
            gold_answers=self.task.answers, gold_evidence=self.task.evidence, submitted=self.submitted,
            evidence=self.working_graph, critical_steps=self.critical_steps, max_steps=self.max_steps,
            penalties_paid=self.penalty_paid, cfg=self.reward_config,
        )

    def call_counts(self) -> dict[str, int]:
        """How many tool calls returned records that the agent's evidence or answer later used:
        ``useful_calls`` over all calls, and ``parallel_calls`` / ``useful_parallel_calls`` over calls
        made as part of a parallel step. Measured from what happened, never from what the agent says."""
        relevant = {n for e in self.working_graph for n in (e.head, e.tail)}
        if isinstance(self.submitted, str):
            relevant.add(self.submitted)
        useful = [out is not None and bool(out.entities & relevant) for _, out in self.call_log]
        parallel = [u for (par, _), u in zip(self.call_log, useful) if par]
        return {"useful_calls": sum(useful), "parallel_calls": len(parallel), "useful_parallel_calls": sum(parallel)}

    def _episode_summary(self) -> dict[str, Any]:
        assert self.breakdown is not None
        return {"reward_breakdown": self.breakdown.to_dict(), "correct": self.breakdown.correct,
                "answered": self.breakdown.answered, **self.call_counts()}

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.task is None:
            return None
        lines = [f"Q: {self.task.question}"]
        for action, text in self.transcript:
            lines.append(f"ACTION: {str(action)[:300]}")
            lines.append(f"OBS: {text[:600]}")
        if self.submitted is not None:
            lines.append(f"ANSWER: {self.submitted}")
        return "\n".join(lines) + "\n"
