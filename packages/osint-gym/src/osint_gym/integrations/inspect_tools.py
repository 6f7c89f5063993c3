"""OSINT-v0's tools for Inspect AI: one `OSINTEnv` per sample, every model turn one env step.

`EpisodeSession` holds a sample's env. The tools are Inspect `ToolDef` s generated from the env's own
tool schemas (`OSINTEnv.schemas`: osint-gym's `TOOLS` specs plus ``add_edge`` and ``answer``), so their
names, arguments and descriptions cannot drift from the env's. `osint_agent` runs Inspect's `react()`
agent over them with ``answer`` as its submit tool.

A model turn is one env step, as in osint-eval's multi-turn runner: the turn's tool calls go to the env
together (a parallel step, at most ``max_parallel_calls`` lookups), raw as the model sent them, so the
env's parsing, argument checks, budgets and evidence graph apply (a missing tool or a malformed argument
gets the env's error observation and costs the env's penalty). The turn's first call returns the step's
observation; a turn without tool calls is sent to the env as a text action (the env's JSON or short
syntax; anything else is the env's parse failure). An observation that no executed tool carried back (a
text turn, or calls Inspect rejected before running them) goes back as the next user message, so the
model sees every observation once. The agent stops when the env ends the episode (an answer or the step
budget); the scorer (`osint_gym.integrations.inspect_task`) reads the env's episode record.

This module imports inspect_ai (``pip install 'osint-gym[inspect]'``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.agent import AgentPrompt, AgentState, AgentSubmit, as_solver, react
from inspect_ai.model import ChatMessageAssistant, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall, ToolDef, ToolError, ToolParam, ToolParams

from osint_gym.env import OSINTEnv
from osint_gym.episode import EpisodeRecord

# live episodes by Inspect sample (TaskState.uuid): the solver opens one; the scorer reads it and
# `close_session` (the task's cleanup, run after every sample, crashed or not) drops it
SESSIONS: dict[str, EpisodeSession] = {}

INSTRUCTIONS = (
    "You investigate a hidden world of people, accounts, organisations, places, events, posts and forum "
    "threads, seen only through the tools. Each of your turns is one step: the tool calls of one turn run "
    "together (at most {parallel} lookups per turn) and you have {steps} steps. Entity ids (person_12, "
    "account_3, ...) come from the tools' results. Optionally cite the evidence you read with add_edge. "
    "Finish by calling answer with the one entity id the question asks for."
)


class EpisodeSession:
    """One sample's OSINT-v0 episode: its env, and the replies of the current turn's tool calls."""

    def __init__(self, env: OSINTEnv) -> None:
        self.env = env
        self.question, _ = env.reset(seed=0, options={"task_index": 0})
        self.done = False
        self.unread: str | None = None  # the last observation, until a tool or a user message carries it
        self._replies: list[tuple[str, dict[str, Any]]] = []  # (tool, arguments) of this turn not yet run
        self._carrier: tuple[str, dict[str, Any]] | None = None  # the call that returns the observation

    def step(self, action: Any) -> str:
        observation, _, terminated, truncated, _ = self.env.step(action)
        self.done = terminated or truncated
        self.unread = observation
        return observation

    def take_turn(self, message: ChatMessageAssistant) -> None:
        """One env step for one model turn: its tool calls together, or its text as an action."""
        self._replies, self._carrier = [], None
        if self.done:
            return
        calls = message.tool_calls or []
        if not calls:
            self.step(message.text)
            return
        self.step([{"name": c.function, "arguments": _raw_arguments(c)} for c in calls])
        self._replies = [(c.function, c.arguments) for c in calls]
        self._carrier = self._replies[0]

    def reply(self, name: str, arguments: dict[str, Any]) -> str:
        """What the tool call ``name(**arguments)`` of the current turn returns."""
        call = (name, arguments)
        if call not in self._replies:
            if self._replies:
                return "This call was not part of the current step."
            return self._own_step(call)
        self._replies.remove(call)
        if call == self._carrier and self.unread is not None:
            observation, self.unread = self.unread, None
            return observation
        first = self._carrier[0] if self._carrier else "?"
        return f"The results of this step's calls are in the result of its first call ({first})."

    def _own_step(self, call: tuple[str, dict[str, Any]]) -> str:
        """A tool used outside `osint_agent`'s turns (another solver): the call is a step of its own."""
        observation = self.step({"name": call[0], "arguments": call[1]})
        self.unread = None
        return observation

    @property
    def answered(self) -> bool:
        return self.done and self.env.episode().end == "answered"

    def record(self) -> EpisodeRecord:
        """The env's episode record; an episode still running is cut as the env scores a cut ("stopped")."""
        return self.env.stop("stopped") if not self.done else self.env.episode()

    async def on_continue(self, state: AgentState) -> bool | str:
        """react's loop: stop once the env ended the episode; hand back an observation no tool carried."""
        if self.done:
            return False
        if self.unread is not None:
            observation, self.unread = self.unread, None
            return observation
        return True


