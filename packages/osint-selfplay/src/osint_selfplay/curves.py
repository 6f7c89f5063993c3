"""Curves a person looks at: the answerer's greedy success on a fixed dev set during the on-policy phases
(``eval.curve_tasks`` tasks of ``eval.curve_split``, never the held-out test split), and the share of
its GRPO groups whose rewards had no variance, step by step. They land in the run's report as
`osint_eval.schema.Curve` s (a plot and a table each).

`DevProbe.measure` plays the dev tasks with the model as it is at that moment, in this process; the
seconds it spends are counted apart (``curve_seconds``), so the equal-compute control is not credited
with them (`osint_selfplay.controls.budget_steps`).
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from osint_eval.policies import HFPolicy
from osint_eval.runner import run_multi_turn
from osint_eval.schema import Curve, CurvePoint, Estimate
from osint_eval.stats import bootstrap_mean, proportion_interval
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.tasks import DIFFICULTIES
from osint_selfplay.errors import ConfigError
from osint_selfplay.results import Count, DevPoint, GRPOResult, TrainingResult
from osint_selfplay.state import RoundSummary

ANSWERER_PHASES = ("answerer_first", "relabel", "answerer")  # a round's answerer updates, in the order they run


def stratified(tasks: list[Any], n: int) -> list[Any]:
    """The first ``n`` tasks of a split taken in equal numbers of each difficulty it holds (in the split's
    order), so that a curve reads every difficulty, the hard ones included, at the same sample size."""
    levels = [d for d in DIFFICULTIES if any(t.difficulty == d for t in tasks)]
    each = -(-n // len(levels)) if levels else 0
    picked = [t for d in levels for t in [t for t in tasks if t.difficulty == d][:each]]
    return sorted(picked, key=tasks.index)[:n]


class DevProbe:
    """Greedy success on the run's dev curve tasks, measured on a model in memory or on disk."""

    def __init__(self, cfg: Any) -> None:
        ev = cfg.eval
        self.cfg = cfg
        self.every = ev.curve_every
        self.tasks = stratified(benchmark_tasks(ev.curve_split), ev.curve_tasks) if ev.curve_tasks else []
        self.world = benchmark_world(ev.curve_split) if self.tasks else None
        self.seconds = 0.0

    @property
    def enabled(self) -> bool:
        return bool(self.tasks) and not self.cfg.dry_run

    def measure_path(self, model_dir: str, label: str, step: int) -> DevPoint:
        """One point: the model saved in ``model_dir`` on the dev tasks, greedy."""
        cfg = self.cfg
        if self.world is None:
            raise ConfigError("eval.curve_tasks = 0: the run measures no dev curve")
        t0 = time.perf_counter()
        policy = HFPolicy(model_dir, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens,
                          temperature=0.0, decoding=cfg.model.decoding)
        try:
            results = run_multi_turn(
                policy, self.world, self.tasks, spec=cfg.episode.spec(), batch_size=cfg.eval.batch_size
            )
        finally:
            policy.close()
        seconds = time.perf_counter() - t0
        self.seconds += seconds
        by: dict[str, Count] = {}
        for r in results:
            cell = by.setdefault(r.difficulty, Count())
            cell.solved += int(r.correct)
            cell.n += 1
        return DevPoint(label=label, step=step, solved=sum(r.correct for r in results), n=len(results),
                        seconds=seconds, by_difficulty=by)

    def measure(self, model: Any, tokenizer: Any, label: str, step: int) -> DevPoint:
        """One point: ``model`` as it is now (in training), saved to a scratch folder and played from there."""
        t0 = time.perf_counter()
        training = model.training
        with tempfile.TemporaryDirectory(prefix="osint-curve-") as tmp:
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            point = self.measure_path(tmp, label, step)
        model.train(training)
        self.seconds += time.perf_counter() - t0 - point.seconds
        return point


