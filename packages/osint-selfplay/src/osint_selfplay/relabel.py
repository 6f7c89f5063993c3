"""Expert relabelling: the env's oracle as a teacher on the answerer's own states (DAgger).

Outcome-reward GRPO can at most close the gap between the answerer's greedy success and its pass@k;
OSINT-v0 has something better than a reward: an exact oracle that knows the hidden query. So the
answerer plays training tasks (greedy by default: the states evaluation visits), and at the states a
failed episode reached (``relabel.states``: all of them, those before its first failed turn, or only
its first divergence from the teacher) the demonstrator (`osint_gym.agents.oracle_continuation`: names
first, only ids the agent has seen) continues the episode within the steps left, treating what the
answerer already read as read. Each correct continuation is a training conversation: the answerer's own
turns as context (no loss) and the oracle's turns as targets (`masked_turns`), its made-up words renamed
as the demonstrations' are. Rows of earlier rounds are kept (the DAgger aggregate).

The packed SFT loop then continues the warm start's own demonstrations where it stopped, with
``relabel.share`` of every step's packed rows drawn from the relabelled conversations (cycled). In round 0
of a run whose packed warm start decays, it resumes the warm start where its decay began, as the
equal-compute control does (`osint_selfplay.controls`), its schedule stretched by ``relabel.sft_steps``:
the control and relabelling then differ only in the relabelled share of their rows and in the compute
relabelling spends playing, which the control spends training. In a shared model this restarts from the
warm start's weights, so it replaces the round's earlier generator step. Later rounds (or a warm start
without that state) continue the current model with a fresh optimizer at ``relabel.learning_rate``,
decaying to 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from osint_eval.evaluate import worker_pool
from osint_eval.policies import HFPolicy
from osint_eval.runner import run_multi_turn
from osint_gym.actions import parse_action
from osint_gym.agents import oracle_continuation, unseen_ids
from osint_gym.spec import RESET_OPTIONS, RESET_SEED
from osint_gym.tasks import Task
from osint_gym.world import World
from osint_selfplay import phases
from osint_selfplay.artifacts import atomic_write_jsonl, read_jsonl
from osint_selfplay.config import RunConfig
from osint_selfplay.data import relabel_tasks, rename_words, template_row
from osint_selfplay.errors import ConfigError, SelfPlayError
from osint_selfplay.precision import Precision
from osint_selfplay.results import PhaseResult, RelabelCounts, RelabelResult, SFTResult, figure_names
from osint_selfplay.sft import FRESH_WARMUP_STEPS
from osint_selfplay.state import Models, RunSummary
from osint_selfplay.streams import stream_seed
from osint_selfplay.worlds import WorldPool

P = TypeVar("P", bound=PhaseResult)

COUNTS = figure_names(RelabelCounts)


Rows = list[dict[str, Any]]


def relabel_episode(pool: WorldPool, cfg: RunConfig, world: World, task: Task,
                    actions: list[str], native: bool = False) -> tuple[Rows, dict[str, int]]:
    """The relabelled conversations of one failed episode of the answerer (its ``actions``), where the
    oracle's continuation is correct and uses no id before the agent saw it; ``masked_turns``: the
    answerer's own turns. ``relabel.states = "all"``: one per state it reached (after each of its turns
    that did not end the episode); ``"clean"``: those before its first turn with an error (a failed call, an
    action that does not parse), so no row teaches what to do after one (a tiny model taught to retry
    after a failed lookup retries the same miscopied call until its steps run out: benchmarks/RESULTS.md);
    ``"divergence"``: one, at the first state where its next turn is not the teacher's (the calls compared as
    a set), so the loss falls where it went wrong and no row starts after its mistake. ``native``: the rows in the
    format of a template that renders tools, with the env's schemas (`data.template_row`)."""
    spec = cfg.episode.spec()
    divergence = cfg.relabel.states == "divergence"
    counts: dict[str, Any] = dict.fromkeys(COUNTS, 0)
    rows = []
    # "all": every state after one of its turns; a student that never finished a turn (its first was cut by
    # the token budget) reached only the start, where the continuation is the demonstration of this task
    first = 0 if divergence or not actions else 1
    for k in range(first, len(actions) + 1):
        counts["states"] += 1
        env = spec.make_env(world, task)
        record = oracle_continuation(env, actions[:k], action_format=spec.action_format, seed=RESET_SEED,
                                     options=dict(RESET_OPTIONS))
        if record is None:
            counts["ended"] += 1  # the answerer's k-th turn ended the episode: nothing to continue
            continue
        if not record.correct:
            counts["incorrect"] += 1
            continue
        if cfg.relabel.states == "clean" and any(t.error for t in record.turns[:k]):
            counts["after_error"] += 1  # a state after one of its failed turns
            continue
        if divergence and k < len(actions) and same_calls(record.turns[k].action, actions[k]):
            counts["followed"] += 1  # the student took the teacher's turn here: its mistake comes later
            continue
        if unseen_ids(record, from_turn=k):
            counts["unseen_ids"] += 1
            continue
        messages = spec.conversation(record)  # plain: renamed as text, then in the template's format
        if cfg.warm_start.rename_words:  # as the demonstrations are: every made-up word is trained, not the worlds' own
            messages = rename_words(messages, f"rename-words:relabel:{cfg.seed}:{world.seed}:{task.task_id}:{k}")
        rows.append({**template_row(messages, env.schemas, native), "masked_turns": k})
        if divergence:
            break
    return rows, counts


