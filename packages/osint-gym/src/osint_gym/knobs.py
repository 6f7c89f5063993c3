"""Difficulty knobs, one meaning wherever they are set: ``hops``, ``decoy_density`` and ``name_collision_rate``.

* ``hops`` (1 to 5): only tasks whose query walks that many hops (1 easy, 2 medium, 3 or more hard); a fixed task
  list (a benchmark split) is filtered by it, a sampler draws again until a proposal has it.
* ``decoy_density`` (0 to 0.8): the share of the world's people who are near-miss decoys
  (`WorldConfig.decoy_density`, `osint_gym.world.near_miss`).
* ``name_collision_rate`` (0 to 1): the share of people given someone else's full name (`WorldConfig`).

The two world knobs make another world (the same seed, the config with them replaced), so they apply where the
env generates its world, never to a benchmark split or a given world. They are set through
``OSINTEnv(...)``/``gym.make("OSINT-v0", ...)`` (every reset's default), ``env.reset(options={...})`` (that reset),
the server's reset frame (its ``options``), and the Inspect task's and the verifiers environment's arguments
(`knob_tasks`). A bad value is one `ConfigError` that names the knob and the values it takes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.errors import ConfigError
from osint_gym.tasks import Task, TaskSampler
from osint_gym.tasks.sampler import check_hops
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world

KNOBS = ("hops", "decoy_density", "name_collision_rate")
WORLD_KNOBS = ("decoy_density", "name_collision_rate")
DEFAULT_KNOB_TASKS = 100  # tasks a knob-made task list holds unless a limit is given
SAMPLED = "sampled:"  # how the source of knob-made tasks starts (a split id otherwise)


def check_knobs(values: dict[str, Any], where: str = "knob") -> dict[str, Any]:
    """The knobs of ``values`` that are set (not None), each checked: hops by `check_hops`, a world knob by the range
    of its `WorldConfig` field. ``where`` names them in an error (``"reset option"``)."""
    found = {k: v for k, v in values.items() if k in KNOBS and v is not None}
    if "hops" in found:
        check_hops(found["hops"], None)
    ranges = {f.name: f.metadata["range"] for f in dataclasses.fields(WorldConfig) if f.name in WORLD_KNOBS}
    for name in WORLD_KNOBS:
        value = found.get(name)
        lo, hi = ranges[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not lo <= value <= hi):
            raise ConfigError(f"{where} {name!r} must be a number in [{lo}, {hi}], got {value!r}")
    return found


def with_knobs(config: WorldConfig, knobs: dict[str, Any]) -> WorldConfig:
    """``config`` with the world knobs of ``knobs`` replaced (the others are not world settings)."""
    changed: dict[str, Any] = {k: float(v) for k, v in knobs.items() if k in WORLD_KNOBS}
    return dataclasses.replace(config, **changed) if changed else config


def knob_tasks(split: str | None, *, seed: int = 0, limit: int | None = None, family: str | None = None,
               difficulty: str | None = None, **knobs: Any) -> tuple[World, list[Task], str]:
    """(world, tasks, source) for an adapter's arguments (the Inspect task, the verifiers environment). With a world
    knob, tasks are sampled (``limit`` of them, `DEFAULT_KNOB_TASKS` by default) from ``WorldConfig()`` with the
    knobs, world and task seed ``seed``, and ``split`` must be None; otherwise the benchmark split (``v0:test`` for
    None) filtered by family, difficulty and hops. ``source`` names where they come from."""
    knobs = check_knobs(knobs)
    hops = knobs.get("hops")
    if not any(k in knobs for k in WORLD_KNOBS):
        ref = split or "v0:test"
        return benchmark_world(ref), benchmark_tasks(ref, family=family, difficulty=difficulty, limit=limit,
                                                     hops=hops), ref
    if split is not None:
        raise ConfigError(f"split {split!r} fixes its world; decoy_density and name_collision_rate make one: "
                          "give a split or world knobs, not both")
    config = with_knobs(WorldConfig(), knobs)
    world = cached_world(config, seed)
    tasks = TaskSampler(world, seed).generate(DEFAULT_KNOB_TASKS if limit is None else limit, family=family,
                                              difficulty=check_hops(hops, difficulty), hops=hops)
    return world, tasks, f"{SAMPLED}seed={seed}:" + ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))
