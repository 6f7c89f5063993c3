"""OSINT-v0 as a verifiers environment (verifiers >= 0.4, the ``verifiers.v1`` stack;
``pip install 'osint-gym[verifiers]'``).

verifiers 0.4 composes an environment from a taskset (the tasks), a harness (the program that plays a
task: it talks to the model through verifiers' interception endpoint) and an env (which agents play).
This module supplies the three for OSINT-v0, found by verifiers under the taskset id ``osint-gym``
(verifiers imports the module ``osint_gym`` and reads the plugin classes from its ``__all__``, which
`osint_gym/__init__.py` fills lazily)::

    vf-eval osint-gym -m MODEL --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var OPENAI_API_KEY \\
        --env.taskset.split v0:test -n 10 -r 1 --no-push --no-rich

* `OSINTTaskset`: one task per OSINT-v0 benchmark task (`osint_gym.benchmark.benchmark_tasks`, the split,
  difficulty, family, limit and hops filters of its config), or, with the world knobs ``decoy_density`` /
  ``name_collision_rate``, tasks sampled from a world generated with them (`osint_gym.knobs.knob_tasks`).
* `OSINTHarness`: an in-process tool loop (verifiers' contract: every model call goes through the
  rollout's interception endpoint). Each rollout gets one `OSINTEnv` in its harness session; the tools the
  model sees are the env's own schemas (`osint_gym.tools.tool_schemas`); every model turn is one env step
  (the assistant's tool calls, or its text, go to `OSINTEnv.step` unchanged, so parse errors, unknown
  tools and malformed arguments get the env's own error observation); the loop ends when the env ends
  the episode (an answer, or its step budget: the turn limit). The episode record goes on the trace.
* `OSINTTask`: the rubric reads the env's episode record (`osint_gym.episode.EpisodeRecord.to_dict`):
  reward ``osint_reward`` (the env's reward), and metrics ``correct``, ``answered``, ``evidence_f1``,
  ``correctness``/``evidence``/``efficiency``/``penalty`` (the terms of the env's reward breakdown) and the
  env-measured counts. Nothing is re-scored here.
* `OSINTVerifiersEnv`: the single seat ``agent``, run on the local subprocess runtime (the harness runs
  nothing in it) with the env's step budget as its ``max_turns``.

`load_environment(...)` builds the same environment in Python (prime-rl / verifiers training, or
``env.run_episode``).
"""

from __future__ import annotations

import json
from typing import Any

import verifiers.v1 as vf
from openai import AsyncOpenAI
from pydantic import Field, ValidationError, model_validator

from osint_gym import chat, rungs
from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError
from osint_gym.knobs import SAMPLED, knob_tasks
from osint_gym.tasks import Task
from osint_gym.tasks.task import DEFAULT_BUDGETS, OBSERVATION_FORMATS
from osint_gym.tools import tool_schemas
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world

TASKSET_ID = "osint-gym"
EPISODE_KEY = "osint_episode"  # trace.info key of the env's episode record
# the shared tool message of a parallel step: the env answers a step with one observation (every call's result)
SEE_FIRST = "(this turn's results are all in the first tool message of the turn)"
COUNTS = ("critical_steps", "tool_calls", "invalid_actions", "parse_failures", "useful_calls")


class OSINTTasksetConfig(vf.TasksetConfig):
    split: str | None = None
    """An OSINT-v0 benchmark split (`osint_gym.benchmark.split_ids()`: v2:test, v1:test, v0:..., v0:test if
    not given); not with the world knobs, which make their own world."""
    difficulty: str | None = None
    """Keep only tasks of this difficulty (easy, medium, hard)."""
    family: str | None = None
    """Keep only tasks of this family (e.g. identity_resolution)."""
    limit: int | None = Field(None, ge=0)
    """The split's first N tasks after the filters."""
    observation_format: str = DEFAULT_BUDGETS.observation_format
    """The env's observation format: json or compact."""
    max_turns: int | None = Field(None, ge=1)
    """The env's step budget (the turn limit); None: OSINT-v0's default."""
    hops: int | None = None
    """Keep only tasks that walk this many hops (1 to 5)."""
    decoy_density: float | None = None
    """Sample tasks from a world with this share of near-miss decoys (0 to 0.8) instead of a split."""
    name_collision_rate: float | None = None
    """Sample tasks from a world with this share of people named like someone else (0 to 1) instead of a split."""
    seed: int = 0
    """World and task seed of sampled tasks (with a world knob)."""
    start_depth: int = Field(0, ge=0)
    """Start every episode after the demonstrator's first k steps (`osint_gym.rungs`); every task must be longer."""

    @model_validator(mode="after")
    def _known_split_and_filters(self) -> OSINTTasksetConfig:
        """An unknown split, filter or observation format fails here, as a one-line config error."""
        if self.observation_format not in OBSERVATION_FORMATS:
            raise ConfigError(
                f"observation_format must be one of {OBSERVATION_FORMATS}, got {self.observation_format!r}"
            )
        world, tasks, _ = _source(self)
        steps = self.max_turns or DEFAULT_BUDGETS.max_steps
        rungs.check_tasks(lambda t: OSINTEnv(world=world, tasks=[t], start_depth=0, max_steps=steps,
                                             observation_format=self.observation_format), tasks, self.start_depth)
        return self