def same_calls(a: str, b: str) -> bool:
    """Whether two actions make the same calls, in any order (a fan-out's order is the agent's choice)."""
    def key(action: str) -> list[str] | None:
        parsed = parse_action(action)
        return sorted(json.dumps([c.name, c.args], sort_keys=True) for c in parsed.calls) if parsed.ok else None

    mine = key(a)
    return mine is not None and mine == key(b)


def _shard(policy: Any, pool: WorldPool, cfg: RunConfig, items: list[dict[str, Any]]) -> tuple[Rows, dict[str, int]]:
    """One process's share: play its tasks (grouped by world, as osint-eval's runner takes them),
    then relabel the failures."""
    counts: dict[str, Any] = dict.fromkeys(COUNTS, 0)
    rows: Rows = []
    by_world: dict[int, list[Task]] = {}
    for item in items:
        by_world.setdefault(item["world_seed"], []).append(Task.from_dict(item["task"]))
    try:
        spec = cfg.episode.spec()
        for world_seed, tasks in by_world.items():
            world = pool.world(world_seed)
            results = run_multi_turn(policy, world, tasks, spec=spec, batch_size=cfg.play.batch_size)
            for task, result in zip(tasks, results):
                counts["episodes"] += 1
                if result.correct:
                    counts["solved"] += 1
                    continue
                counts["failed"] += 1
                if result.record is None:
                    raise SelfPlayError("osint-eval's multi-turn runner returned an episode without its env record")
                found, c = relabel_episode(pool, cfg, world, task, [t.action for t in result.record.turns],
                                           native=bool(getattr(policy, "native_tools", False)))
                rows += found
                for key, value in c.items():
                    counts[key] += value
    finally:
        policy.close()
    return rows, counts


def relabelled_rows(model_dir: str, pool: WorldPool, cfg: RunConfig, tasks: list[tuple[World, Task]], seed: int,
                    workers: int = 1) -> tuple[Rows, RelabelCounts]:
    """(rows, counts): the answerer ``model_dir`` plays ``tasks`` and the oracle relabels every state
    of its failed episodes (`relabel_episode`); identical conversations are kept once. ``workers``
    processes share the tasks (worker k plays tasks k, k + workers, ...)."""
    policy = HFPolicy(model_dir, batch_size=cfg.play.batch_size, max_new_tokens=cfg.play.max_new_tokens,
                      temperature=cfg.relabel.temperature, seed=seed, decoding=cfg.model.decoding)
    items = [{"task": t.to_dict(), "world_seed": w.seed} for w, t in tasks]
    if workers <= 1:
        results = [_shard(policy, pool, cfg, items)]
    else:
        with worker_pool(workers) as ex:
            results = list(ex.map(_shard, [policy] * workers, [pool] * workers, [cfg] * workers,
                                  [items[k::workers] for k in range(workers)]))
        policy.close()
    counts: dict[str, Any] = dict.fromkeys(COUNTS, 0)
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
    return rows, RelabelCounts(**counts)


