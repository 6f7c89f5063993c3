"""Saved configs of earlier versions: keys renamed or moved since a release, each loaded under its new name with a
one-line FutureWarning that names both (`RENAMED`), and the settings a config written before a table existed
takes from elsewhere (`PLAY_FROM_EVAL`). `osint_selfplay.config.config_from_dict` passes every table through
`renamed` first, so a TOML file, ``--set`` overrides and a saved ``run.json`` load alike."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from osint_selfplay.errors import ConfigError


def _same(value: Any) -> Any:
    return value


def _negated(bare: Any) -> Any:
    return not bare if isinstance(bare, bool) else bare  # bare_prompt = true: describe_tools = false


# Keys renamed or moved since a release (CHANGELOG "Deprecated"): (table, old key) -> (table, new key, how an old
# value becomes a new one). A config that sets an old key loads with a FutureWarning that names both keys.
RENAMED: dict[tuple[str, str], tuple[str, str, Callable[[Any], Any]]] = {
    ("answerer", "bare_prompt"): ("episode", "describe_tools", _negated),
    ("answerer", "max_turns"): ("episode", "max_steps", _same),
    **{("answerer", key): ("episode", key, _same) for key in (
        "max_parallel_calls", "max_observation_chars", "observation_format", "action_format", "describe_tools")},
    ("generator", "solver_workers"): ("play", "workers", _same),
    ("relabel", "workers"): ("play", "workers", _same),
}
# Run-level copies of GRPOConfig fields, removed: each is now set, where needed, in [grpo_generator] and
# [grpo_answerer], which pass it through to TRL. Their old defaults are TRL's, so an old config's default is dropped.
PASSED_THROUGH = {"vllm_gpu_memory_utilization": 0.3, "vllm_server_timeout": 240.0}
# A config without a [play] table (written before it existed) plays with these [eval] settings, as it did then.
PLAY_FROM_EVAL = ("batch_size", "max_new_tokens")


def _warn(message: str) -> None:
    warnings.warn(message, FutureWarning, stacklevel=4)  # the caller of load_config / config_from_dict


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    table = data.setdefault(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table, got {type(table).__name__}")
    return table


def _relabelling(data: dict[str, Any]) -> bool:
    relabel = data.get("relabel")
    return isinstance(relabel, dict) and relabel.get("enabled", False) is True


def renamed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with old keys under their new names (a FutureWarning each); an old and a new name both set is an
    error. Without a [play] table, play takes eval's settings (see `PLAY_FROM_EVAL`)."""
    out = {key: dict(value) if isinstance(value, dict) else value for key, value in data.items()}
    evaluation = out.get("eval")
    if "play" not in out and isinstance(evaluation, dict) and any(k in evaluation for k in PLAY_FROM_EVAL):
        taken = {key: evaluation[key] for key in PLAY_FROM_EVAL if key in evaluation}
        _warn(f"no [play] table: play.{' and play.'.join(taken)} taken from eval.{' and eval.'.join(taken)} "
              "(training-time play used [eval] before it had a table); set [play]")
        out["play"] = taken
    set_by: dict[tuple[str, str], tuple[str, Any]] = {}  # a new key -> the old key that set it, and its value
    for (table, old), (new_table, new, convert) in RENAMED.items():
        section = out.get(table)
        if not isinstance(section, dict) or old not in section:
            continue
        value = convert(section.pop(old))
        target = _table(out, new_table)
        if (new_table, new) in set_by:  # two old keys, one new one
            first, first_value = set_by[new_table, new]
            # relabel.workers was read only with relabelling on: off, generator.solver_workers alone decided
            unread = (table, old) == ("relabel", "workers") and not _relabelling(out)
            if value != first_value and not unread:
                raise ConfigError(f"{first} ({first_value!r}) and {table}.{old} ({value!r}) are now one setting, "
                                  f"{new_table}.{new}: set only {new_table}.{new}")
            _warn(f"{table}.{old} is deprecated: use {new_table}.{new} (set by {first} here)")
            continue
        if new in target:
            raise ConfigError(f"{table}.{old} was renamed {new_table}.{new}; set only {new_table}.{new}")
        _warn(f"{table}.{old} is deprecated: use {new_table}.{new}")
        target[new] = value
        set_by[new_table, new] = (f"{table}.{old}", value)
    for key, trl_default in PASSED_THROUGH.items():
        if key not in out:
            continue
        value = out.pop(key)
        phases = ("grpo_generator", "grpo_answerer")
        _warn(f"{key} is deprecated: use {phases[0]}.{key} and {phases[1]}.{key} (TRL's GRPOConfig field)")
        if value != trl_default:
            for phase in phases:
                _table(out, phase).setdefault(key, value)
    return out