def grpo_callback(probe: DevProbe, tokenizer: Any, label: str, points: list[DevPoint]) -> Any:
    """A TrainerCallback that measures ``probe`` every ``probe.every`` GRPO steps into ``points``."""
    from transformers import TrainerCallback

    class Probe(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            if probe.every and model is not None and state.global_step % probe.every == 0:
                points.append(probe.measure(model, tokenizer, label, state.global_step))

    return Probe()


def run_curves(rounds: list[RoundSummary], warm_point: DevPoint | None, split: str) -> list[Curve]:
    """The report's curves from the run summary: dev success over the on-policy optimizer steps (each
    phase's steps after the earlier phases'), and the zero-variance share of each GRPO step's groups."""
    points: list[CurvePoint] = []
    measured: list[tuple[int, DevPoint]] = [(0, warm_point)] if warm_point else []
    if warm_point:
        points.append(_point(0, warm_point.label, warm_point))
    zero: list[CurvePoint] = []
    offset = 0
    for rnd in rounds:
        phases: list[TrainingResult | None] = [getattr(rnd, key) for key in ANSWERER_PHASES]
        for phase in phases:
            if phase is None:
                continue
            for p in phase.dev_curve or []:
                points.append(_point(offset + p.step, p.label, p))
                measured.append((offset + p.step, p))
            steps = phase.zero_variance_steps or [] if isinstance(phase, GRPOResult) else []
            for entry in steps:
                n, k = entry.groups, round(entry.share * entry.groups)
                zero.append(CurvePoint(offset + entry.step, proportion_interval([1] * k + [0] * (n - k)), "GRPO"))
            offset += phase.steps or 0
    curves = []
    if points:
        n = points[0].value.n
        curves.append(
            Curve(
                f"greedy success on {n} {split} tasks during the on-policy phases",
                "on-policy optimizer step",
                "success (95% CI)",
                points,
            )
        )
    curves += _difficulty_curves(measured, split)
    if zero:
        curves.append(Curve("answerer GRPO groups with zero reward variance", "on-policy optimizer step",
                            "share of the step's groups (95% CI)", zero))
    return curves


def _difficulty_curves(measured: list[tuple[int, DevPoint]], split: str) -> list[Curve]:
    """One dev curve per difficulty (points measured before the curves were stratified have none)."""
    levels = [d for d in DIFFICULTIES if any(d in p.by_difficulty for _, p in measured)]
    curves = []
    for d in levels:
        pts = [_point(x, p.label, p.by_difficulty[d]) for x, p in measured if d in p.by_difficulty]
        curves.append(Curve(f"greedy success on {pts[0].value.n} {split} {d} tasks during the on-policy phases",
                            "on-policy optimizer step", "success (95% CI)", pts))
    return curves


def _point(x: int, label: str, p: DevPoint | Count) -> CurvePoint:
    value: Estimate = proportion_interval([1] * p.solved + [0] * (p.n - p.solved))
    return CurvePoint(x, value, label)


def selfplay_curves(rounds: list[RoundSummary]) -> list[Curve]:
    """The climb, per round and step: the generator's reward per GRPO step (its proposals' mean), the frontier
    share of the valid proposals of each round's sample (the learned generator's and, where measured, the
    scripted curriculum's), the mean hops of the tasks that trained each round's answerer, and with rungs the mean
    start depth of the generator's picks and of those tasks."""
    reward: list[CurvePoint] = []
    offset = 0
    for rnd in rounds:
        steps = (rnd.generator.generator_steps if rnd.generator else None) or []
        for s in steps:
            if s.rewards:
                reward.append(CurvePoint(offset + s.step, bootstrap_mean(s.rewards), f"round {rnd.round}"))
        offset += len(steps)
    share = {"learned generator": [], "scripted curriculum": []}  # type: dict[str, list[CurvePoint]]
    hops: list[CurvePoint] = []
    depth: dict[str, list[CurvePoint]] = {"the learned generator's valid picks": [],
                                          "the tasks that trained the answerer": []}
    for rnd in rounds:
        mixed = rnd.answerer.mix if rnd.answerer else None
        for name, counts in zip(depth, (rnd.sampled.depths if rnd.sampled else None, mixed.depths if mixed else None)):
            values = [int(d) for d, n in (counts or {}).items() for _ in range(n)]
            if values:
                depth[name].append(CurvePoint(rnd.round, bootstrap_mean(values), f"round {rnd.round}"))
        arms = (("learned generator", rnd.sampled), ("scripted curriculum", rnd.sampled and rnd.sampled.curriculum))
        for name, arm in arms:
            if arm and arm.valid:
                k = arm.in_frontier
                share[name].append(CurvePoint(rnd.round, proportion_interval([1] * k + [0] * (arm.valid - k)), name))
        mix = rnd.answerer.mix if rnd.answerer else None
        trained = [int(h) for h, n in (mix.hops if mix else {}).items() for _ in range(n)]
        if trained:
            hops.append(CurvePoint(rnd.round, bootstrap_mean(trained), f"round {rnd.round}"))
    curves = []
    if reward:
        curves.append(Curve("generator reward per GRPO step (its proposals' mean)", "generator GRPO step",
                            "reward (95% CI)", reward, rate=False))
    for name, pts in share.items():
        if pts:
            curves.append(Curve(f"frontier share of valid proposals, {name}", "round",
                                "share with an estimated solve rate in [0.2, 0.8] (95% CI)", pts))
    if hops:
        curves.append(Curve("mean hops of the tasks that trained the answerer", "round", "hops (95% CI)", hops,
                            rate=False))
    for name, pts in depth.items():  # the climb: depth falls while hops rise
        if pts:
            curves.append(Curve(f"mean start depth of {name} (given demonstrator steps)", "round",
                                "start depth (95% CI)", pts, rate=False))
    return curves
