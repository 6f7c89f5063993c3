"""The multi-turn chat format: how an OSINT-v0 episode becomes a conversation for an LLM.

Training (osint-selfplay) and evaluation (osint-eval) both build conversations with these
functions, so a model sees the same format in both. There are two formats:

* **plain** (the default, any chat template): the system message states the JSON action format
  (and, optionally, the full JSON schemas); the model's actions are assistant text and the
  observations go back as ``user`` messages, which every chat template accepts.
* **native** (a template that renders tools, as instruct models' templates do; see
  `supports_tools`): the tool schemas go to the template (``apply_chat_template(..., tools=...)``,
  see `template_kwargs`), the model's calls are stored as the template's assistant ``tool_calls``
  and the env's observation goes back as a ``tool`` message. The model's text is still parsed by
  `osint_gym.actions.parse_action`, which reads ``<tool_call>`` blocks as well as JSON actions.

This module only builds message lists; the callers own the tokenizer and apply its template.
The env's observations are passed through unchanged in both formats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from osint_gym.actions import parse_action, tool_call_blocks

SYSTEM_PROMPT = (
    "You are an OSINT investigator. Reply with one JSON action per turn: "
    '{"tool": NAME, "args": {...}}, several calls as {"tool_calls": [...]}, '
    '{"add_edge": [src, rel, dst]} for evidence you saw, and finally {"answer": ENTITY_ID}.'
)
SHORT_SYSTEM_PROMPT = (
    "You are an OSINT investigator. Reply with one action per line: TOOL VALUE [key=value ...], "
    "e.g. get_profile person_7 (several values run as parallel calls), add_edge SRC REL DST for "
    "evidence you saw, and finally answer ENTITY_ID."
)
NATIVE_SYSTEM_PROMPT = (
    "You are an OSINT investigator. Call the tools to read records (several calls in one turn run in "
    "parallel), call add_edge for evidence you saw, and finally call answer with one entity id."
)
# What a template must mention to render tool schemas and assistant tool calls.
_TOOL_WORDS = ("tools", "tool_calls")


def supports_tools(chat_template: str | Mapping[str, str] | None) -> bool:
    """Whether a chat template (a tokenizer's ``chat_template``: one template, or named ones) renders
    tool schemas and assistant tool calls, i.e. it references both ``tools`` and ``tool_calls``."""
    if chat_template is None:
        return False
    texts = [chat_template] if isinstance(chat_template, str) else [str(t) for t in chat_template.values()]
    return any(all(word in text for word in _TOOL_WORDS) for text in texts)


def template_kwargs(schemas: list[dict[str, Any]] | None, native: bool) -> dict[str, Any]:
    """The extra ``apply_chat_template`` arguments of a conversation: the tool schemas, if native."""
    return {"tools": schemas} if native and schemas else {}


def system_message(schemas: list[dict[str, Any]] | None = None, *, native: bool = False,
                   short: bool = False) -> dict[str, str]:
    """The system prompt: native (the template lists the tools), short action syntax, or JSON actions."""
    if native:  # the template lists the tools and says how to call them
        return {"role": "system", "content": NATIVE_SYSTEM_PROMPT}
    content = SHORT_SYSTEM_PROMPT if short else SYSTEM_PROMPT
    if schemas:
        content += "\nTool schemas: " + json.dumps(schemas, separators=(",", ":"))
    return {"role": "system", "content": content}


def start_messages(first_observation: str, schemas: list[dict[str, Any]] | None = None, *,
                   native: bool = False, short: bool = False, system: bool = True) -> list[dict[str, Any]]:
    """The conversation at reset: the system prompt and the question (with the tool list, unless the
    env was built with ``describe_tools=False``). ``schemas`` are written into the plain system
    prompt; a native template gets them through `template_kwargs` instead. ``system=False`` leaves
    the system message out (the bare prompt of a model trained from scratch on this format)."""
    head = [system_message(schemas, native=native, short=short)] if system else []
    return head + [{"role": "user", "content": first_observation}]


def observation_message(observation: str) -> dict[str, str]:
    return {"role": "user", "content": observation}


def assistant_message(action: str, *, native: bool = False) -> dict[str, Any]:
    """The model's turn as a message. Native: the calls it parses into become the template's
    ``tool_calls`` (with what it wrote outside ``<tool_call>`` blocks as content); a turn that
    parses into no call stays text, as in the plain format."""
    if not native:
        return {"role": "assistant", "content": action}
    parsed = parse_action(action)
    if not parsed.ok:
        return {"role": "assistant", "content": action}
    content = tool_call_blocks(action)[1] if "<tool_call>" in action else ""
    calls = [{"type": "function", "function": {"name": c.name, "arguments": c.args}} for c in parsed.calls]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def result_messages(observation: str, turn: Mapping[str, Any], *, native: bool = False) -> list[dict[str, str]]:
    """The env's answer to ``turn`` (an `assistant_message`): one ``tool`` message (the observation
    lists every call's result in order) after a native turn with tool calls, else a ``user`` message
    (a parse failure has no call to answer)."""
    if native and turn.get("tool_calls"):
        return [{"role": "tool", "content": observation}]
    return [observation_message(observation)]


def native_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A plain-format conversation in the native format: the native system prompt, each assistant turn
    as its tool calls (`assistant_message`) and the observation after a turn with calls as a ``tool``
    message. ``episode_messages(..., native=True)`` equals this of the plain conversation, so a plain
    conversation edited as text (made-up words renamed) converts without re-rendering its episode."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "system":
            out.append(system_message(native=True))
        elif m["role"] == "assistant":
            out.append(assistant_message(m["content"], native=True))
        elif out and out[-1]["role"] == "assistant":
            out += result_messages(m["content"], out[-1], native=True)
        else:
            out.append(dict(m))
    return out


def episode_messages(first_observation: str, actions: list[str], observations: list[str], *,
                     schemas: list[dict[str, Any]] | None = None, native: bool = False,
                     short: bool = False, system: bool = True) -> list[dict[str, Any]]:
    """A whole episode as a conversation: the start, then each action and the observation it got
    (``observations`` may be one shorter than ``actions``: the last action's observation is left out)."""
    if len(observations) not in (len(actions), len(actions) - 1):
        raise ValueError(
            f"episode_messages: {len(actions)} actions need {len(actions)} or {len(actions) - 1} observations, "
            f"got {len(observations)}"
        )
    messages = start_messages(first_observation, None if native else schemas, native=native, short=short, system=system)
    for k, action in enumerate(actions):
        turn = assistant_message(action, native=native)
        messages.append(turn)
        if k < len(observations):
            messages += result_messages(observations[k], turn, native=native)
    return messages
