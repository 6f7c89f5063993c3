"""The multi-turn chat format: how an OSINT-v0 episode becomes a conversation for an LLM.

Training (osint-selfplay) and evaluation (osint-eval) both render episodes with these functions,
so a model sees the same format in both. The reset observation already lists the tools; the
system message states the action format (and, optionally, the full JSON schemas). Observations go
back as ``user`` messages, which every chat template accepts (some reject a ``tool`` role without
tool-call metadata).
"""

from __future__ import annotations

import json
from typing import Any

SYSTEM_PROMPT = (
    "You are an OSINT investigator. Reply with one JSON action per turn: "
    '{"tool": NAME, "args": {...}}, several calls as {"tool_calls": [...]}, '
    '{"add_edge": [src, rel, dst]} for evidence you saw, and finally {"answer": ENTITY_ID}.'
)


def system_message(schemas: list[dict[str, Any]] | None = None) -> dict[str, str]:
    content = SYSTEM_PROMPT
    if schemas:
        content += "\nTool schemas: " + json.dumps(schemas, separators=(",", ":"))
    return {"role": "system", "content": content}


def start_messages(first_observation: str, schemas: list[dict[str, Any]] | None = None) -> list[dict[str, str]]:
    """The conversation at reset: the system prompt and the question (with the tool list)."""
    return [system_message(schemas), {"role": "user", "content": first_observation}]


def observation_message(observation: str) -> dict[str, str]:
    return {"role": "user", "content": observation}