def train(cfg: RunConfig, r: int, student: str, warm_dir: Path, warm: SFTResult | None, relabelled: Rows,
          out: Path, probe: Any = None, precision: Precision | None = None, **more: Any) -> RelabelResult:
    """Round ``r``'s SFT: the warm start's demonstrations (``warm_dir``) stream on where it stopped, with
    ``relabel.share`` of every step drawn from ``relabelled`` (all of it, without demonstrations). Round 0 of a
    warm start that saved its decay's start resumes there, its schedule stretched by ``relabel.sft_steps``
    (as the equal-compute control's is); later rounds continue ``student`` with a fresh optimizer.
    ``more``: the result's other fields (its counts and tasks); its steps and seconds are what
    `controls.budget_steps` counts as SFT (`RelabelResult.sft_compute`). ``precision``: the run's resolved one."""
    demos_file = warm_dir / "demonstrations.jsonl"
    demos = read_jsonl(demos_file) if demos_file.is_file() else []
    main, extra = (demos, relabelled) if demos else (relabelled, [])
    branch = warm_dir / phases.DECAY_START
    common: dict[str, Any] = {"extra_steps": cfg.relabel.sft_steps, "label": f"round {r} expert relabelling",
                              "extra": extra, "extra_share": cfg.relabel.share, "probe": probe,
                              "precision": precision}
    if r == 0 and branch.is_file():
        sft = phases.run_sft(str(warm_dir / "final_model"), main, cfg, out, "answerer", cfg.model.answerer,
                             branch=branch, warm_steps=int(warm.steps or 0) if warm else 0, resume_data=bool(extra),
                             **common)
    else:
        sft = phases.run_sft(student, main, cfg, out, "answerer", cfg.model.answerer,
                             settings={"learning_rate": cfg.relabel.learning_rate, "warmup_steps": FRESH_WARMUP_STEPS,
                                       "decay_fraction": 1.0}, **common)
    return sft.extended(RelabelResult, **more)


class RelabelHost(Protocol):
    """What a relabelling phase needs of the run (`osint_selfplay.loop.SelfPlayRun` is one): its config, worlds,
    summary so far, dev curve, folders, its way of running a phase, and of moving a role on to a trained model."""

    cfg: RunConfig
    pool: WorldPool
    summary: RunSummary
    probe: Any

    def run_dir(self, round_index: int | None, name: str) -> Path: ...

    def run_phase(self, round_index: int | None, name: str, fn: Callable[[], P], kind: type[P], *,
                  collective: bool = False) -> P: ...

    def advance(self, current: Models, role: str, out: Path) -> None: ...


def phase(run: RelabelHost, r: int, current: Models) -> RelabelResult:
    """Round ``r``'s expert relabelling: the answerer plays training tasks, the oracle continues its failed episodes
    from every state they reached, and SFT trains on those continuations (and on the rows of earlier rounds),
    ``relabel.share`` of every step, beside the warm start's demonstrations."""
    cfg = run.cfg
    out = run.run_dir(r, "relabel")
    warm_dir = run.run_dir(None, f"warm_start/{cfg.warm_start_role or 'answerer'}")
    sampled = run.run_dir(r, "sampled") / "tasks.jsonl"
    generated = [Task.from_dict(row) for row in read_jsonl(sampled)] if sampled.is_file() else []

    def fn() -> RelabelResult:
        tasks, mix = relabel_tasks(run.pool, cfg, generated, r)
        rows: list[dict[str, Any]] = []
        counts = RelabelCounts()
        if not cfg.dry_run:
            seed = stream_seed(cfg.seed, "relabel_generation", r)
            rows, counts = relabelled_rows(current.answerer, run.pool, cfg, tasks, seed, cfg.play.workers)
        atomic_write_jsonl(out / "relabelled.jsonl", rows)
        earlier = [row for q in range(r) for row in read_jsonl(run.run_dir(q, "relabel") / "relabelled.jsonl")]
        if not earlier + rows and not cfg.dry_run:
            raise ConfigError(f"round {r}: relabelling kept no conversation ({counts}); raise relabel.tasks")
        return train(cfg, r, current.answerer, warm_dir, run.summary.warm_start, earlier + rows, out, run.probe,
                     run.summary.precision, relabel=counts, tasks=mix, aggregated_rows=len(earlier),
                     relabelled_rows=len(earlier) + len(rows), start_model=current.answerer)

    result = run.run_phase(r, "relabel", fn, RelabelResult)
    run.advance(current, "answerer", out)
    return result
