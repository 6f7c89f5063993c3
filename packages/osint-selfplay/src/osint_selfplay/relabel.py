"""Expert relabelling: the env's oracle as a teacher on the answerer's own states (DAgger).

Outcome-reward GRPO can at most close the gap between the answerer's greedy success and its pass@k;
OSINT-v0 has something better than a reward: an exact oracle that knows the hidden query. So the
answerer plays training tasks (greedy by default: the states evaluation visits), and at every state
a failed episode reached, the demonstrator (`osint_gym.agents.oracle_continuation`: names first, only
ids the agent has seen) continues the episode within the steps left, treating what the answerer
already read as read. Each correct continuation is a training conversation: the answerer's own turns
as context (no loss) and the oracle's turns as targets (`masked_turns`), mixed with the warm start's
demonstrations and trained by the packed SFT loop. Rows of earlier rounds are kept (the DAgger
aggregate).

In round 0 of a run whose packed warm start decays, the SFT resumes the warm start where its decay
began, as the equal-compute control does (`osint_selfplay.controls`), with its schedule stretched by
``relabel.sft_seconds``: the control and relabelling then differ only in their data and in the time
relabelling spends playing, which the control spends training. In a shared model this restarts from
the warm start's weights, so it replaces the round's earlier generator step. Later rounds (or a warm
start without that state) continue the current model with a fresh optimizer at
``relabel.learning_rate``, decaying to 0.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from osint_selfplay.errors import ConfigError

if TYPE_CHECKING:
    from osint_gym.tasks import Task
    from osint_gym.world import World
    from osint_selfplay.config import RunConfig
    from osint_selfplay.worlds import WorldPool


def _f(default: Any, help: str) -> Any:  # noqa: A002 - the help text of the field, as config._f
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class RelabelConfig:
    enabled: bool = _f(False, "Multi turn: each round's answerer update starts with expert relabelling (the oracle continues "
                              "the answerer's own failed episodes; osint_selfplay.relabel).")
    grpo: bool = _f(True, "With relabelling on, the round's answerer GRPO phase still runs after it (false: relabelling is "
                          "the answerer's whole update).")
    tasks: int = _f(1000, "Training tasks the answerer plays per round: the round's frontier generated tasks first, then seed tasks.")
    temperature: float = _f(0.0, "The answerer's sampling temperature while it plays them (0: greedy, the states evaluation visits).")
    demonstration_share: float = _f(0.5, "Share of the SFT conversations that are the warm start's own demonstrations (the rest: relabelled).")
    sft_seconds: float = _f(120.0, "Seconds of SFT on the mix, added to the warm start's schedule (its decay stretched) in round 0.")
    workers: int = _f(1, "Processes the answerer plays the tasks in (each on every N-th task; torch's threads shared out).")
    learning_rate: float = _f(5e-4, "Rounds after the first (or a warm start without a saved decay): the fresh optimizer's peak rate.")

    def __post_init__(self) -> None:
        for name in ("tasks", "sft_seconds", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
                raise ConfigError(f"relabel.{name} must be a number >= 1; got {value!r}")
        if not 0 <= self.temperature <= 2:
            raise ConfigError(f"relabel.temperature must be in [0, 2]; got {self.temperature!r}")
        if not 0 <= self.demonstration_share < 1:
            raise ConfigError(f"relabel.demonstration_share must be in [0, 1); got {self.demonstration_share!r}")
        if not self.learning_rate > 0:
            raise ConfigError(f"relabel.learning_rate must be > 0; got {self.learning_rate!r}")


COUNTS = ("episodes", "solved", "failed", "states", "ended", "incorrect", "unseen_ids", "duplicates", "kept")


def relabel_episode(pool: WorldPool, cfg: RunConfig, world: World, task: Task, actions: list[str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The relabelled conversations of one failed episode of the answerer (its ``actions``): one per
    state it reached (after each of its turns that did not end the episode), where the oracle's continuation is
    correct and uses no id before the agent saw it. ``masked_turns``: the answerer's own turns."""
    from osint_gym import chat
    from osint_gym.agents import oracle_continuation, unseen_ids
    from osint_selfplay.rollout import episode_env

    a = cfg.answerer
    counts = dict.fromkeys(COUNTS, 0)
    rows = []
    # every state after one of its turns; a student that never finished a turn (its first was cut by the
    # token budget) reached only the start, where the continuation is the demonstration of this task
    for k in range(1 if actions else 0, len(actions) + 1):
        counts["states"] += 1
        env = episode_env(pool, task, cast(int, world.seed), a.max_turns, a.max_parallel_calls, a.max_observation_chars,
                          observation_format=a.observation_format, bare=a.bare_prompt)
        record = oracle_continuation(env, actions[:k], action_format=a.action_format, options={"task_index": 0})
        if record is None:
            counts["ended"] += 1  # the answerer's k-th turn ended the episode: nothing to continue
            continue
        if not record.correct:
            counts["incorrect"] += 1
            continue
        if unseen_ids(record, from_turn=k):
            counts["unseen_ids"] += 1
            continue
        turns = record.turns
        messages = chat.episode_messages(record.first_observation, [t.action for t in turns], [t.observation for t in turns[:-1]],
                                         short=a.action_format == "short", system=not a.bare_prompt)
        rows.append({"messages": messages, "masked_turns": k})
    return rows, counts


