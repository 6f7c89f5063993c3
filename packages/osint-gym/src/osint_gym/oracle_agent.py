"""The tool-only oracle as an agent over OSINT-v0: the expert every demonstration and relabelled state comes from.

`OracleAgent` acts through ``env.step``: it is built from the env's task (the privileged upper bound knows what
the question means) but reads every fact back out of the observations it receives (JSON, or compact through
`osint_gym.compact.parse_compact`), never out of the world. It writes JSON actions or the short syntax
(``action_format="short"``). `unseen_ids` finds the ids an episode used before the agent could have seen them;
`osint_gym.agents.oracle_continuation` continues another agent's episode from the state it reached (the oracle as
a teacher).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from osint_gym.actions import parse_action, short_action
from osint_gym.compact import CompactError, parse_compact
from osint_gym.episode import ACTION_FORMATS, EpisodeRecord, Turn
from osint_gym.errors import ConfigError
from osint_gym.schema import ID_PATTERN, Edge
from osint_gym.tasks.oracle import Call, Plan, oracle_plan
from osint_gym.tasks.task import Task
from osint_gym.world.graph import World


class TaskEnv(Protocol):
    """What the oracle reads of an env after its reset (`osint_gym.env.OSINTEnv` is one): the task, the world and the
    parallel-call budget. A protocol, so that the env can play the demonstrator itself (its start depth) without an
    import circle."""

    task: Task | None
    world: World
    max_parallel_calls: int


def read_observation(observation: str) -> dict[str, Any]:
    """A step observation in either format as the dict the env built (compact references reduced
    to ids); ``{}`` for text that is neither (a reset observation, a cut beyond repair)."""
    try:
        if observation.startswith("step "):
            return parse_compact(observation)
        data = json.loads(observation)
    except (ValueError, CompactError):
        return {}
    return data if isinstance(data, dict) else {}


class OracleAgent:
    """The tool-only oracle through ``env.step``: facts read back out of the observations (either
    format), actions as JSON tool calls or in the short syntax (``action_format="short"``). Cites
    the evidence it read and submits one id (under Hits@1, one gold answer).

    ``names_first=True`` makes it a demonstrator: it first looks up, by the name or handle the
    question shows (`World.surface`), every entity the question names but whose id the agent has
    not seen, so no later action uses an id the agent could not know (`unseen_ids` checks it).
    Calls whose results it already read (the plan's ``get_profile`` of such an entity) are answered
    from those results instead of being sent again.

    ``reset(..., history=turns)`` makes it a teacher on another agent's state (expert relabelling,
    `oracle_continuation`): the turns that agent already took in this env count as read, so a call it
    made (same tool, same arguments) or a profile it fetched is answered from its observation and
    never sent again, and a name whose id those observations showed is not looked up."""

    def __init__(self, action_format: str = "json", *, names_first: bool = False) -> None:
        if action_format not in ACTION_FORMATS:
            raise ConfigError(f"action_format must be one of {ACTION_FORMATS}, got {action_format!r}")
        self.action_format = action_format
        self.names_first = names_first
        self._plan: Plan | None = None

    def reset(self, env: TaskEnv, observation: str = "", info: dict[str, Any] | None = None, *,
              history: Sequence[Turn] = ()) -> None:
        task = env.task
        if task is None or task.query is None:
            raise ConfigError("the oracle needs an env after reset() on a task with a structured query")
        self._plan = oracle_plan(task.query, env.world.kind)
        self._max_parallel = env.max_parallel_calls
        self._read_back: dict[str, Any] = {}  # profile results already read, by entity id
        self._known: dict[str, Any] = {}  # results of calls already made in this episode, by `_call_key`
        self._answer: tuple[list[str], list[Edge]] | None = None
        self._sent: list[int] = []  # batch positions of the calls sent last step
        for turn in history:
            self._learn(turn.action, turn.observation)
        lookups: list[Call] = []
        if self.names_first:
            shown = set(_ID.findall(observation)).union(*(_ID.findall(t.observation) for t in history))
            unseen = dict.fromkeys(e for e in task.query.named_entities() if e not in shown)
            lookups = [("get_profile", {"handle_or_id": env.world.surface(e)}) for e in unseen]
        self._lookup = bool(lookups)
        if lookups:
            self._start_batch(lookups)
        else:
            self._advance(None)

    def _learn(self, action: str, observation: str) -> None:
        """Remember the successful results of another agent's turn (its calls zipped with the
        observation's results, in order), as if this agent had sent them."""
        calls = parse_action(action).calls
        for call, result in zip(calls, _results_of(observation)):
            if result is not None and call.name not in ("add_edge", "answer") and isinstance(call.args, dict):
                self._known.setdefault(_call_key(call.name, call.args), result)
                self._remember(result)

    def _remember(self, result: Any) -> None:
        """Keep a profile result by its entity's id (a later get_profile of that id is answered from it)."""
        if isinstance(result, dict) and isinstance(result.get("id"), str):
            self._read_back.setdefault(result["id"], result)

    def _already_read(self, name: str, args: dict[str, Any]) -> Any:
        """The result of a call made before (same tool and arguments) or of a profile read, else `_UNREAD`."""
        known = self._known.get(_call_key(name, args), _UNREAD)
        if known is _UNREAD and name == "get_profile":
            return self._read_back.get(args["handle_or_id"], _UNREAD)
        return known

    def _start_batch(self, batch: list[Call]) -> None:
        self._batch = batch
        self._results: list[Any] = [self._already_read(n, a) for n, a in batch]
        self._pending = [i for i, r in enumerate(self._results) if r is _UNREAD]

    def _advance(self, results: list[Any] | None) -> None:
        """Hand the plan a finished batch's results (None: start it); take its next batch or answer."""
        assert self._plan is not None
        while self._answer is None:
            try:
                batch = next(self._plan) if results is None else self._plan.send(results)
            except StopIteration as stop:
                self._answer = stop.value
                return
            self._start_batch(batch)
            if self._pending:
                return
            results = self._results  # every call's result was read before

    def _read(self, observation: str) -> None:
        got = _results_of(observation)
        for pos, result in zip(self._sent, got + [None] * len(self._sent)):
            self._results[pos] = result
            self._remember(result)
        self._sent = []
        if self._pending:
            return
        if self._lookup:  # the name lookups are done: the plan starts
            self._lookup = False
            self._advance(None)
        else:
            self._advance(self._results)

    def act(self, observation: str) -> str:
        if self._sent:  # read the results of the calls sent last step
            self._read(observation)
        if self._answer is not None:  # cite the evidence it read, then answer, in one action
            found, evidence = self._answer
            if self.action_format == "short":
                edges: list[Call] = [("add_edge", dict(zip(("src", "rel", "dst"), e))) for e in evidence]
                return short_action([*edges, ("answer", {"entity_id": found[0] if found else "none"})])
            calls: list[dict[str, Any]] = [{"add_edge": list(e)} for e in evidence]
            calls.append({"answer": found[0] if found else "none"})
            return json.dumps({"tool_calls": calls})
        self._sent, self._pending = self._pending[: self._max_parallel], self._pending[self._max_parallel :]
        chunk = [self._batch[i] for i in self._sent]
        if self.action_format == "short":
            return short_action(chunk)
        if len(chunk) == 1:
            return json.dumps({"tool": chunk[0][0], "args": chunk[0][1]})
        return json.dumps({"tool_calls": [{"tool": n, "args": a} for n, a in chunk]})


_UNREAD = object()
_ID = re.compile(ID_PATTERN)


def _call_key(name: str, args: dict[str, Any]) -> str:
    return json.dumps([name, args], sort_keys=True)


def _results_of(observation: str) -> list[Any]:
    """A step observation's per-call results in call order (None for a failed call)."""
    entries = read_observation(observation).get("results", [])
    entries = entries if isinstance(entries, list) else []
    return [e.get("result") if isinstance(e, dict) and e.get("ok") else None for e in entries]


def unseen_ids(record: EpisodeRecord, from_turn: int = 0) -> list[str]:
    """Entity ids an episode's actions use before any text the agent saw (the question and the
    observations so far) showed them: what a demonstration must not contain. ``from_turn``: only
    the actions of turns from that index on (a relabelled episode's teacher turns)."""
    seen = set(_ID.findall(record.first_observation))
    out: list[str] = []
    for k, turn in enumerate(record.turns):
        if k >= from_turn:
            out += [i for i in _ID.findall(turn.action) if i not in seen]
        seen.update(_ID.findall(turn.observation))
    return list(dict.fromkeys(out))
