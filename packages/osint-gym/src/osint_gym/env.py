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
entry per call (``{"call", "ok", "result"}`` or ``{"call", "ok": false, "error"}``). With
``observation_format="compact"`` the same facts as lines, one record per line (``step 2/24``,
``get_profile ok``, ``person person_103 name=" Olga Becker" employer= org_16 ...``; see
`osint_gym.compact`, whose `parse_compact` reads them back), about a quarter of the characters.

## Action Space
``Text(16384, charset=CHARSET)``: what an LLM emits. A JSON object anywhere in the text, the
OpenAI function-call shape, ``<tool_call>`` tags, or a dict/list of those (see
`osint_gym.actions`), or the short syntax ``get_profile account_164`` / ``answer person_103``
(one call per line, in every observation format). One action may carry up to ``max_parallel_calls`` tool calls, executed
together in one step, plus any number of ``add_edge`` calls and at most one ``answer``.

## Tools
search_posts, get_post, get_user_posts, get_mentions, search_threads, get_thread,
get_user_activity, get_profile, search_people, get_connections, search_notes; plus the control
actions add_edge(src, rel, dst) and answer(entity_id). OpenAI-style schemas are in
``info["tools"]`` after reset.

## Episode record
``env.unwrapped.episode()`` returns an `osint_gym.episode.EpisodeRecord` at any moment: the task,
every turn, the answer, the evidence graph, the env-measured counts and the reward breakdown. While
an episode runs, its record is scored exactly as the env's own truncation would score it, so an
episode cut from outside (a token budget: ``env.unwrapped.stop("token_budget")``; Gymnasium's
``TimeLimit``, which truncates without telling the env) reads the same reward as one the env
truncated itself. Drivers read this record, never env internals; `osint_gym.agents.run_episode`
runs a policy through it (and marks a ``TimeLimit`` cut as ``end="time_limit"``).

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
``reward_config``, ``max_observation_chars`` (16384; a longer observation loses the last items of
its longest lists and says so in ``"truncated"``, staying valid JSON; a compact one loses whole
trailing record lines and ends with a ``truncated:`` line), ``observation_format`` ("json" or
"compact"; part of the budgets a task is verified under), ``describe_tools`` (false: the reset
observation is the question alone, without budgets or tools), ``render_mode`` ("ansi").
Given tasks are verified under the env's observation budget (and step / parallel-call budgets no
smaller than the defaults: a tighter step budget is a harder evaluation of a valid task) unless
they carry a verification stamp that covers this world and these budgets (sampled and benchmark
tasks do), so building an env on stamped tasks verifies nothing. ``benchmark`` fixes the world and
the tasks: combining it with ``seed``, ``world_config``, ``world``, ``tasks`` or ``task_seed`` is an error.
Difficulty knobs (`osint_gym.knobs`), as arguments (every reset's default) and as reset options (that reset):
``hops`` (1 to 5: only tasks whose query walks that many hops; implies the difficulty, 1 easy, 2 medium, 3+ hard;
a fixed task list is filtered by it), ``decoy_density`` (0 to 0.8: the share of people who are near-miss decoys,
`WorldConfig.decoy_density`) and ``name_collision_rate`` (0 to 1). The two world knobs make the env play on the
world generated from its config with them replaced (the same seed; built once per config, and a reset without
them plays on the env's own world again); an env given ``benchmark``, ``world`` or ``tasks`` refuses them.
A start depth (`osint_gym.rungs`): ``start_depth`` (an argument, every reset's default; otherwise a task's own
``Task.start_depth``, 0 for every benchmark task) starts the episode after the demonstrator's first k steps (the
tool-only oracle that looks every name up first), played through `step` in the episode's formats
(``action_format``, "json" or "short", is the syntax it writes): the reset observation is the opening followed by
each given action (after ``> ``) and its observation, ``info`` adds ``start_depth``, ``opening`` and
``given_turns``, the record marks those turns ``given`` and every count it holds (critical steps, tool calls,
invalid actions; so the reward's efficiency) is the agent's own, while the step count and budget stay real. k runs
from 0 to the demonstration's length minus one (`OSINTEnv.demonstration`); 0 is the whole episode, unchanged.
``rung_mode="hint"`` serves a rung as a hint instead (QuestA's partial solution): the first k actions are listed
after the opening (``hint> ``, ``info["hints"]``) and the agent plays every step itself.
``reset(seed=..., options={"task": Task|dict, "task_index": int, "family": str, "difficulty": str, "hops": int,
"decoy_density": float, "name_collision_rate": float, "start_depth": int})``; an unknown option or a bad value is a
one-line
`ConfigError` naming it and the values it takes. Without ``tasks``, a reset serves the next task of a
`TaskStream` (one per world, filters and hops): sampler indices from a start that a seeded reset draws, verified
in batches ahead of serving, so a seed and options serve the same tasks in any process.

## Version History
* v0: initial release. Later, without changing task semantics: the episode record, verification
  stamps, JSON-preserving observation cuts, the compact observation format and the short action syntax.
  Sampled mode then serves pre-verified streams: a seed's first task is unchanged, later unseeded resets
  take the next sampler index instead of a fresh random one. Benchmark splits: v0, v1 and v2 (`osint_gym.benchmark`).
  Difficulty knobs at reset (hops, decoy_density, name_collision_rate); worlds with near-miss decoys give every
  person a past (``worked_at``, ``lived_in``, ``interested_in``), which person pages list. A start depth (rungs:
  the demonstrator's first k steps given); depth 0 is the episode it always was, byte for byte.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from osint_gym import rungs
from osint_gym.actions import MAX_ACTION_CHARS, Call, action_text, parse_action
from osint_gym.compact import fit_compact, reset_text
from osint_gym.episode import ACTION_FORMATS, STOP_REASONS, EndReason, EpisodeRecord, Turn
from osint_gym.errors import ConfigError, TaskError
from osint_gym.knobs import KNOBS, WORLD_KNOBS, check_knobs, with_knobs
from osint_gym.reward import RewardBreakdown, RewardConfig, score_episode, step_penalty
from osint_gym.schema import RELATIONS, Edge, canonical_edge
from osint_gym.spaces import text_space
from osint_gym.tasks import DIFFICULTIES, Task, TaskSampler, TaskStream
from osint_gym.tasks.sampler import check_hops
from osint_gym.tasks.task import DEFAULT_BUDGETS, Budgets
from osint_gym.tasks.verify import verified
from osint_gym.text import fit_json, fit_text
from osint_gym.tools import Notes, ToolError, world_shell
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world
from osint_gym.world.config import check_seed

_OPTIONS = ("task", "task_index", "family", "difficulty", *KNOBS, "start_depth")


_FIXED = "this env's world is fixed (benchmark=, world= or tasks=)"
_COUNTED = ("step", "critical_steps", "tool_calls", "invalid_actions", "parse_failures", "evidence_edges")


class OSINTEnv(gym.Env[str, str]):
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        seed: int | None = None,
        world_config: WorldConfig | dict[str, Any] | None = None,
        world: World | None = None,
        tasks: Sequence[Task] | None = None,
        benchmark: str | None = None,
        difficulty: str | None = None,
        family: str | None = None,
        task_seed: int | None = None,
        max_steps: int = DEFAULT_BUDGETS.max_steps,
        max_parallel_calls: int = DEFAULT_BUDGETS.max_parallel_calls,
        reward_config: RewardConfig | dict[str, Any] | None = None,
        max_observation_chars: int = DEFAULT_BUDGETS.max_observation_chars,
        observation_format: str = DEFAULT_BUDGETS.observation_format,
        describe_tools: bool = True,
        hops: int | None = None,
        decoy_density: float | None = None,
        name_collision_rate: float | None = None,
        start_depth: int | None = None,
        action_format: str = "json",
        rung_mode: str = "given",
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        if difficulty is not None and difficulty not in DIFFICULTIES:
            raise ConfigError(f"difficulty must be one of {DIFFICULTIES} or None, got {difficulty!r}")
        if seed is not None:
            check_seed(seed)
        self.render_mode, self.budgets = (
            render_mode,
            Budgets(max_steps, max_parallel_calls, max_observation_chars, observation_format),
        )
        if not isinstance(describe_tools, bool):
            raise ConfigError(f"describe_tools must be true or false, got {describe_tools!r}")
        if action_format not in ACTION_FORMATS:
            raise ConfigError(f"action_format must be one of {ACTION_FORMATS}, got {action_format!r}")
        if start_depth is not None and (isinstance(start_depth, bool) or not isinstance(start_depth, int)
                                        or start_depth < 0):
            raise ConfigError(f"start_depth must be an integer >= 0 or None, got {start_depth!r}")
        if rung_mode not in rungs.RUNG_MODES:
            raise ConfigError(f"rung_mode must be one of {rungs.RUNG_MODES}, got {rung_mode!r}")
        self.start_depth, self.action_format, self.rung_mode = start_depth, action_format, rung_mode
        self._demonstrations: dict[Task, tuple[str, ...]] = {}
        self.observation_format, self.describe_tools, self.max_steps = observation_format, describe_tools, max_steps
        self.max_parallel_calls, self.max_observation_chars = max_parallel_calls, max_observation_chars
        self.reward_config = (
            RewardConfig.from_dict(reward_config)
            if isinstance(reward_config, dict)
            else (reward_config or RewardConfig())
        )
        self.difficulty, self.family = difficulty, family
        self.knobs = check_knobs({"hops": hops, "decoy_density": decoy_density,
                                  "name_collision_rate": name_collision_rate}, "argument")
        check_hops(self.knobs.get("hops"), difficulty)
        if benchmark is not None:
            world, tasks = self._benchmark(
                benchmark, seed=seed, world_config=world_config, world=world, tasks=tasks, task_seed=task_seed
            )
        world = self._place_world(world, tasks, world_config, seed)
        self.tools, self.schemas, self._tool_help = world_shell(world)
        self.tasks: list[Task] | None = None
        self.sampler: TaskSampler | None = None
        self._streams: dict[tuple[Any, ...], TaskStream] = {}
        self._stream_start: int | None = None
        if tasks is not None:
            kept = [
                t
                for t in tasks
                if (family is None or t.family == family) and (difficulty is None or t.difficulty == difficulty)
            ]
            if not kept:
                raise ConfigError("no task left after the family/difficulty filters")
            self.tasks = [verified(world, t, self.budgets) for t in kept]  # stamped tasks pass through as they are
        else:
            self._sampler_seed = (seed or 0) if task_seed is None else task_seed
            self.sampler = self._sampler(world)
        self._worlds: dict[WorldConfig, tuple[World, TaskSampler | None]] = {}
        if self._world_config is not None:
            self._worlds[self._world_config] = (world, self.sampler)
        self.observation_space = text_space(max_observation_chars)
        self.action_space = text_space(MAX_ACTION_CHARS)
        self.task: Task | None = None
        self._end = EndReason.STOPPED  # no episode yet: step() asks for reset()

    def _place_world(self, world: World | None, tasks: Sequence[Task] | None,
                     world_config: WorldConfig | dict[str, Any] | None, seed: int | None) -> World:
        """The env's world: the given one, or the generated one with the world knobs applied. Only a generated
        world without given tasks can take world knobs (``_world_config`` is then the config they replace)."""
        fixed = world is not None or tasks is not None
        if fixed and any(k in self.knobs for k in WORLD_KNOBS):
            raise ConfigError(f"{_FIXED}; drop decoy_density and name_collision_rate, or pass world_config= instead")
        self._world_seed = seed or 0
        self._world_config: WorldConfig | None = None
        if world is None:
            cfg = WorldConfig.from_dict(world_config) if isinstance(world_config, dict) else world_config
            cfg = with_knobs(cfg or WorldConfig(), self.knobs)
            world = cached_world(cfg, self._world_seed)
            self._world_config = None if fixed else cfg
        self.world = self._home = world
        return world

    @staticmethod
    def _benchmark(name: str, **given: Any) -> tuple[World, list[Task]]:
        clash = sorted(k for k, v in given.items() if v is not None)
        if clash:
            raise ConfigError(f"benchmark={name!r} fixes the world and its tasks; drop {', '.join(clash)} "
                              "(filter with family= / difficulty=, or pass world= and tasks= instead)")
        from osint_gym.benchmark import benchmark_tasks, benchmark_world

        return benchmark_world(name), list(benchmark_tasks(name))

    # ------------------------------------------------------------------ helpers
    def _sampler(self, world: World) -> TaskSampler:
        return TaskSampler(world, self._sampler_seed, families=[self.family] if self.family else None,
                           difficulty=self.difficulty, budgets=self.budgets)

    def _use_world(self, knobs: dict[str, Any]) -> None:
        """The generated world with these world knobs (the env's own without them), built once per config."""
        if self._world_config is None:
            raise ConfigError(f"{_FIXED}; the reset options decoy_density and name_collision_rate need an env "
                              "that generates its world (world_config= or no world at all)")
        config = with_knobs(self._world_config, knobs)
        if config not in self._worlds:
            world = cached_world(config, self._world_seed)
            self._worlds[config] = (world, self._sampler(world))
        world, self.sampler = self._worlds[config]
        if world is not self.world:
            self.world = world
            self.tools, self.schemas, self._tool_help = world_shell(world)

    def _pick_task(self, options: dict[str, Any]) -> Task:
        unknown = set(options) - set(_OPTIONS)
        if unknown:
            raise ConfigError(f"unknown reset option(s) {sorted(unknown)}; known: {', '.join(_OPTIONS)}")
        knobs = {**self.knobs, **check_knobs(options, "reset option")} if options else self.knobs
        hops = knobs.get("hops")
        if options:
            check_hops(hops, options.get("difficulty", self.difficulty))
        world_knobs = {k: v for k, v in knobs.items() if k in WORLD_KNOBS}
        if world_knobs or self.world is not self._home:  # back home after a reset that set world knobs
            self._use_world(world_knobs)
        if options.get("task") is not None:
            task = options["task"]
            task = Task.from_dict(task) if isinstance(task, dict) else task
            if not isinstance(task, Task):
                raise TaskError(f"options['task'] must be a Task or a dict, got {type(task).__name__}")
            return verified(self.world, task, self.budgets)
        index = options.get("task_index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise ConfigError(f"options['task_index'] must be an integer >= 0, got {index!r}")
        if self.tasks is not None:
            pool = self.tasks if "family" not in options and "difficulty" not in options and hops is None else [
                t for t in self.tasks if t.family == options.get("family", t.family)
                and t.difficulty == options.get("difficulty", t.difficulty)
                and (hops is None or (t.query is not None and t.query.n_hops == hops))]
            if not pool:
                raise ConfigError(f"no task matches options {options}")
            if index is not None and index >= len(pool):
                raise ConfigError(f"options['task_index'] is {index}, but this env has {len(pool)} matching task(s)")
            return pool[index if index is not None else int(self.np_random.integers(len(pool)))]
        if self.sampler is None:
            raise ConfigError("this env has neither tasks nor a sampler")
        family, difficulty = options.get("family"), options.get("difficulty")
        if index is not None:
            return self.sampler.sample(index, family=family, difficulty=difficulty, hops=hops)
        key = (self.world.config, family, difficulty, hops)
        if key not in self._streams:
            assert self._stream_start is not None  # reset() draws it before picking
            self._streams[key] = TaskStream(self.sampler, self._stream_start, family=family, difficulty=difficulty,
                                            hops=hops)
        return self._streams[key].next()

    def _info(self, **extra: Any) -> dict[str, Any]:
        given = self._given
        info = {
            "step": self._steps,  # the env's own count (given steps included: the budget is real)
            "critical_steps": self._steps - given.steps,  # the agent's own, as every count below
            "tool_calls": self._tool_calls - given.tool_calls,
            "invalid_actions": self._invalid - given.invalid,
            "parse_failures": self._parse_failures - given.parse_failures,
            "evidence_edges": len(self._graph),
        }
        info.update(extra)
        return info

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if self.sampler is not None and (seed is not None or self._stream_start is None):
            # the index a seeded reset used to sample at is where its stream of pre-verified tasks starts
            self._stream_start = int(self.np_random.integers(2**31 - 1))
            self._streams.clear()
        options = dict(options or {})
        self.task = self._pick_task(options)
        self._notes = Notes()
        self._graph: dict[Edge, None] = {}
        self._steps = self._tool_calls = self._invalid = self._parse_failures = 0
        self._penalty_paid = 0.0
        self._call_log: list[tuple[bool, Any]] = []  # (part of a parallel step, ToolOutput or None)
        self._submitted: Any = None
        self._breakdown: RewardBreakdown | None = None
        self._turns: list[Turn] = []
        self._given = rungs.Given()
        self._end = EndReason.RUNNING
        text = reset_text(self.observation_format, self.task.question, self.max_steps, self.max_parallel_calls,
                          self.schemas, self._tool_help) if self.describe_tools else self.task.question
        self._first = fit_text(text, self.max_observation_chars)
        info = self._info(
            task_id=self.task.task_id, family=self.task.family, difficulty=self.task.difficulty,
            tools=self.schemas, max_steps=self.max_steps, max_parallel_calls=self.max_parallel_calls,
        )
        depth = options.get("start_depth", self.task.start_depth if self.start_depth is None else self.start_depth)
        if isinstance(depth, int) and not isinstance(depth, bool) and depth == 0:
            return self._first, info  # the whole episode: exactly the reset it always was
        return self._give(depth, info)

    def _give(self, depth: Any, info: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Play the demonstrator's first ``depth`` steps through `step` (a rung, `osint_gym.rungs`); the reset
        observation carries them after the opening, and every count the agent is scored on starts after them."""
        assert self.task is not None
        actions = self.demonstration()
        rungs.check_depth(depth, len(actions), self.task)
        if self.rung_mode == "hint":  # QuestA's partial solution: the steps are shown, the agent still plays them
            self._first = fit_text(rungs.hint_text(self._first, actions[:depth]), self.max_observation_chars)
            return self._first, {**info, "start_depth": depth, "hints": list(actions[:depth])}
        for action in actions[:depth]:
            self.step(action)
        self._turns = [dataclasses.replace(t, given=True) for t in self._turns]
        self._given = rungs.Given(self._steps, self._tool_calls, self._invalid, self._parse_failures,
                                  self._penalty_paid, len(self._call_log))
        info = {**self._info(**{k: v for k, v in info.items() if k not in _COUNTED}), **rungs.given_info(
            self._first, self._turns)}
        return fit_text(rungs.given_text(self._first, self._turns), self.max_observation_chars), info

    def demonstration(self) -> tuple[str, ...]:
        """The demonstrator's actions on the current task, through to its answer, under this env's budgets
        (`osint_gym.rungs.demonstration`; played once per task in an env of its own): its length is the task's
        number of rungs."""
        task = rungs.planned(self.task)
        if task not in self._demonstrations:
            self._demonstrations[task] = rungs.demonstration(
                lambda: OSINTEnv(world=self.world, tasks=[task], start_depth=0, action_format=self.action_format,
                                 max_steps=self.max_steps, max_parallel_calls=self.max_parallel_calls,
                                 max_observation_chars=self.max_observation_chars,
                                 observation_format=self.observation_format, describe_tools=self.describe_tools),
                self.action_format)
        return self._demonstrations[task]

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._end != EndReason.RUNNING:
            return (
                self._fit({"error": "the episode is over; call reset()"}),
                0.0,
                True,
                False,
                {"action_error": "episode over"},
            )
        self._steps += 1
        parsed = parse_action(action, action_format=self.action_format)
        results: list[dict[str, Any]] = []
        error: str | None = parsed.error
        answer_calls: list[Call] = []
        if parsed.ok:
            error, answer_calls = self._run_calls(parsed.calls, results)
        else:
            self._parse_failures += 1
        if error is not None:
            self._invalid += 1
        reward = step_penalty(error is not None, self._penalty_paid, self.reward_config)
        self._penalty_paid -= reward
        terminated = bool(answer_calls)
        truncated = not terminated and self._steps >= self.max_steps
        extra: dict[str, Any] = {"action_error": error}
        if terminated:
            flat = [
                v
                for c in answer_calls
                for v in (c.args["entity_id"] if isinstance(c.args["entity_id"], list) else [c.args["entity_id"]])
            ]
            self._submitted = flat[0] if len(flat) == 1 else flat
        if terminated or truncated:
            paid_before = self._penalty_paid + reward  # penalties returned by earlier steps
            self._finish(EndReason.ANSWERED if terminated else EndReason.STEP_BUDGET)
            assert self._breakdown is not None
            reward = self._breakdown.total + paid_before  # so that the episode's rewards sum to the total
            extra.update(self._episode_summary())
        obs: dict[str, Any] = {"step": self._steps, "steps_left": self.max_steps - self._steps}
        if results:
            obs["results"] = results
        elif error is not None:  # the action as a whole was rejected (parse error, unknown tool, too many calls)
            obs["error"] = error
        if terminated:
            obs["answer_submitted"] = True
        text = self._fit(obs)
        self._turns.append(Turn(action_text(action), text, float(reward), error))
        return text, float(reward), terminated, truncated, self._info(**extra)

    def _fit(self, obs: dict[str, Any]) -> str:
        if self.observation_format == "compact":  # the compact format always starts with its step header
            steps = getattr(self, "_steps", 0)
            return fit_compact({"step": steps, "steps_left": self.max_steps - steps, **obs}, self.max_observation_chars)
        return fit_json(obs, self.max_observation_chars)

    def _run_calls(self, calls: tuple[Call, ...], results: list[dict[str, Any]]) -> tuple[str | None, list[Call]]:
        """Execute tool and add_edge calls in order; return (first error, answer calls)."""
        tool_calls = [c for c in calls if c.name in self.tools]
        unknown = [c.name for c in calls if c.name not in self.tools and c.name not in ("add_edge", "answer")]
        if unknown:
            return (
                f"unknown tool {unknown[0][:60]!r}; known: {', '.join(list(self.tools) + ['add_edge', 'answer'])}",
                [],
            )
        if len(tool_calls) > self.max_parallel_calls:
            return f"{len(tool_calls)} tool calls in one step (max {self.max_parallel_calls})", []
        error: str | None = None
        parallel = len(tool_calls) > 1
        answers: list[Call] = []
        for call in calls:
            if call.name == "answer":
                value = call.args.get("entity_id") if isinstance(call.args, dict) and len(call.args) == 1 else None
                if isinstance(value, str) or (
                    isinstance(value, list) and value and all(isinstance(v, str) for v in value)
                ):
                    answers.append(call)
                    continue
                entry: dict[str, Any] = {"call": "answer", "ok": False, "error": 'answer needs {"entity_id": "<id>"}'}
            elif call.name == "add_edge":
                message = self._add_edge(call.args)
                entry = {"call": "add_edge", "ok": message is None}
                entry.update({"error": message} if message else {"result": "added"})
            else:
                self._tool_calls += 1
                try:
                    out = self.tools[call.name](self.world, self._notes, call.args)
                    self._call_log.append((parallel, out))
                    entry = {"call": call.name, "ok": True, "result": out.data}
                except ToolError as exc:
                    self._call_log.append((parallel, None))
                    entry = {"call": call.name, "ok": False, "error": str(exc)}
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
        if edge not in self._notes.supported():
            return "that edge is not shown by any record you retrieved"
        self._graph[edge] = None
        return None

    def _finish(self, end: EndReason) -> None:
        assert self.task is not None
        self._end = end
        self._breakdown = self._score()

    def _score(self) -> RewardBreakdown:
        assert self.task is not None
        return score_episode(
            gold_answers=self.task.answers, gold_evidence=self.task.evidence, submitted=self._submitted,
            evidence=self._graph, critical_steps=self._steps - self._given.steps, max_steps=self.max_steps,
            penalties_paid=self._penalty_paid - self._given.penalty_paid, cfg=self.reward_config, known=self.world,
        )

    def _call_counts(self) -> dict[str, int]:
        """Calls whose records the agent's evidence or answer later used, over all calls and over calls
        made as part of a parallel step. Measured from what happened, never from what the agent says."""
        relevant = {n for e in self._graph for n in (e.head, e.tail)}
        if isinstance(self._submitted, str):
            relevant.add(self._submitted)
        own = self._call_log[self._given.calls :]  # the agent's own calls
        useful = [out is not None and bool(out.entities & relevant) for _, out in own]
        parallel = [u for (par, _), u in zip(own, useful) if par]
        return {"useful_calls": sum(useful), "parallel_calls": len(parallel), "useful_parallel_calls": sum(parallel)}

    def _episode_summary(self) -> dict[str, Any]:
        assert self._breakdown is not None
        return {"reward_breakdown": self._breakdown.to_dict(), "correct": self._breakdown.correct,
                "answered": self._breakdown.answered, **self._call_counts()}

    # ------------------------------------------------------------------ the episode record
    def episode(self) -> EpisodeRecord:
        """The current episode as the env observed it (see `osint_gym.episode`). While it runs, the
        breakdown is what truncating it now would score."""
        if self.task is None:
            raise ConfigError("no episode yet: call reset() first")
        breakdown = self._breakdown if self._breakdown is not None else self._score()
        counts = self._info()
        return EpisodeRecord(
            task=self.task, first_observation=self._first, turns=tuple(self._turns), answer=self._submitted,
            evidence=tuple(self._graph), critical_steps=counts["critical_steps"], tool_calls=counts["tool_calls"],
            invalid_actions=counts["invalid_actions"], parse_failures=counts["parse_failures"],
            **self._call_counts(), breakdown=breakdown, end=self._end, max_steps=self.max_steps,
            max_parallel_calls=self.max_parallel_calls, given_steps=self._given.steps,
        )

    def stop(self, reason: str = EndReason.STOPPED) -> EpisodeRecord:
        """End a running episode from outside (a token budget, a time limit; an `EndReason` of `STOP_REASONS` or its
        value): it is scored as the env scores its own truncation (unanswered) and later steps are refused. Returns
        the record."""
        if reason not in STOP_REASONS:
            raise ConfigError(f"stop reason must be 'time_limit', 'token_budget' or 'stopped', got {reason!r}")
        if self._end == EndReason.RUNNING:
            self._finish(EndReason(reason))
        return self.episode()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.task is None:
            return None
        lines = [f"Q: {self.task.question}"]
        for turn in self._turns:
            lines.append(f"ACTION: {turn.action[:300]}")
            lines.append(f"OBS: {turn.observation[:600]}")
        if self._submitted is not None:
            lines.append(f"ANSWER: {self._submitted}")
        return "\n".join(lines) + "\n"

