"""The env's exploit policies (tests/gym/test_exploits.py's attacks), written as the per-turn actions
``act(core, observation, turn)`` both adapters' tests replay: each scores through an adapter exactly what it
scores in process, never more."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from osint_gym.benchmark import benchmark_tasks

ATTACKS = ["repeat_tool", "several_candidates", "echo_question", "most_frequent", "spam_add_edge"]


def attack_policy(name: str) -> Callable[[Any, Any, int], str]:
    """``act(core, observation, turn)``: the attack's action at ``turn`` (none reads the observation)."""
    common = Counter(t.answer for t in benchmark_tasks("v0:dev")).most_common(1)[0][0]
    return _attacks(common)[name]


def _attacks(common: str) -> dict[str, Callable[[Any, Any, int], str]]:
    return {
        "repeat_tool": lambda core, obs, turn: json.dumps(
            {"tool": "get_profile", "args": {"handle_or_id": "person_0"}}
        ),
        "several_candidates": lambda core, obs, turn: json.dumps({"answer": core.world.ids(core.task.answer_type)[:3]}),
        "echo_question": lambda core, obs, turn: (
            core.task.question if turn == 0 else json.dumps({"answer": core.task.question})
        ),
        "most_frequent": lambda core, obs, turn: json.dumps({"answer": common}),
        "spam_add_edge": lambda core, obs, turn: (
            json.dumps(
                [{"add_edge": [core.world.ids("person")[turn], "knows", core.world.ids("person")[turn + 1]]}] * 4
            )
            if turn < 11
            else json.dumps({"answer": core.world.ids(core.task.answer_type)[0]})
        ),
    }