class OSINTTaskData(vf.TaskData):
    task: dict[str, Any]
    """The osint-gym task (`Task.to_dict`)."""
    split: str
    """Where the task comes from: a benchmark split, or ``sampled:...`` (then ``world_config`` and ``world_seed``)."""
    world_config: dict[str, Any] | None = None
    """The generated world's `WorldConfig` (sampled tasks only)."""
    world_seed: int = 0
    family: str
    difficulty: str
    observation_format: str
    max_steps: int
    start_depth: int = 0


class OSINTTask(vf.Task[OSINTTaskData, vf.State, vf.TaskConfig]):
    """One OSINT-v0 task; its rubric reads the env's episode record from the trace."""

    @property
    def key(self) -> str:
        return f"{self.data.split}/{self.data.task['task_id']}"

    @vf.reward
    async def osint_reward(self, trace: vf.Trace) -> float:
        """The env's reward for the episode (`EpisodeRecord.reward`)."""
        return float(episode_record(trace)["reward"])

    @vf.metric
    async def osint_metrics(self, trace: vf.Trace) -> dict[str, float]:
        """Success, the terms of the env's reward breakdown and its counts, as the env reported them."""
        record = episode_record(trace)
        b = record["breakdown"]
        terms = {"correct": b["correct"], "answered": b["answered"], "evidence_f1": b["evidence_f1"],
                 "correctness": b["answer"], "evidence": b["evidence"], "efficiency": b["efficiency"],
                 "penalty": b["penalty"]}
        return {**{k: float(v) for k, v in terms.items()}, **{k: float(record[k]) for k in COUNTS}}


def episode_record(trace: vf.Trace) -> dict[str, Any]:
    """The env's episode record the harness left on ``trace`` (one-line error if the env never started)."""
    record = trace.info.get(EPISODE_KEY)
    if record is None:
        raise vf.TaskError(
            f"rollout {trace.id}: no OSINT-v0 episode record (the env never started: see the trace's errors)"
        )
    return dict(record)


class OSINTTaskset(vf.Taskset[OSINTTask, OSINTTasksetConfig]):
    """The tasks of one OSINT-v0 benchmark split."""

    def __init__(self, config: OSINTTasksetConfig) -> None:
        super().__init__(config)
        world, self.tasks, self.source = _source(config)
        sampled = self.source.startswith(SAMPLED)
        self.world_config = world.config.to_dict() if sampled and world.config is not None else None
        self.world_seed = world.seed or 0

    def load(self) -> list[OSINTTask]:
        c = self.config
        max_steps = c.max_turns or DEFAULT_BUDGETS.max_steps
        return [
            OSINTTask(
                OSINTTaskData(
                    id=t.task_id,
                    name=t.task_id,
                    prompt=t.question,
                    system_prompt=chat.NATIVE_SYSTEM_PROMPT,
                    task=t.to_dict(),
                    split=self.source,
                    world_config=self.world_config,
                    world_seed=self.world_seed,
                    family=t.family,
                    difficulty=t.difficulty,
                    observation_format=c.observation_format,
                    max_steps=max_steps,
                    start_depth=c.start_depth,
                ),
                c.task,
            )
            for t in self.tasks
        ]


def _source(config: OSINTTasksetConfig) -> tuple[World, list[Task], str]:
    return knob_tasks(config.split, seed=config.seed, limit=config.limit, family=config.family,
                      difficulty=config.difficulty, hops=config.hops, decoy_density=config.decoy_density,
                      name_collision_rate=config.name_collision_rate)


# ---------------------------------------------------------------------------- the harness
def _assistant_turn(message: Any) -> tuple[str, dict[str, Any]]:
    """The env action of one assistant message (its tool calls in the OpenAI shape the env parses, else
    its text) and the message as it goes back into the conversation."""
    calls = list(message.tool_calls or [])
    content = message.content or ""
    if not calls:
        return content, {"role": "assistant", "content": content}
    wire = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in calls]
    action = json.dumps({"tool_calls": [w["function"] for w in wire]})
    return action, {"role": "assistant", "content": content or None, "tool_calls": wire}


def _result_messages(turn: dict[str, Any], observation: str) -> list[dict[str, Any]]:
    """The env's observation as the answer to ``turn``: tool messages (the observation in the first) after
    tool calls, a user message after text."""
    calls = turn.get("tool_calls") or []
    if not calls:
        return [chat.observation_message(observation)]
    return [{"role": "tool", "tool_call_id": c["id"], "content": observation if k == 0 else SEE_FIRST}
            for k, c in enumerate(calls)]


