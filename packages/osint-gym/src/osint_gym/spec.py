"""The episode spec: how an agent's episodes are served, and the one builder of their conversations.

An `EpisodeSpec` holds the env's `Budgets`, the action syntax the prompt asks for and whether the
tools are described. Every driver (training rollouts, demonstrations, relabelling, evaluation, the
frozen answerer) builds its envs with `EpisodeSpec.make_env`, plays them with `EpisodeSpec.play` and
opens its conversations with `EpisodeSpec.start_messages`, so one spec gives one prompt everywhere:
a model is trained on exactly the opening it is evaluated on, in the plain and in a native tool-call
template alike (`osint_gym.chat` holds the message formats themselves).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from osint_gym import chat
from osint_gym.agents import Agent, BatchAgent, run_episode, run_episodes
from osint_gym.env import OSINTEnv
from osint_gym.episode import ACTION_FORMATS, EpisodeRecord
from osint_gym.errors import ConfigError
from osint_gym.rungs import RUNG_MODES
from osint_gym.tasks.task import DEFAULT_BUDGETS, Budgets, Task
from osint_gym.world import World

# every episode of a spec serves its env's only task the same way: a group of rollouts of one task starts
# from one state, and evaluation sees the opening training saw
RESET_SEED = 0
RESET_OPTIONS = {"task_index": 0}


@dataclass(frozen=True)
class EpisodeSpec:
    """How an agent's episodes are served: the env's `Budgets` (step budget ``max_steps``, parallel
    calls, observation length and format) and the prompt the agent sees, built once from a config
    and handed to every driver (training rollouts, demonstrations, evaluation, the frozen answerer).

    ``action_format``: the action syntax the system prompt and demonstrations use, "json" or "short"
    (the env accepts both). ``describe_tools``: False serves no system message and a reset
    observation of the question alone, the format of a model trained from scratch on it.
    """

    budgets: Budgets = DEFAULT_BUDGETS
    action_format: str = "json"
    describe_tools: bool = True
    rung_mode: str = "given"  # how a task's start depth is served (`osint_gym.rungs`): steps given, or hinted

    def __post_init__(self) -> None:
        if self.action_format not in ACTION_FORMATS:
            raise ConfigError(f"action_format must be one of {ACTION_FORMATS}, got {self.action_format!r}")
        if self.rung_mode not in RUNG_MODES:
            raise ConfigError(f"rung_mode must be one of {RUNG_MODES}, got {self.rung_mode!r}")
        if not isinstance(self.describe_tools, bool):
            raise ConfigError(f"describe_tools must be true or false, got {self.describe_tools!r}")

    @property
    def short(self) -> bool:
        """Whether the prompt asks for the short action syntax."""
        return self.action_format == "short"

    def env_kwargs(self) -> dict[str, Any]:
        """``OSINTEnv`` / ``gym.make("OSINT-v0")`` keyword arguments of this spec."""
        b = self.budgets
        return {"max_steps": b.max_steps, "max_parallel_calls": b.max_parallel_calls,
                "max_observation_chars": b.max_observation_chars, "observation_format": b.observation_format,
                "describe_tools": self.describe_tools, "action_format": self.action_format, "rung_mode": self.rung_mode}

    # ------------------------------------------------------------------ envs and episodes
    def make_env(self, world: World, task: Task) -> OSINTEnv:
        """The env of one task served as this spec says (a stamped task is not verified again)."""
        return OSINTEnv(world=world, tasks=[task], **self.env_kwargs())

    def reset(self, env: OSINTEnv) -> tuple[str, dict[str, Any]]:
        """``env``'s opening (observation, info): its one task, reset the way every driver resets it."""
        return env.reset(seed=RESET_SEED, options=dict(RESET_OPTIONS))

    def play(self, envs: Sequence[OSINTEnv], agent: BatchAgent, *, max_active: int | None = None,
             on_end: Callable[[int, EpisodeRecord], None] | None = None) -> list[EpisodeRecord]:
        """Every env's episode through osint-gym's one episode loop (`osint_gym.agents.run_episodes`)."""
        return run_episodes(list(envs), agent, seeds=[RESET_SEED] * len(envs),
                            options=[dict(RESET_OPTIONS) for _ in envs], max_active=max_active, on_end=on_end)

    def play_one(self, env: OSINTEnv, agent: Agent) -> EpisodeRecord:
        """One episode in ``env`` (a `make_env`) by a per-episode ``agent`` (`osint_gym.agents.run_episode`)."""
        return run_episode(env, agent, seed=RESET_SEED, options=dict(RESET_OPTIONS))

    # ------------------------------------------------------------------ conversations
    def start_messages(self, observation: str, info: dict[str, Any], *, native: bool = False,
                       full_schemas: bool = False) -> list[dict[str, Any]]:
        """The conversation at reset, the same for every driver: the system message (none without
        ``describe_tools``) and the reset observation. ``native``: the tokenizer's template renders tools
        (`chat.supports_tools`), which then get the schemas through `template_kwargs`; ``full_schemas``
        writes them into a plain system prompt instead (osint-eval's ``--full-schemas``)."""
        schemas = info.get("tools") if full_schemas and not native else None
        given = info.get("given_turns")
        if given:  # a start depth: the given turns stand in the conversation as the agent's earlier turns
            return chat.episode_messages(info["opening"], [t["action"] for t in given],
                                         [t["observation"] for t in given], schemas=schemas, native=native,
                                         short=self.short, system=self.describe_tools)
        return chat.start_messages(observation, schemas, native=native, short=self.short, system=self.describe_tools)

    def template_kwargs(self, info: dict[str, Any], native: bool) -> dict[str, Any]:
        """The extra ``apply_chat_template`` arguments of this episode's conversation: the env's tool
        schemas where the template renders them."""
        return chat.template_kwargs(info.get("tools"), native)

    def conversation(self, record: EpisodeRecord, *, native: bool = False,
                     last_observation: bool = False) -> list[dict[str, Any]]:
        """A played episode as a training conversation opened by `start_messages` (demonstrations and
        relabelled continuations): each action and the observation it got, the last one's left out (the
        episode ended on it) unless ``last_observation`` (a whole transcript, as the tokenizer corpus
        reads it). A plain conversation edited as text converts with `chat.native_messages`."""
        turns = record.turns
        shown = turns if last_observation else turns[:-1]
        return chat.episode_messages(record.first_observation, [t.action for t in turns],
                                     [t.observation for t in shown], native=native, short=self.short,
                                     system=self.describe_tools)

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        return self.env_kwargs()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeSpec:
        values = dict(data)
        action_format = values.pop("action_format", "json")
        describe_tools = values.pop("describe_tools", True)
        rung_mode = values.pop("rung_mode", "given")
        return cls(Budgets(**values), action_format, describe_tools, rung_mode)


DEFAULT_SPEC = EpisodeSpec()