def _raw_arguments(call: ToolCall) -> dict[str, Any] | str:
    """The call's arguments as the env should judge them. Arguments Inspect could not parse reach the env
    as Inspect's parse-error text (Inspect keeps that, not the model's text; it is never JSON), so the env
    answers with its own malformed-arguments error instead of judging the empty dict Inspect substitutes."""
    return call.arguments if call.parse_error is None else call.parse_error


async def close_session(state: TaskState) -> None:
    """Drop the sample's episode (`Task.cleanup`: Inspect calls it after every sample, even one that crashed)."""
    SESSIONS.pop(state.uuid, None)


def _params(schema: dict[str, Any]) -> ToolParams:
    props = {}
    for name, prop in schema["properties"].items():
        desc = prop.get("description", name)
        if "minimum" in prop:
            desc += f" ({prop['minimum']} to {prop['maximum']})"
        props[name] = ToolParam(type=prop["type"], description=desc)
    return ToolParams(properties=props, required=list(schema.get("required", [])))


def _lookup_tool(session: EpisodeSession, schema: dict[str, Any]) -> ToolDef:
    name = schema["name"]

    async def execute(**kwargs: Any) -> str:
        return session.reply(name, kwargs)

    # max_output=0: the env cuts its observations to its own max_observation_chars
    return ToolDef(execute, name=name, description=schema["description"], parameters=_params(schema["parameters"]),
                   max_output=0)


def _answer_tool(session: EpisodeSession, schema: dict[str, Any]) -> ToolDef:
    async def execute(**kwargs: Any) -> str:
        observation = session.reply("answer", kwargs)
        if not session.answered:  # the env refused the step: not a submission, react goes on
            raise ToolError(observation)
        return str(session.env.episode().answer)

    return ToolDef(execute, name="answer", description=schema["description"], parameters=_params(schema["parameters"]),
                   max_output=0)


def session_tools(session: EpisodeSession) -> tuple[list[ToolDef], ToolDef]:
    """(the lookup tools and add_edge, the answer tool), from the env's own schemas."""
    tools, answer = [], None
    for entry in session.env.schemas:
        fn = entry["function"]
        if fn["name"] == "answer":
            answer = _answer_tool(session, fn)
        else:
            tools.append(_lookup_tool(session, fn))
    assert answer is not None, "the env's schemas always hold answer"
    return tools, answer


def _turns(session: EpisodeSession) -> Any:
    """react's model as an agent: generate with the eval's model, then play the turn in the env."""

    async def generate(state: AgentState, tools: list[Tool]) -> AgentState:
        state.output = await get_model().generate(state.messages, tools)
        state.messages.append(state.output.message)
        session.take_turn(state.output.message)
        return state

    return generate


@solver
def osint_agent(make_env: Any) -> Solver:
    """react() over one sample's env; ``make_env(state)`` builds that env (`osint_gym.integrations.inspect_task`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session = EpisodeSession(make_env(state))
        SESSIONS[state.uuid] = session
        if session.env.episode().given_steps:  # a start depth: the given steps follow the question
            state.user_prompt.text = session.question
        tools, answer = session_tools(session)
        instructions = INSTRUCTIONS.format(parallel=session.env.max_parallel_calls, steps=session.env.max_steps)
        agent = react(prompt=AgentPrompt(instructions=instructions), tools=tools, model=_turns(session),
                      submit=AgentSubmit(name="answer", tool=answer, answer_only=True, keep_in_messages=True),
                      on_continue=session.on_continue)
        return await as_solver(agent)(state, generate)

    return solve