def _shard(policy: Any, pool: WorldPool, cfg: RunConfig, items: list[tuple[int, dict[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One process's share: play its tasks (grouped by world, as osint-eval's runner takes them), then relabel the failures."""
    from osint_eval.runner import run_multi_turn
    from osint_gym.tasks import Task
    from osint_selfplay.evaluate import episode_kwargs

    counts = dict.fromkeys(COUNTS, 0)
    rows: list[dict[str, Any]] = []
    by_world: dict[int, list[Task]] = {}
    for _, item in items:
        by_world.setdefault(item["world_seed"], []).append(Task.from_dict(item["task"]))
    try:
        for world_seed, tasks in by_world.items():
            world = pool.world(world_seed)
            for task, result in zip(tasks, run_multi_turn(policy, world, tasks, **episode_kwargs(cfg.answerer, cfg.eval.batch_size))):
                counts["episodes"] += 1
                if result.correct:
                    counts["solved"] += 1
                    continue
                counts["failed"] += 1
                found, c = relabel_episode(pool, cfg, world, task, [t["action"] for t in result.transcript])
                rows += found
                for key, value in c.items():
                    counts[key] += value
    finally:
        policy.close()
    return rows, counts


def relabelled_rows(model_dir: str, pool: WorldPool, cfg: RunConfig, tasks: list[tuple[World, Task]], seed: int,
                    workers: int = 1) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(rows, counts): the answerer ``model_dir`` plays ``tasks`` and the oracle relabels every state
    of its failed episodes (`relabel_episode`); identical conversations are kept once. ``workers``
    processes share the tasks (worker k plays tasks k, k + workers, ...)."""
    from osint_eval.policies import HFPolicy

    policy = HFPolicy(model_dir, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens,
                      temperature=cfg.relabel.temperature, seed=seed)
    items = [(i, {"task": t.to_dict(), "world_seed": w.seed}) for i, (w, t) in enumerate(tasks)]
    if workers <= 1:
        results = [_shard(policy, pool, cfg, items)]
    else:
        from osint_eval.evaluate import _worker_pool

        with _worker_pool(workers) as ex:
            results = list(ex.map(_shard, [policy] * workers, [pool] * workers, [cfg] * workers,
                                  [items[k::workers] for k in range(workers)]))
        policy.close()
    counts = dict.fromkeys(COUNTS, 0)
    rows, seen = [], set()
    for found, c in results:
        for key, value in c.items():
            counts[key] += value
        for row in found:
            key = json.dumps(row, sort_keys=True)
            if key in seen:
                counts["duplicates"] += 1
                continue
            seen.add(key)
            rows.append(row)
    counts["kept"] = len(rows)
    return rows, counts


def mix(relabelled: list[dict[str, Any]], demonstrations: list[dict[str, Any]], share: float, seed: int) -> list[dict[str, Any]]:
    """The SFT conversations: every relabelled one, and demonstrations drawn at random (without
    replacement, as many as there are) to make up ``share`` of the whole, shuffled together."""
    rng = random.Random(f"{seed}:relabel_mix")
    want = round(len(relabelled) * share / (1 - share)) if share else 0
    rows = relabelled + rng.sample(demonstrations, min(want, len(demonstrations)))
    rng.shuffle(rows)
    return rows
