"""OSINT-v0 for TRL's native tool loop (``GRPOTrainer(environment_factory=...)``).

TRL calls ``reset(**row)`` before each rollout, exposes every public method as a tool (from its
type hints and docstring), runs the tool calls the model emits, and adds ``get_reward()`` to the
rewards. This class forwards each tool call to an `OSINTEnv` step, so the env's parsing, budgets,
evidence graph and reward apply unchanged; ``get_reward`` reads the env's episode record. The tool
methods are generated from osint-gym's tool specs (`osint_gym.tools.TOOLS`), so their arguments and
descriptions cannot drift from the env's. It imports nothing from TRL.

Example (a Qwen-family instruct model, whose chat template TRL recognises)::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from osint_gym.benchmark import benchmark_tasks
    from osint_gym.integrations.trl_env import OSINTToolEnv, task_rows

    rows = task_rows(benchmark_tasks("v0:train", difficulty="easy", limit=512), split="v0:train")
    trainer = GRPOTrainer(
        model="Qwen/Qwen2.5-0.5B-Instruct",
        args=GRPOConfig(max_completion_length=1024, num_generations=8),
        train_dataset=Dataset.from_list(rows),
        environment_factory=OSINTToolEnv,   # reward: OSINTToolEnv.get_reward
    )
    trainer.train()
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from osint_gym.env import OSINTEnv
from osint_gym.tasks import Task
from osint_gym.tasks.task import DEFAULT_BUDGETS
from osint_gym.tools import CONTROL_SCHEMAS, TOOLS, ToolSpec

_PY_TYPES = {"string": str, "integer": int}


def task_rows(tasks: list[Task], split: str, start_depth: int | None = None) -> list[dict[str, Any]]:
    """Dataset rows for `OSINTToolEnv`: the question as the prompt, the task and its world as columns, and a
    ``start_depth`` column where one is given (the rollout then starts after the demonstrator's first steps)."""
    depth = {} if start_depth is None else {"start_depth": start_depth}
    return [
        {"prompt": [{"role": "user", "content": t.question}], "task": json.dumps(t.to_dict()), "world": split, **depth}
        for t in tasks
    ]


def reset_options(row: dict[str, Any], start_depth: int | None) -> dict[str, Any]:
    """The env's reset options for a row: its one task, from the row's ``start_depth`` column or the adapter's
    (none: the task's own, 0 for a benchmark task)."""
    depth = row.get("start_depth", start_depth)
    return {"task_index": 0, **({} if depth is None else {"start_depth": depth})}


def _docstring(description: str, properties: dict[str, dict[str, Any]]) -> str:
    """A Google-style docstring, which TRL (through transformers' get_json_schema) turns into the schema."""
    lines = [description, "", "Args:"]
    for name, prop in properties.items():
        desc = prop.get("description", name)
        if "minimum" in prop:
            desc += f" ({prop['minimum']} to {prop['maximum']})"
        lines.append(f"    {name}: {desc}")
    return "\n".join(lines)


def _tool_method(name: str, properties: dict[str, dict[str, Any]], required: list[str], description: str,
                 build: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[..., str]:
    """A method ``name(self, **args) -> str`` with a real signature, type hints and docstring."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for arg, prop in properties.items():
        kind = _PY_TYPES[prop["type"]]
        default = inspect.Parameter.empty if arg in required else prop.get("default", kind())
        params.append(inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=kind))
        annotations[arg] = kind
    annotations["return"] = str
    signature = inspect.Signature(params, return_annotation=str)

    def method(self: OSINTToolEnv, *args: Any, **kwargs: Any) -> str:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        given = {k: v for k, v in bound.arguments.items() if k != "self"}
        return self._step(build(given))

    method.__name__ = method.__qualname__ = name
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__doc__ = _docstring(description, properties)
    return method


def _lookup(spec: ToolSpec) -> Callable[..., str]:
    required = list(spec.parameters.get("required", []))
    properties = spec.parameters["properties"]

    def build(given: dict[str, Any]) -> dict[str, Any]:  # optional strings left empty are not sent
        args = {k: v for k, v in given.items() if k in required or properties[k]["type"] != "string" or v}
        return {"tool": spec.name, "args": args}

    return _tool_method(spec.name, properties, required, spec.description, build)


def _control(schema: dict[str, Any]) -> Callable[..., str]:
    fn = schema["function"]
    props = {k: {**v, "description": v.get("description", k)} for k, v in fn["parameters"]["properties"].items()}
    name = fn["name"]

    def build(given: dict[str, Any]) -> dict[str, Any]:
        return (
            {"add_edge": [given["src"], given["rel"], given["dst"]]}
            if name == "add_edge"
            else {name: given["entity_id"]}
        )

    return _tool_method(name, props, list(fn["parameters"]["required"]), fn["description"], build)


class OSINTToolEnv:
    """One OSINT-v0 episode per rollout, its tools as methods (generated from the env's tool specs)."""

    def __init__(
        self,
        max_steps: int = DEFAULT_BUDGETS.max_steps,
        max_parallel_calls: int = DEFAULT_BUDGETS.max_parallel_calls,
        max_observation_chars: int = 4000,
        start_depth: int | None = None,
    ) -> None:
        self.max_steps, self.max_parallel_calls, self.max_observation_chars = (
            max_steps,
            max_parallel_calls,
            max_observation_chars,
        )
        # every rollout starts after the demonstrator's first k steps (a row's own start_depth column wins)
        self.start_depth = start_depth
        self.env: Any = None  # an OSINTEnv, or anything with its step() (the remote adapter's client)
        self.done = False

    def reset(self, **row: Any) -> str:
        from osint_gym.benchmark import benchmark_world

        task = Task.from_dict(json.loads(row["task"]) if isinstance(row["task"], str) else row["task"])
        self.env = OSINTEnv(
            world=benchmark_world(row.get("world", "v0:train")),
            tasks=[task],
            max_steps=self.max_steps,
            max_parallel_calls=self.max_parallel_calls,
            max_observation_chars=self.max_observation_chars,
        )
        obs, _ = self.env.reset(seed=0, options=reset_options(row, self.start_depth))
        self.done = False
        return obs

    def _step(self, action: dict[str, Any]) -> str:
        if self.env is None:
            return "call reset() first"
        if self.done:
            return "The episode is over."
        obs, _, terminated, truncated, _ = self.env.step(action)
        self.done = terminated or truncated
        return obs

    def get_reward(self) -> float:
        """The episode's osint-gym reward from the env's record (unanswered: its penalties only)."""
        return 0.0 if self.env is None else float(self.env.episode().reward)


for _spec in TOOLS.values():
    setattr(OSINTToolEnv, _spec.name, _lookup(_spec))
for _schema in CONTROL_SCHEMAS:
    setattr(OSINTToolEnv, _schema["function"]["name"], _control(_schema))