class OSINTSession(vf.HarnessSession):
    """One rollout: its `OSINTEnv`, the conversation, and the tool loop (one env step per model turn)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        data = self.trace.task.data
        info = data.model_dump() if hasattr(data, "model_dump") else dict(data)
        task = Task.from_dict(info["task"])
        if info.get("world_config") is not None:
            world = cached_world(WorldConfig.from_dict(info["world_config"]), info.get("world_seed", 0))
        else:
            from osint_gym.benchmark import benchmark_world

            world = benchmark_world(info["split"])
        self.env = OSINTEnv(world=world, tasks=[task], max_steps=info["max_steps"],
                            observation_format=info["observation_format"], start_depth=info.get("start_depth", 0))
        first, _ = self.env.reset(seed=0, options={"task_index": 0})
        self.schemas = tool_schemas(self.env.world)
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": chat.NATIVE_SYSTEM_PROMPT},
                                               {"role": "user", "content": first}]
        self.done = False
        self._record()

    def _record(self) -> None:
        self.trace.info[EPISODE_KEY] = self.env.episode().to_dict()

    async def _run(self, messages: Any) -> vf.ProgramResult:
        for m in messages or []:  # a later segment: the run's user spoke
            self.messages.append({"role": "user", "content": m.content if hasattr(m, "content") else str(m)})
        client = AsyncOpenAI(base_url=self.endpoint, api_key=self.secret, max_retries=0)
        try:
            while not self.done:
                reply = await client.chat.completions.create(model=self.ctx.model, messages=self.messages,
                                                             tools=self.schemas)
                action, turn = _assistant_turn(reply.choices[0].message)
                observation, _, terminated, truncated, _ = self.env.step(action)
                self.messages += [turn, *_result_messages(turn, observation)]
                self.done = terminated or truncated
                self._record()
        except Exception as exc:  # noqa: BLE001 - a refused turn (max_turns, a @stop) ends the loop, not the rollout
            if self.trace.stop_condition is None:
                raise
            self.done = True
            return vf.ProgramResult(0, "", f"stopped: {self.trace.stop_condition} ({type(exc).__name__})")
        finally:
            await client.close()
        return vf.ProgramResult(0, "", "")


class OSINTHarnessConfig(vf.HarnessConfig):
    pass


class OSINTHarness(vf.Harness[OSINTHarnessConfig]):
    """The in-process tool loop of an OSINT-v0 rollout (see `OSINTSession`)."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def session(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: dict[str, str],
                      data: Any, tool_interception_url: str | None = None) -> vf.HarnessSession:
        return OSINTSession(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data, tool_interception_url)

    async def launch(self, *args: Any, **kwargs: Any) -> vf.ProgramResult:
        raise vf.HarnessError("the OSINT-v0 harness runs through its session (OSINTHarness.session)")


# ---------------------------------------------------------------------------- the env
class OSINTEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig(), max_turns=DEFAULT_BUDGETS.max_steps)
    """The one seat: the policy under evaluation/training (local runtime: the harness runs in-process)."""


class OSINTVerifiersEnv(vf.Env[OSINTEnvConfig]):
    """OSINT-v0's single seat playing one benchmark task per episode."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


def load_environment(split: str | None = None, difficulty: str | None = None, family: str | None = None,
                     observation_format: str = "json", max_turns: int | None = None, limit: int | None = None,
                     hops: int | None = None, decoy_density: float | None = None,
                     name_collision_rate: float | None = None, seed: int = 0, start_depth: int = 0,
                     **kwargs: Any) -> OSINTVerifiersEnv:
    """The OSINT-v0 verifiers environment (``vf.load_environment`` of its config); ``kwargs`` go to the env
    config (e.g. ``agent={"max_turns": 8}``, ``timeout=...``). The knobs are `osint_gym.knobs`'. An unknown split,
    filter or knob value: `ConfigError`."""
    turns = max_turns or DEFAULT_BUDGETS.max_steps
    taskset = {"id": TASKSET_ID, "split": split, "difficulty": difficulty, "family": family, "limit": limit,
               "observation_format": observation_format, "max_turns": max_turns, "hops": hops,
               "decoy_density": decoy_density, "name_collision_rate": name_collision_rate, "seed": seed,
               "start_depth": start_depth}
    agent = {"runtime": {"type": "subprocess"}, "max_turns": turns, **kwargs.pop("agent", {})}
    try:
        config = vf.resolve_env_config({"taskset": taskset, "agent": agent, **kwargs})
    except ValidationError as exc:  # pydantic's report is many lines; its first message is the one that matters
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"load_environment: {first['msg']}" + (f" (at {where})" if where else "")) from None
    env = vf.load_environment(config)
    if not isinstance(env, OSINTVerifiersEnv):
        raise ConfigError(f"taskset id {TASKSET_ID!r} resolved to {type(env).__name__}, not OSINTVerifiersEnv")
    return env


__all__ = ["OSINTHarness", "OSINTTask", "OSINTTaskset", "OSINTVerifiersEnv", "load_environment"]
